// The plain CUDA references (plain_kernels.h) behind the ReferenceBackend interface, with the
// task ABI's bf16 outputs. They need no plans; prepare() only validates the shape and records
// it, so the "prepared before run" contract is the same as for the library backends.
#pragma once

#include <set>

#include "references/reference.h"

namespace ptxb::gpu {

class PlainGemm final : public GemmReference {
 public:
  std::string name() const override { return "plain_cuda_gemm"; }
  Status prepare_shape(const GemmShape& shape, cudaStream_t stream) override;
  Status run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, std::int64_t M,
             std::int64_t N, std::int64_t K, cudaStream_t stream) override;
  Json describe() const override;

 private:
  std::set<GemmShape> prepared_;
};

class PlainAttentionForward final : public AttentionForwardReference {
 public:
  explicit PlainAttentionForward(bool causal) : causal_(causal) {}
  std::string name() const override { return "plain_cuda_attention_fwd"; }
  bool causal() const override { return causal_; }
  Status prepare_shape(const AttentionShape& shape, cudaStream_t stream) override;
  Status run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
             __nv_bfloat16* O, float* LSE, std::int64_t B, std::int64_t H, std::int64_t D,
             std::int64_t S, cudaStream_t stream) override;
  Json describe() const override;

 private:
  bool causal_;
  std::set<AttentionShape> prepared_;
};

class PlainAttentionBackward final : public AttentionBackwardReference {
 public:
  explicit PlainAttentionBackward(bool causal) : causal_(causal) {}
  std::string name() const override { return "plain_cuda_attention_bwd"; }
  bool causal() const override { return causal_; }
  Status prepare_shape(const AttentionShape& shape, cudaStream_t stream) override;
  Status run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
             const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* LSE, __nv_bfloat16* dQ,
             __nv_bfloat16* dK, __nv_bfloat16* dV, std::int64_t B, std::int64_t H, std::int64_t D,
             std::int64_t S, cudaStream_t stream) override;
  Json describe() const override;

 private:
  bool causal_;
  std::set<AttentionShape> prepared_;
};

}  // namespace ptxb::gpu
