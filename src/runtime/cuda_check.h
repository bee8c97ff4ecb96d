// One checking macro per GPU API (STYLE.md "one error model per layer"): the error names the
// source position, the call as written and the API's own error string, e.g.
//   src/runtime/l2_flush.cc:41: cudaMalloc(&buffer_, bytes): cudaErrorMemoryAllocation: out of
//   memory
// Runner-side only (links the CUDA runtime and CUPTI).
#pragma once

#include <cuda_runtime_api.h>
#include <cupti.h>

#include <string>

#include "core/result.h"

namespace ptxb {

inline Error cuda_call_error(cudaError_t status, const char* call, const char* file, int line) {
  return make_error("cuda", "{}:{}: {}: {}: {}", file, line, call, cudaGetErrorName(status),
                    cudaGetErrorString(status));
}

inline Error cupti_call_error(CUptiResult status, const char* call, const char* file, int line) {
  const char* text = nullptr;
  if (cuptiGetResultString(status, &text) != CUPTI_SUCCESS || text == nullptr)
    text = "unknown CUPTI error";
  return make_error("cupti", "{}:{}: {}: {} ({})", file, line, call, text,
                    static_cast<int>(status));
}

}  // namespace ptxb

#define PTXB_CUDA_CHECK(call)                                                       \
  do {                                                                              \
    const cudaError_t ptxb_cuda_status_ = (call);                                   \
    if (ptxb_cuda_status_ != cudaSuccess) {                                         \
      return ::ptxb::cuda_call_error(ptxb_cuda_status_, #call, __FILE__, __LINE__); \
    }                                                                               \
  } while (0)

#define PTXB_CUPTI_CHECK(call)                                                        \
  do {                                                                                \
    const CUptiResult ptxb_cupti_status_ = (call);                                    \
    if (ptxb_cupti_status_ != CUPTI_SUCCESS) {                                        \
      return ::ptxb::cupti_call_error(ptxb_cupti_status_, #call, __FILE__, __LINE__); \
    }                                                                                 \
  } while (0)
