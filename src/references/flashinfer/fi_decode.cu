// FlashInfer 0.6.14 batch decode over a paged KV cache, head_dim 128, bf16: our instantiation for
// gqa_paged_decode_h24_kv8_d128_ps1 (FlashInfer generates it from Jinja templates at JIT time).
//
// This is the kernel flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper runs by default
// (use_tensor_cores=False): CUDA cores, not wgmma. One CTA per (request or KV chunk, KV head);
// bdx = 128 / vec_size lanes split a row of head_dim (vec_size = max(16 B / 2 B, 128 / 32) = 8,
// so bdx = 16), bdy = group size (3 query heads share a KV head), bdz fills 128 threads; K/V
// rows are gathered through kv_indices with cp.async into a 2-stage shared-memory pipeline
// (compute capability >= 8). When the batch is too small to fill the GPU, the plan splits
// each request's KV into chunks and a merge kernel combines the partial states (split_kv).
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -O3 -use_fast_math, only with
// -DPTXB_WITH_FLASHINFER=ON.
#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>

#include "references/flashinfer/fi_common.cuh"
#include "references/flashinfer/flashinfer_kernels.h"

namespace ptxb::gpu::flashinfer_ref {
namespace {

using Params =
    flashinfer::BatchDecodeParams<__nv_bfloat16, __nv_bfloat16, __nv_bfloat16, std::int32_t>;
using Variant = flashinfer::DefaultAttention</*custom_mask=*/false, /*sliding_window=*/false,
                                             /*logits_soft_cap=*/false, /*alibi=*/false>;
constexpr auto kNoRope = flashinfer::PosEncodingMode::kNone;

}  // namespace

Status plan_decode(const Workspace& workspace, const GqaCall& call, const GqaHostIndex& index,
                   DecodePlan& plan) {
  const GqaShape& s = call.shape;
  if (s.head_dim != kHeadDim)
    return make_error("unsupported", "FlashInfer decode is instantiated for head_dim {} only",
                      kHeadDim);
  std::vector<std::int32_t> kv_indptr = index.kv_indptr;
  flashinfer::DecodePlanInfo info;
  const std::int64_t group = s.num_qo_heads / s.num_kv_heads;
  Status planned = fi_call("DecodePlan", [&]() -> cudaError_t {
    // The group size is a template parameter of the work estimation (it sizes the CTA);
    // DISPATCH_GQA_GROUP_SIZE covers 1, 2, 3, 4, 8 and throws for anything else.
    DISPATCH_GQA_GROUP_SIZE(group, GROUP_SIZE, {
      auto estimate =
          flashinfer::BatchDecodeWithPagedKVCacheWorkEstimationDispatched<GROUP_SIZE, kHeadDim,
                                                                          kNoRope, Variant, Params>;
      return flashinfer::DecodePlan<kHeadDim, kNoRope, Variant, Params>(
          workspace.float_buffer, workspace.float_bytes, workspace.int_buffer,
          workspace.pinned_int_buffer, workspace.int_bytes, info, kv_indptr.data(),
          static_cast<uint32_t>(s.batch), static_cast<uint32_t>(s.num_qo_heads),
          static_cast<uint32_t>(s.page_size), /*enable_cuda_graph=*/false, call.stream, estimate);
    });
    return cudaSuccess;
  });
  PTXB_RETURN_IF_ERROR(planned);
  PTXB_CUDA_CHECK(cudaStreamSynchronize(call.stream));  // the pinned buffer is reused later
  plan.info = info.ToVector();
  plan.split_kv = info.split_kv;
  plan.padded_batch_size = info.padded_batch_size;
  // The CTA shape BatchDecodeWithPagedKVCacheDispatched derives for bf16, head_dim 128.
  plan.vec_size = std::max<std::int64_t>(16 / 2, kHeadDim / 32);
  plan.block_x = kHeadDim / plan.vec_size;
  plan.block_y = group;
  plan.block_z = std::max<std::int64_t>(128, plan.block_x * group) / (plan.block_x * group);
  plan.group_size = group;
  plan.smem_stages = 2;  // DISPATCH_COMPUTE_CAP_DECODE_NUM_STAGES_SMEM on sm_90
  // paged_kv_t needs each request's last-page fill; with page_size 1 every page is full.
  if (plan.last_page_len == nullptr) {
    std::vector<std::int32_t> ones(static_cast<std::size_t>(s.batch),
                                   static_cast<std::int32_t>(s.page_size));
    PTXB_CUDA_CHECK(cudaMalloc(&plan.last_page_len, ones.size() * sizeof(std::int32_t)));
    // On the call's stream, like all of the plan's work (the runner attributes work by stream).
    PTXB_CUDA_CHECK(cudaMemcpyAsync(plan.last_page_len, ones.data(),
                                    ones.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                                    call.stream));
    PTXB_CUDA_CHECK(cudaStreamSynchronize(call.stream));  // `ones` is a local
  }
  return ok_status();
}

Status run_decode(const Workspace& workspace, const DecodePlan& plan, const GqaCall& call) {
  const GqaShape& s = call.shape;
  flashinfer::paged_kv_t<__nv_bfloat16, std::int32_t> paged_kv(
      static_cast<uint32_t>(s.num_kv_heads), static_cast<uint32_t>(s.page_size), kHeadDim,
      static_cast<uint32_t>(s.batch), flashinfer::QKVLayout::kNHD, fi_cast<__nv_bfloat16>(call.k),
      fi_cast<__nv_bfloat16>(call.v), fi_cast<std::int32_t>(call.kv_indices),
      fi_cast<std::int32_t>(call.kv_indptr), plan.last_page_len);
  Params p;
  p.q = fi_cast<__nv_bfloat16>(call.q);
  p.paged_kv = paged_kv;
  p.o = call.output;
  p.lse = call.lse;
  p.num_qo_heads = static_cast<uint32_t>(s.num_qo_heads);
  p.q_stride_n = static_cast<std::int32_t>(s.num_qo_heads * kHeadDim);
  p.q_stride_h = kHeadDim;
  p.window_left = -1;
  p.sm_scale = call.sm_scale;
  p.rope_rcp_scale = 1.0f;  // unused without RoPE; FlashInfer's defaults (scale 1, theta 1e4)
  p.rope_rcp_theta = 1e-4f;
  // Schedule arrays (DecodePlanInfo order: padded_batch_size, v_offset, s_offset,
  // request_indices, kv_tile_indices, o_indptr, block_valid_mask, kv_chunk_size_ptr, ...).
  const auto& info = plan.info;
  p.request_indices = at_offset<std::int32_t>(workspace.int_buffer, info[3]);
  p.kv_tile_indices = at_offset<std::int32_t>(workspace.int_buffer, info[4]);
  p.o_indptr = at_offset<std::int32_t>(workspace.int_buffer, info[5]);
  p.kv_chunk_size_ptr = at_offset<std::int32_t>(workspace.int_buffer, info[7]);
  p.padded_batch_size = static_cast<uint32_t>(plan.padded_batch_size);
  __nv_bfloat16* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (plan.split_kv) {
    tmp_v = at_offset<__nv_bfloat16>(workspace.float_buffer, info[1]);
    tmp_s = at_offset<float>(workspace.float_buffer, info[2]);
  }
  return fi_call("BatchDecodeWithPagedKVCacheDispatched", [&] {
    return flashinfer::BatchDecodeWithPagedKVCacheDispatched<kHeadDim, kNoRope, Variant>(
        p, tmp_v, tmp_s, /*enable_pdl=*/false, call.stream);
  });
}

}  // namespace ptxb::gpu::flashinfer_ref
