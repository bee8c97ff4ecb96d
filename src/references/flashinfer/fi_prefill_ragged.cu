// FlashInfer 0.6.14 SM90 (FA3) batch prefill over ragged K/V, causal, head_dim 128, bf16, and the
// SM90 prefill planner shared with the paged layout. Our own instantiation of FlashInfer's
// templates for the one configuration gqa_ragged_prefill_causal_h32_kv4_d128 needs (FlashInfer
// itself generates these from Jinja templates at JIT time).
//
// Kernel (prefill_sm90.cuh, getCTATileSize<128, 128, causal>): CTA tile 128 queries x 128 keys,
// 2-stage TMA K/V pipeline, a producer warpgroup and two consumer warpgroups (wgmma), persistent
// CTAs (one per SM) walking the plan's work list. A work item is (request, query tile, qo head);
// KV head = qo head / group. Build: nvcc -gencode arch=compute_90a,code=sm_90a -O3
// -use_fast_math (FlashInfer's own JIT flags), only with -DPTXB_WITH_FLASHINFER=ON.
#include <flashinfer/attention/hopper/default_params.cuh>
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include <flashinfer/attention/hopper/variants.cuh>
#include <flashinfer/attention/scheduler.cuh>

#include "references/flashinfer/fi_common.cuh"
#include "references/flashinfer/flashinfer_kernels.h"

namespace flashinfer {

// Explicit instantiations: both schedules, because PrefillSM90Plan picks one at run time
// (same_schedule_for_all_heads when a head has more than 4096 work tiles).
using PtxbRaggedParams = BatchPrefillRaggedParams<cutlass::bfloat16_t, cutlass::bfloat16_t,
                                                  cutlass::bfloat16_t, int32_t>;
template cudaError_t BatchPrefillWithRaggedKVCacheDispatched<
    128, 128, MaskMode::kCausal, false, true, DefaultAttention<false>, PtxbRaggedParams>(
    PtxbRaggedParams&, bool, cudaStream_t);
template cudaError_t BatchPrefillWithRaggedKVCacheDispatched<
    128, 128, MaskMode::kCausal, false, false, DefaultAttention<false>, PtxbRaggedParams>(
    PtxbRaggedParams&, bool, cudaStream_t);

}  // namespace flashinfer

namespace ptxb::gpu::flashinfer_ref {

Status plan_prefill(const Workspace& workspace, const GqaCall& call, const GqaHostIndex& index,
                    PrefillPlan& plan) {
  const GqaShape& s = call.shape;
  if (s.head_dim != kHeadDim)
    return make_error("unsupported", "FlashInfer prefill is instantiated for head_dim {} only",
                      kHeadDim);
  // kv_len per request in keys; with page_size 1 a page is a key (paged and ragged alike).
  std::vector<std::int32_t> kv_len(static_cast<std::size_t>(s.batch));
  for (std::int64_t b = 0; b < s.batch; ++b)
    kv_len[b] =
        (index.kv_indptr[b + 1] - index.kv_indptr[b]) * static_cast<std::int32_t>(s.page_size);
  std::vector<std::int32_t> qo_indptr = index.qo_indptr, kv_indptr = index.kv_indptr;
  flashinfer::PrefillPlanSM90Info info;
  Status planned = fi_call("PrefillSM90Plan", [&] {
    return flashinfer::PrefillSM90Plan<std::int32_t>(
        workspace.float_buffer, workspace.float_bytes, workspace.int_buffer,
        workspace.pinned_int_buffer, workspace.int_bytes, info, qo_indptr.data(), kv_indptr.data(),
        kv_len.data(), static_cast<uint32_t>(s.total_q), static_cast<uint32_t>(s.batch),
        static_cast<uint32_t>(s.num_qo_heads), static_cast<uint32_t>(s.num_kv_heads), kHeadDim,
        kHeadDim, static_cast<uint32_t>(s.page_size), /*causal=*/true, /*enable_cuda_graph=*/false,
        /*sizeof_dtype_o=*/2, call.stream);
  });
  PTXB_RETURN_IF_ERROR(planned);
  PTXB_CUDA_CHECK(cudaStreamSynchronize(call.stream));  // the pinned buffer is reused later
  plan.info = info.ToVector();
  plan.same_schedule_for_all_heads = info.same_schedule_for_all_heads;
  plan.stages = 2;
  plan.cta_q = 128;
  // Ragged causal: getCTATileSize<128,128,true> = (128, 128) with TMA K/V loads. Paged: CTA_KV
  // 96 with cp.async gathers (a page can sit anywhere, so TMA boxes cannot load it).
  const bool paged = s.layout == GqaLayout::kPagedPrefill;
  plan.cta_kv = paged ? 96 : 128;
  plan.tma_kv_load = !paged;
  int device = 0, sms = 0;
  PTXB_CUDA_CHECK(cudaGetDevice(&device));
  PTXB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  plan.persistent_ctas = sms;
  const auto* work_indptr =
      static_cast<const std::int32_t*>(workspace.pinned_int_buffer) +
      info.work_indptr_offset / static_cast<std::int64_t>(sizeof(std::int32_t));
  plan.total_work_tiles = work_indptr[sms];
  return ok_status();
}

Status run_ragged_prefill(const Workspace& workspace, const PrefillPlan& plan,
                          const GqaCall& call) {
  const GqaShape& s = call.shape;
  flashinfer::PtxbRaggedParams p{};
  p.q_ptr = fi_cast<cutlass::bfloat16_t>(call.q);
  p.k_ptr = fi_cast<cutlass::bfloat16_t>(call.k);
  p.v_ptr = fi_cast<cutlass::bfloat16_t>(call.v);
  p.o_ptr = fi_cast<cutlass::bfloat16_t>(call.output);
  p.lse_ptr = call.lse;
  // Row-major [rows, heads, 128]: NHD, the layout the task definitions use.
  p.q_stride_n = p.o_stride_n = s.num_qo_heads * kHeadDim;
  p.k_stride_n = p.v_stride_n = s.num_kv_heads * kHeadDim;
  p.q_stride_h = p.k_stride_h = p.v_stride_h = p.o_stride_h = kHeadDim;
  p.nnz_qo = s.total_q;
  p.nnz_kv = s.kv_rows;
  p.num_qo_heads = static_cast<int>(s.num_qo_heads);
  p.num_kv_heads = static_cast<int>(s.num_kv_heads);
  p.group_size = p.num_qo_heads / p.num_kv_heads;
  p.window_left = -1;
  p.causal = true;
  p.additional_params.sm_scale = call.sm_scale;
  p.additional_params.logits_soft_cap = 0.0f;
  set_sm90_schedule(p, workspace.int_buffer, plan.info);
  return fi_call("BatchPrefillWithRaggedKVCacheDispatched", [&] {
    return plan.same_schedule_for_all_heads
               ? flashinfer::BatchPrefillWithRaggedKVCacheDispatched<
                     128, 128, flashinfer::MaskMode::kCausal, false, true,
                     flashinfer::DefaultAttention<false>>(p, false, call.stream)
               : flashinfer::BatchPrefillWithRaggedKVCacheDispatched<
                     128, 128, flashinfer::MaskMode::kCausal, false, false,
                     flashinfer::DefaultAttention<false>>(p, false, call.stream);
  });
}

}  // namespace ptxb::gpu::flashinfer_ref
