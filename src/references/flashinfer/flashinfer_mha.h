// FlashInfer 0.6.14 as an MHA forward reference ("flashinfer_mha_prefill"): the optional second
// reference of the mha_with_lse_* tasks (`ptxbench eval --also-reference flashinfer`,
// docs/references.md "FlashInfer MHA prefill"). Their primary reference stays cuDNN SDPA.
//
// Kernel: FlashInfer's SM90 (FA3) single-request prefill, SinglePrefillWithKVCacheDispatched,
// the kernel flashinfer.single_prefill_with_kv_cache runs on Hopper (backend "fa3"). The task's
// tensors are [B,H,S,D] contiguous; one launch covers the whole batch by folding (b, h) into
// FlashInfer's head index: head bh = b·H + h starts at bh·S·D, a row s at s·D, exactly
// FlashInfer's HND layout with stride_h = S·D and stride_n = D. Heads are independent in MHA, so
// this is the same computation; the grid is (⌈S / CTA_Q⌉, B·H) CTAs of FlashInfer's
// SingleTileScheduler.
//
// LSE: FlashInfer writes log2 Σ exp(s) (base 2, OnlineSoftmax::finalize in
// hopper/attention_updater.cuh) as [S, B·H] (get_lse_gmem_layout: head fastest). The task wants
// ln Σ exp(s) as [B,H,S]. FlashInfer writes into a scratch buffer of this backend (allocated in
// prepare()); a small transpose kernel in the same call then writes LSE[bh, s] = ln 2 ·
// scratch[s, bh]. That kernel is part of the timed call: it is the work of producing the task's
// output from FlashInfer's, about 6 MB of traffic at B=4, H=48, S=4096 (a few µs).
//
// Head dims: FlashInfer's SM90 prefill has kernels for 64, 128 and 256 (static_assert in
// hopper/prefill_sm90.cuh); PTXBench instantiates 64 and 128 (the task suite's). Head dim 96
// (mha_with_lse_d96*) has no SM90 kernel: prepare() fails with code "unsupported" and a message
// that names the backend and the head dims it has, never a silent fallback.
#pragma once

#include <cstdint>
#include <map>

#include "cuda/device_buffer.h"
#include "references/reference.h"

namespace ptxb::gpu {
namespace flashinfer_ref {

// The head dims this build instantiates (flashinfer_mha_supported() is the check).
inline constexpr std::int64_t kMhaHeadDims[] = {64, 128};

// FlashInfer's tile choice for a head dim and mask (getCTATileSize in hopper/prefill_sm90.cuh;
// 2 stages, TMA K/V loads, one producer and two consumer warpgroups for every configuration).
struct MhaPrefillConfig {
  std::int64_t cta_q = 0, cta_kv = 0, stages = 2;
};
MhaPrefillConfig mha_prefill_config(std::int64_t head_dim, bool causal);

bool flashinfer_mha_supported(std::int64_t head_dim);

// One call, as the .cu sees it (no FlashInfer types here).
struct MhaPrefillCall {
  const __nv_bfloat16* q = nullptr;
  const __nv_bfloat16* k = nullptr;
  const __nv_bfloat16* v = nullptr;
  __nv_bfloat16* o = nullptr;
  float* lse = nullptr;          // the task's [B,H,S], natural log
  float* lse_scratch = nullptr;  // FlashInfer's [S, B·H], base 2
  AttentionShape shape;
  bool causal = false;
  cudaStream_t stream = nullptr;
};

// Enqueues FlashInfer's kernel and the LSE transpose; fails "unsupported" for a head dim
// without a kernel (checked again here, so no path launches an uninstantiated template).
Status run_mha_prefill(const MhaPrefillCall& call);

}  // namespace flashinfer_ref

class FlashInferMhaPrefill final : public AttentionForwardReference {
 public:
  explicit FlashInferMhaPrefill(bool causal) : causal_(causal) {}
  std::string name() const override { return "flashinfer_mha_prefill"; }
  bool causal() const override { return causal_; }
  // Checks the head dim and allocates the LSE scratch (once per shape): nothing of that is left
  // for run().
  Status prepare_shape(const AttentionShape& shape, cudaStream_t stream) override;
  Status run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
             __nv_bfloat16* O, float* LSE, std::int64_t B, std::int64_t H, std::int64_t D,
             std::int64_t S, cudaStream_t stream) override;
  // Version, kernel, tiles, grid and the LSE handling per prepared shape.
  Json describe() const override;

 private:
  bool causal_;
  std::map<AttentionShape, DeviceBuffer> lse_scratch_;
};

}  // namespace ptxb::gpu
