// Glue shared by the FlashInfer translation units: FlashInfer's error model (cudaError_t
// returns, plus flashinfer::Error exceptions from its planners) turned into ours, and the SM90
// schedule pointers of a plan.
#pragma once

#include <cuda_runtime_api.h>

#include <exception>
#include <string>
#include <type_traits>
#include <vector>

#include <flashinfer/exception.h>

#include "core/result.h"
#include "cuda/cuda_check.h"

namespace ptxb::gpu::flashinfer_ref {

// Calls a FlashInfer entry point that returns cudaError_t and may throw; nothing escapes into
// the runner (a throw through the candidate ABI would abort it with no message).
template <typename Fn>
Status fi_call(const char* what, Fn&& fn) {
  try {
    const cudaError_t status = fn();
    if (status != cudaSuccess)
      return make_error("cuda", "FlashInfer {}: {} ({})", what, cudaGetErrorString(status),
                        cudaGetErrorName(status));
  } catch (const std::exception& e) {
    return make_error("flashinfer", "FlashInfer {}: {}", what, e.what());
  }
  return ok_status();
}

// The ABI's const __nv_bfloat16* as the element type FlashInfer's params hold (cutlass
// bfloat16_t in the SM90 kernels, __nv_bfloat16 in decode: the same 16 bits). FlashInfer's
// params are non-const but its kernels only write o/lse.
template <typename To, typename From>
To* fi_cast(const From* pointer) {
  static_assert(sizeof(To) == sizeof(From), "element types must have the same width");
  return reinterpret_cast<To*>(const_cast<From*>(pointer));
}

template <typename T>
T* at_offset(void* base, std::int64_t offset) {
  return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
}

// The SM90 schedule arrays the plan wrote into the int workspace (PrefillPlanSM90Info order:
// qo_tile_indices, qo_indptr, kv_indptr, qo_len, kv_len, head_indices, work_indptr,
// batch_indices, same_schedule_for_all_heads).
template <typename Params>
void set_sm90_schedule(Params& p, void* int_buffer, const std::vector<std::int64_t>& info) {
  using Id = typename Params::IdType;
  p.qo_tile_indices = at_offset<Id>(int_buffer, info[0]);
  p.qo_indptr = at_offset<Id>(int_buffer, info[1]);
  p.kv_indptr = at_offset<Id>(int_buffer, info[2]);
  p.qo_lens = at_offset<Id>(int_buffer, info[3]);
  p.kv_lens = at_offset<Id>(int_buffer, info[4]);
  p.head_indices = at_offset<Id>(int_buffer, info[5]);
  p.work_indptr = at_offset<Id>(int_buffer, info[6]);
  p.batch_indices = at_offset<Id>(int_buffer, info[7]);
}

}  // namespace ptxb::gpu::flashinfer_ref
