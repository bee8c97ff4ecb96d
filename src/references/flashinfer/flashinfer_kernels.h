// The FlashInfer 0.6.14 GQA kernels PTXBench instantiates, behind a header free of FlashInfer and
// CUTLASS includes (only the .cu files in this folder see those; the MHA prefill, the MHA
// forward tasks' second reference, is in flashinfer_mha.h).
//
// FlashInfer splits every batch attention into plan() (host scheduling from the request
// lengths, written into an int workspace and copied to the GPU) and run() (kernel launches
// that read that schedule). We keep that split: plan_* runs in prepare_call(), outside any
// timed window; run_* only enqueues kernels.
//
// Instantiated configurations (exactly what the heldout-h100 GQA tasks need; bf16 in and out,
// int32 indices, head_dim 128 for Q/K and V, no sliding window, no logits soft cap, no RoPE):
//   paged decode    BatchDecodeWithPagedKVCacheDispatched<128, PosEncodingMode::kNone,
//                   DefaultAttention<false, false, false, false>>: the CUDA-core decode kernel
//                   that flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper runs by default
//                   (use_tensor_cores=False), NHD layout; FlashInfer has no SM90-specific
//                   decode kernel for this path.
//   paged prefill   BatchPrefillWithPagedKVCacheDispatched<128, 128, MaskMode::kCausal, false,
//                   SAME_SCHEDULE, StandardAttention> (the FA3 / SM90 backend, both schedules)
//   ragged prefill  BatchPrefillWithRaggedKVCacheDispatched<128, 128, MaskMode::kCausal, false,
//                   SAME_SCHEDULE, StandardAttention> (FA3 / SM90, both schedules)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "references/gqa_reference.h"

namespace ptxb::gpu::flashinfer_ref {

// FlashInfer's package version these kernels were compiled from (wheel flashinfer-python).
inline constexpr const char* kVersion = "0.6.14";

// The library part of every FlashInfer backend's describe() (GQA and the MHA prefill): name,
// version, where the kernels come from and how they were built.
inline Json library_description() {
  return Json{{"name", "FlashInfer"},
              {"version", kVersion},
              {"source", "flashinfer-python wheel headers, kernels instantiated by PTXBench"},
              {"build", "nvcc -gencode arch=compute_90a,code=sm_90a -O3 -use_fast_math"}};
}
inline constexpr std::int64_t kHeadDim = 128;

// Device workspaces and the pinned staging buffer plan() fills, sized like the defaults of
// FlashInfer's Python wrappers (128 MiB float, 8 MiB int). Owned by the backend object.
struct Workspace {
  void* float_buffer = nullptr;
  std::size_t float_bytes = 0;
  void* int_buffer = nullptr;
  void* pinned_int_buffer = nullptr;
  std::size_t int_bytes = 0;
};

// The chosen kernel configuration, as recorded in the trace (describe()).
struct DecodePlan {
  std::vector<std::int64_t> info;  // FlashInfer DecodePlanInfo::ToVector()
  bool split_kv = false;
  std::int64_t padded_batch_size = 0;
  std::int64_t group_size = 0;
  std::int64_t block_x = 0, block_y = 0, block_z = 0;  // bdx (lanes per row), bdy (group), bdz
  std::int64_t vec_size = 0;
  std::int64_t smem_stages = 0;
  std::int32_t* last_page_len = nullptr;  // device, batch entries of 1 (page_size 1)
};

struct PrefillPlan {
  std::vector<std::int64_t> info;  // FlashInfer PrefillPlanSM90Info::ToVector()
  bool same_schedule_for_all_heads = false;
  std::int64_t cta_q = 0, cta_kv = 0, stages = 0;
  bool tma_kv_load = false;
  std::int64_t total_work_tiles = 0;  // (qo tile, head) work items over all CTAs
  std::int64_t persistent_ctas = 0;   // one CTA per SM
};

Status plan_decode(const Workspace& workspace, const GqaCall& call, const GqaHostIndex& index,
                   DecodePlan& plan);
Status run_decode(const Workspace& workspace, const DecodePlan& plan, const GqaCall& call);

// Shared by both prefill layouts (PrefillSM90Plan); lives in the ragged TU.
Status plan_prefill(const Workspace& workspace, const GqaCall& call, const GqaHostIndex& index,
                    PrefillPlan& plan);
Status run_ragged_prefill(const Workspace& workspace, const PrefillPlan& plan, const GqaCall& call);
Status run_paged_prefill(const Workspace& workspace, const PrefillPlan& plan, const GqaCall& call);

}  // namespace ptxb::gpu::flashinfer_ref
