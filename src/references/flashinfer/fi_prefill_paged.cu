// FlashInfer 0.6.14 SM90 (FA3) batch prefill over a paged KV cache, causal, head_dim 128, bf16:
// our instantiation for gqa_paged_prefill_causal_h24_kv8_d128_ps1 (FlashInfer generates these
// from Jinja templates at JIT time). Planned by plan_prefill() in fi_prefill_ragged.cu.
//
// Kernel (prefill_sm90.cuh, paged head_dim 128): CTA tile 128 queries x 96 keys, 2 stages; the
// producer warpgroup gathers K/V rows through kv_indices with cp.async (4 producer warps; a page
// can sit anywhere, so a TMA box cannot load it), two consumer warpgroups run wgmma. Persistent
// CTAs walk the plan's (request, query tile, qo head) work list. Build: nvcc -gencode
// arch=compute_90a,code=sm_90a -O3 -use_fast_math, only with -DPTXB_WITH_FLASHINFER=ON.
#include <flashinfer/attention/hopper/default_params.cuh>
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include <flashinfer/attention/hopper/variants.cuh>

#include "references/flashinfer/fi_common.cuh"
#include "references/flashinfer/flashinfer_kernels.h"

namespace flashinfer {

using PtxbPagedParams =
    BatchPrefillPagedParams<cutlass::bfloat16_t, cutlass::bfloat16_t, cutlass::bfloat16_t, int32_t>;
template cudaError_t BatchPrefillWithPagedKVCacheDispatched<
    128, 128, MaskMode::kCausal, false, true, DefaultAttention<false>, PtxbPagedParams>(
    PtxbPagedParams&, bool, cudaStream_t);
template cudaError_t BatchPrefillWithPagedKVCacheDispatched<
    128, 128, MaskMode::kCausal, false, false, DefaultAttention<false>, PtxbPagedParams>(
    PtxbPagedParams&, bool, cudaStream_t);

}  // namespace flashinfer

namespace ptxb::gpu::flashinfer_ref {

Status run_paged_prefill(const Workspace& workspace, const PrefillPlan& plan, const GqaCall& call) {
  const GqaShape& s = call.shape;
  flashinfer::PtxbPagedParams p{};
  p.q_ptr = fi_cast<cutlass::bfloat16_t>(call.q);
  p.k_ptr = fi_cast<cutlass::bfloat16_t>(call.k);
  p.v_ptr = fi_cast<cutlass::bfloat16_t>(call.v);
  p.o_ptr = fi_cast<cutlass::bfloat16_t>(call.output);
  p.lse_ptr = call.lse;
  p.kv_indices = fi_cast<std::int32_t>(call.kv_indices);
  // q/output [total_q, Hq, 128]; k_cache/v_cache [pages, page_size, Hkv, 128] (NHD pages).
  p.q_stride_n = p.o_stride_n = s.num_qo_heads * kHeadDim;
  p.q_stride_h = p.o_stride_h = kHeadDim;
  p.k_stride_n = p.v_stride_n = s.num_kv_heads * kHeadDim;
  p.k_stride_h = p.v_stride_h = kHeadDim;
  p.k_page_stride = p.v_page_stride = s.page_size * s.num_kv_heads * kHeadDim;
  p.nnz_qo = s.total_q;
  p.num_qo_heads = static_cast<int>(s.num_qo_heads);
  p.num_kv_heads = static_cast<int>(s.num_kv_heads);
  p.group_size = p.num_qo_heads / p.num_kv_heads;
  p.page_size = static_cast<int>(s.page_size);
  p.window_left = -1;
  p.causal = true;
  p.additional_params.sm_scale = call.sm_scale;
  p.additional_params.logits_soft_cap = 0.0f;
  set_sm90_schedule(p, workspace.int_buffer, plan.info);
  return fi_call("BatchPrefillWithPagedKVCacheDispatched", [&] {
    return plan.same_schedule_for_all_heads
               ? flashinfer::BatchPrefillWithPagedKVCacheDispatched<
                     128, 128, flashinfer::MaskMode::kCausal, false, true,
                     flashinfer::DefaultAttention<false>>(p, false, call.stream)
               : flashinfer::BatchPrefillWithPagedKVCacheDispatched<
                     128, 128, flashinfer::MaskMode::kCausal, false, false,
                     flashinfer::DefaultAttention<false>>(p, false, call.stream);
  });
}

}  // namespace ptxb::gpu::flashinfer_ref
