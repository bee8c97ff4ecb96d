// Reference backends with the solution ABI (design.md §3.2), so the runner calls a reference
// exactly like a candidate: same parameter list, same stream, same timer.
//
// Lifecycle (per backend object, per shape):
//   auto ref = make_reference("cudnn_sdpa_fwd", /*causal=*/true);   // no GPU work yet
//   ref->prepare(axes, stream);  // handles, plans, workspaces, algorithm choice; cached per shape;
//                                // may run and time the library: never inside a timed window
//   ref->invoke(params);         // or the typed run(...): only enqueues the library's kernels
//   ref->describe();             // library version, loaded library path, algorithm/engine
// invoke()/run() on a shape that was not prepared is an error (no hidden planning inside a
// timed call). Objects are not thread-safe; use one per thread.
//
// Parameter lists, in signature order (definition order of inputs, outputs, axes; design.md §4):
//   GEMM         A[M,K], B[N,K] bf16 -> C[M,N] bf16;            axes M, N, K
//   attention fwd Q, K, V [B,H,S,D] bf16 -> O bf16, LSE [B,H,S] fp32; axes B, H, D, S
//   attention bwd Q, K, V, O, dO bf16, LSE fp32 -> dQ, dK, dV bf16;  axes B, H, D, S
// then cudaStream_t. invoke(params) follows the candidate trampoline convention: params[i]
// points to the storage of the i-th parameter (so params[0] is a `const __nv_bfloat16**`, an
// axis entry is an `int64_t*`, and the last entry is a `cudaStream_t*`).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::gpu {

enum class ReferenceOp {
  kGemm,
  kAttentionForward,
  kAttentionBackward,
  kGqaPagedDecode,  // references/gqa_reference.h
  kGqaPagedPrefill,
  kGqaRaggedPrefill
};

struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  auto operator<=>(const GemmShape&) const = default;
};

// Q, K, V, O and their gradients are [batch, heads, seq_len, head_dim], contiguous.
struct AttentionShape {
  std::int64_t batch = 0, heads = 0, seq_len = 0, head_dim = 0;
  auto operator<=>(const AttentionShape&) const = default;
};

std::string to_string(const GemmShape& shape);       // "M=8192 N=7168 K=5120"
std::string to_string(const AttentionShape& shape);  // "B=4 H=48 S=4096 D=128"

class ReferenceBackend {
 public:
  virtual ~ReferenceBackend() = default;

  // Factory name ("cublaslt_gemm", ...), and whether the causal (top-left aligned,
  // lower-triangular) mask is applied.
  virtual std::string name() const = 0;
  virtual bool causal() const { return false; }
  virtual ReferenceOp op() const = 0;
  // Entries of invoke()'s params: inputs + outputs + axes + the stream.
  virtual int num_params() const = 0;
  virtual int num_axes() const = 0;

  // Builds and caches what the shape needs. `axes` in signature order (GEMM: M, N, K;
  // attention: B, H, D, S). Idempotent per shape; synchronizes `stream` when it did work.
  virtual Status prepare(std::span<const std::int64_t> axes, cudaStream_t stream) = 0;

  // prepare() for one call's full parameter list (invoke() convention), for backends whose plan
  // depends on input contents (GQA: the request boundaries). The default takes the axes and
  // the stream from `params` and calls prepare(). Cached, so a second call with the same key is
  // a lookup; a library reference's entry point calls it before every invoke().
  virtual Status prepare_call(void* const* params);

  // Candidate-trampoline-style call (see the file comment). Only enqueues work on the stream.
  virtual Status invoke(void* const* params) = 0;

  // {"backend", "causal", "library": {...}, "shapes": [{..., "algorithm"/"engine"}]}.
  virtual Json describe() const = 0;
};

// ---- typed bases: unpack params/axes once, so every backend shares the ABI plumbing ----

class GemmReference : public ReferenceBackend {
 public:
  ReferenceOp op() const final { return ReferenceOp::kGemm; }
  int num_params() const final { return 7; }
  int num_axes() const final { return 3; }
  Status prepare(std::span<const std::int64_t> axes, cudaStream_t stream) final;
  Status invoke(void* const* params) final;

  virtual Status prepare_shape(const GemmShape& shape, cudaStream_t stream) = 0;
  // C[M,N] = A[M,K] · B[N,K]ᵀ, row-major, bf16 in and out, fp32 accumulation.
  virtual Status run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                     std::int64_t M, std::int64_t N, std::int64_t K, cudaStream_t stream) = 0;
};

class AttentionForwardReference : public ReferenceBackend {
 public:
  ReferenceOp op() const final { return ReferenceOp::kAttentionForward; }
  int num_params() const final { return 10; }
  int num_axes() const final { return 4; }
  Status prepare(std::span<const std::int64_t> axes, cudaStream_t stream) final;
  Status invoke(void* const* params) final;

  virtual Status prepare_shape(const AttentionShape& shape, cudaStream_t stream) = 0;
  // O = softmax(Q·Kᵀ/√D [+ causal mask]) · V; LSE = natural-log logsumexp of each score row.
  virtual Status run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                     __nv_bfloat16* O, float* LSE, std::int64_t B, std::int64_t H, std::int64_t D,
                     std::int64_t S, cudaStream_t stream) = 0;
};

class AttentionBackwardReference : public ReferenceBackend {
 public:
  ReferenceOp op() const final { return ReferenceOp::kAttentionBackward; }
  int num_params() const final { return 14; }
  int num_axes() const final { return 4; }
  Status prepare(std::span<const std::int64_t> axes, cudaStream_t stream) final;
  Status invoke(void* const* params) final;

  virtual Status prepare_shape(const AttentionShape& shape, cudaStream_t stream) = 0;
  // Gradients of the forward above with respect to Q, K, V, given O, dO and LSE.
  virtual Status run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                     const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* LSE,
                     __nv_bfloat16* dQ, __nv_bfloat16* dK, __nv_bfloat16* dV, std::int64_t B,
                     std::int64_t H, std::int64_t D, std::int64_t S, cudaStream_t stream) = 0;
};

// All factory names, in a stable order (the FlashInfer ones whether built or not).
std::vector<std::string> reference_backend_names();

// Whether this build compiled the FlashInfer kernels (CMake option PTXB_WITH_FLASHINFER).
bool flashinfer_built();
// The error every FlashInfer backend name gives in a build without them: names the option.
Error flashinfer_not_built(std::string_view backend);

// Creates a backend by name: "cublaslt_gemm", "cudnn_sdpa_fwd", "cudnn_sdpa_bwd",
// "plain_cuda_gemm", "plain_cuda_attention_fwd", "plain_cuda_attention_bwd", and the GQA
// backends "flashinfer_gqa_<layout>" / "plain_cuda_gqa_<layout>" (layout paged_decode,
// paged_prefill, ragged_prefill; causal exactly for the prefills), and
// "flashinfer_mha_prefill" (the MHA forward tasks' optional second reference,
// references/flashinfer/flashinfer_mha.h). `causal` must be false for the GEMMs. Touches no
// GPU. The FlashInfer names fail with a clear message in a build configured without
// PTXB_WITH_FLASHINFER.
Result<std::unique_ptr<ReferenceBackend>> make_reference(std::string_view name, bool causal);

// Shape checks shared by backends: positive dimensions, and element counts that fit int64.
Status validate_shape(const GemmShape& shape);
Status validate_shape(const AttentionShape& shape);

}  // namespace ptxb::gpu
