// FlashInfer 0.6.14 SM90 (FA3) single-request prefill for the MHA forward tasks, bf16, head dims
// 64 and 128, no mask and causal; our own instantiation of FlashInfer's templates (FlashInfer
// generates these from Jinja templates at JIT time), plus the LSE transpose of flashinfer_mha.h.
//
// Kernel (prefill_sm90.cuh, SinglePrefillWithKVCacheKernelTraitsDispatched): CTA tile per
// getCTATileSize (D=128: 128 x 192, causal 128 x 128; D=64: 192 x 128), 2-stage TMA K/V
// pipeline, a producer warpgroup and two consumer warpgroups (wgmma), SingleTileScheduler (one
// CTA per (query tile, head), not persistent). The batch is folded into the head index
// (flashinfer_mha.h). Build: nvcc -gencode arch=compute_90a,code=sm_90a -O3 -use_fast_math
// (FlashInfer's own JIT flags), only with -DPTXB_WITH_FLASHINFER=ON.
#include <flashinfer/attention/hopper/default_params.cuh>
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include <flashinfer/attention/hopper/variants.cuh>

#include <cmath>
#include <limits>

#include "references/flashinfer/fi_common.cuh"
#include "references/flashinfer/flashinfer_mha.h"

namespace flashinfer {

using PtxbSingleParams =
    SinglePrefillParams<cutlass::bfloat16_t, cutlass::bfloat16_t, cutlass::bfloat16_t, int32_t>;

// Explicit instantiations: head dim (Q/K = V) x mask. No sliding window, no logits soft cap.
#define PTXB_FI_SINGLE_PREFILL(D, MASK)                                                \
  template cudaError_t SinglePrefillWithKVCacheDispatched<                             \
      D, D, MASK, false, DefaultAttention<false>, PtxbSingleParams>(PtxbSingleParams&, \
                                                                    cudaStream_t);
PTXB_FI_SINGLE_PREFILL(64, MaskMode::kNone)
PTXB_FI_SINGLE_PREFILL(64, MaskMode::kCausal)
PTXB_FI_SINGLE_PREFILL(128, MaskMode::kNone)
PTXB_FI_SINGLE_PREFILL(128, MaskMode::kCausal)
#undef PTXB_FI_SINGLE_PREFILL

}  // namespace flashinfer

namespace ptxb::gpu::flashinfer_ref {
namespace {

// 32 x 32 tiles through shared memory: reads of scratch[s, bh] and writes of lse[bh, s] both
// coalesced (a row of 32 consecutive floats per warp). +1 column against bank conflicts.
constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // 32 x 8 threads, 4 rows each

// lse[bh * S + s] = ln 2 * scratch[s * BH + bh]: FlashInfer's base-2 LSE, head fastest, into the
// task's natural-log LSE, sequence fastest.
__global__ void __launch_bounds__(kTile* kRowsPerPass)
    lse_log2_to_ln_transpose(const float* __restrict__ scratch, float* __restrict__ lse,
                             std::int64_t seq_len, std::int64_t heads) {
  __shared__ float tile[kTile][kTile + 1];
  const std::int64_t s0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const std::int64_t h0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  for (int r = threadIdx.y; r < kTile; r += kRowsPerPass) {
    const std::int64_t s = s0 + r, h = h0 + threadIdx.x;
    if (s < seq_len && h < heads) tile[r][threadIdx.x] = scratch[s * heads + h];
  }
  __syncthreads();
  // ln 2 in float: log2 Σ exp(x) · ln 2 = ln Σ exp(x); −inf (a row without keys) stays −inf.
  constexpr float kLn2 = 0.693147180559945309f;
  for (int r = threadIdx.y; r < kTile; r += kRowsPerPass) {
    const std::int64_t h = h0 + r, s = s0 + threadIdx.x;
    if (s < seq_len && h < heads) lse[h * seq_len + s] = tile[threadIdx.x][r] * kLn2;
  }
}

template <std::uint32_t kHeadDim, flashinfer::MaskMode kMask>
cudaError_t launch(flashinfer::PtxbSingleParams& p, cudaStream_t stream) {
  return flashinfer::SinglePrefillWithKVCacheDispatched<kHeadDim, kHeadDim, kMask, false,
                                                        flashinfer::DefaultAttention<false>>(
      p, stream);
}

}  // namespace

Status run_mha_prefill(const MhaPrefillCall& call) {
  const AttentionShape& s = call.shape;
  if (!flashinfer_mha_supported(s.head_dim))
    return make_error("unsupported",
                      "flashinfer_mha_prefill: FlashInfer has no SM90 prefill kernel "
                      "instantiated for head_dim {}",
                      s.head_dim);
  const std::int64_t heads = s.batch * s.heads;  // (b, h) folded into one head index
  if (heads > std::numeric_limits<int>::max() || s.seq_len > std::numeric_limits<int>::max())
    return make_error("invalid_argument",
                      "flashinfer_mha_prefill: {} exceeds FlashInfer's int lengths", to_string(s));
  flashinfer::PtxbSingleParams p{};
  p.q_ptr = fi_cast<cutlass::bfloat16_t>(call.q);
  p.k_ptr = fi_cast<cutlass::bfloat16_t>(call.k);
  p.v_ptr = fi_cast<cutlass::bfloat16_t>(call.v);
  p.o_ptr = fi_cast<cutlass::bfloat16_t>(call.o);
  p.lse_ptr = call.lse_scratch;
  // HND: head bh at bh·S·D, row s at s·D (the [B,H,S,D] bytes as B·H heads).
  p.q_stride_n = p.k_stride_n = p.v_stride_n = p.o_stride_n = s.head_dim;
  p.q_stride_h = p.k_stride_h = p.v_stride_h = p.o_stride_h = s.seq_len * s.head_dim;
  p.qo_len = p.kv_len = static_cast<int>(s.seq_len);
  p.num_qo_heads = p.num_kv_heads = static_cast<int>(heads);
  p.group_size = 1;
  p.window_left = -1;
  p.causal = call.causal;
  // 1/√D rounded once from double: the value the cuDNN and plain references use.
  p.additional_params.sm_scale =
      static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim)));
  p.additional_params.logits_soft_cap = 0.0f;
  p.additional_params.scale_q = p.additional_params.scale_k = p.additional_params.scale_v = nullptr;
  using flashinfer::MaskMode;
  PTXB_RETURN_IF_ERROR(fi_call("SinglePrefillWithKVCacheDispatched", [&] {
    if (s.head_dim == 64)
      return call.causal ? launch<64, MaskMode::kCausal>(p, call.stream)
                         : launch<64, MaskMode::kNone>(p, call.stream);
    return call.causal ? launch<128, MaskMode::kCausal>(p, call.stream)
                       : launch<128, MaskMode::kNone>(p, call.stream);
  }));
  const dim3 grid(static_cast<unsigned>((s.seq_len + kTile - 1) / kTile),
                  static_cast<unsigned>((heads + kTile - 1) / kTile));
  lse_log2_to_ln_transpose<<<grid, dim3(kTile, kRowsPerPass), 0, call.stream>>>(
      call.lse_scratch, call.lse, s.seq_len, heads);
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

}  // namespace ptxb::gpu::flashinfer_ref
