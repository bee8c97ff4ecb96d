// ABI plumbing shared by the reference backends, and the factory by name.
#include "references/reference.h"

#include <limits>

#include <fmt/format.h>

#include "references/cublaslt_gemm.h"
#include "references/cudnn_sdpa.h"
#include "references/gqa_backends.h"
#include "references/plain_reference.h"
#ifdef PTXB_WITH_FLASHINFER
#include "references/flashinfer/flashinfer_mha.h"
#endif

namespace ptxb::gpu {
namespace {

// params[i] points to the storage of parameter i (candidate trampoline convention).
template <typename T>
T param(void* const* params, int index) {
  return *static_cast<const T*>(params[index]);
}

using Bf16 = __nv_bfloat16;

Status check_axes(std::span<const std::int64_t> axes, int expected, std::string_view what) {
  if (static_cast<int>(axes.size()) != expected) {
    return make_error("invalid_argument", "{}: expected {} axes, got {}", what, expected,
                      axes.size());
  }
  return ok_status();
}

// Product of dimensions fits int64 (so every element index does too).
bool product_fits(std::initializer_list<std::int64_t> dims) {
  std::int64_t product = 1;
  for (std::int64_t d : dims) {
    if (d <= 0 || product > std::numeric_limits<std::int64_t>::max() / d) return false;
    product *= d;
  }
  return true;
}

}  // namespace

std::string to_string(const GemmShape& s) {
  return fmt::format("M={} N={} K={}", s.m, s.n, s.k);
}

std::string to_string(const AttentionShape& s) {
  return fmt::format("B={} H={} S={} D={}", s.batch, s.heads, s.seq_len, s.head_dim);
}

Status validate_shape(const GemmShape& s) {
  if (s.m <= 0 || s.n <= 0 || s.k <= 0) {
    return make_error("invalid_argument", "GEMM shape {}: dimensions must be positive",
                      to_string(s));
  }
  if (!product_fits({s.m, s.k}) || !product_fits({s.n, s.k}) || !product_fits({s.m, s.n})) {
    return make_error("invalid_argument", "GEMM shape {}: element count overflows int64",
                      to_string(s));
  }
  return ok_status();
}

Status validate_shape(const AttentionShape& s) {
  if (s.batch <= 0 || s.heads <= 0 || s.seq_len <= 0 || s.head_dim <= 0) {
    return make_error("invalid_argument", "attention shape {}: dimensions must be positive",
                      to_string(s));
  }
  if (!product_fits({s.batch, s.heads, s.seq_len, s.head_dim}) ||
      !product_fits({s.batch, s.heads, s.seq_len, s.seq_len})) {
    return make_error("invalid_argument", "attention shape {}: element count overflows int64",
                      to_string(s));
  }
  return ok_status();
}

Status ReferenceBackend::prepare_call(void* const* params) {
  // Trampoline convention: the axes are the num_axes() entries before the trailing stream.
  const int first_axis = num_params() - num_axes() - 1;
  std::vector<std::int64_t> axes;
  for (int i = 0; i < num_axes(); ++i) axes.push_back(param<std::int64_t>(params, first_axis + i));
  return prepare(axes, param<cudaStream_t>(params, num_params() - 1));
}

// ---- GEMM: (A, B, C, M, N, K, stream) ----

Status GemmReference::prepare(std::span<const std::int64_t> axes, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(check_axes(axes, 3, name()));
  return prepare_shape(GemmShape{axes[0], axes[1], axes[2]}, stream);
}

Status GemmReference::invoke(void* const* params) {
  return run(param<const Bf16*>(params, 0), param<const Bf16*>(params, 1), param<Bf16*>(params, 2),
             param<std::int64_t>(params, 3), param<std::int64_t>(params, 4),
             param<std::int64_t>(params, 5), param<cudaStream_t>(params, 6));
}

// ---- attention forward: (Q, K, V, O, LSE, B, H, D, S, stream) ----

Status AttentionForwardReference::prepare(std::span<const std::int64_t> axes, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(check_axes(axes, 4, name()));
  // Signature order is B, H, D, S (design.md §4); AttentionShape is B, H, S, D.
  return prepare_shape(AttentionShape{axes[0], axes[1], axes[3], axes[2]}, stream);
}

Status AttentionForwardReference::invoke(void* const* params) {
  return run(param<const Bf16*>(params, 0), param<const Bf16*>(params, 1),
             param<const Bf16*>(params, 2), param<Bf16*>(params, 3), param<float*>(params, 4),
             param<std::int64_t>(params, 5), param<std::int64_t>(params, 6),
             param<std::int64_t>(params, 7), param<std::int64_t>(params, 8),
             param<cudaStream_t>(params, 9));
}

// ---- attention backward: (Q, K, V, O, dO, LSE, dQ, dK, dV, B, H, D, S, stream) ----

Status AttentionBackwardReference::prepare(std::span<const std::int64_t> axes,
                                           cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(check_axes(axes, 4, name()));
  return prepare_shape(AttentionShape{axes[0], axes[1], axes[3], axes[2]}, stream);
}

Status AttentionBackwardReference::invoke(void* const* params) {
  return run(param<const Bf16*>(params, 0), param<const Bf16*>(params, 1),
             param<const Bf16*>(params, 2), param<const Bf16*>(params, 3),
             param<const Bf16*>(params, 4), param<const float*>(params, 5), param<Bf16*>(params, 6),
             param<Bf16*>(params, 7), param<Bf16*>(params, 8), param<std::int64_t>(params, 9),
             param<std::int64_t>(params, 10), param<std::int64_t>(params, 11),
             param<std::int64_t>(params, 12), param<cudaStream_t>(params, 13));
}

// ---- factory ----

std::vector<std::string> reference_backend_names() {
  std::vector<std::string> names = {
      "cublaslt_gemm",         "cudnn_sdpa_fwd",           "cudnn_sdpa_bwd",
      "plain_cuda_gemm",       "plain_cuda_attention_fwd", "plain_cuda_attention_bwd",
      "flashinfer_mha_prefill"};
  for (const std::string& name : gqa_backend_names()) names.push_back(name);
  return names;
}

Result<std::unique_ptr<ReferenceBackend>> make_reference(std::string_view name, bool causal) {
  if (is_gqa_backend(name)) return make_gqa_reference(name, causal);
  std::unique_ptr<ReferenceBackend> backend;
  bool is_gemm = name == "cublaslt_gemm" || name == "plain_cuda_gemm";
  if (is_gemm && causal) {
    return make_error("invalid_argument", "reference backend {} has no causal variant", name);
  }
  if (name == "cublaslt_gemm") {
    backend = std::make_unique<CublasLtGemm>();
  } else if (name == "plain_cuda_gemm") {
    backend = std::make_unique<PlainGemm>();
  } else if (name == "cudnn_sdpa_fwd") {
    backend = std::make_unique<CudnnSdpaForward>(causal);
  } else if (name == "cudnn_sdpa_bwd") {
    backend = std::make_unique<CudnnSdpaBackward>(causal);
  } else if (name == "plain_cuda_attention_fwd") {
    backend = std::make_unique<PlainAttentionForward>(causal);
  } else if (name == "plain_cuda_attention_bwd") {
    backend = std::make_unique<PlainAttentionBackward>(causal);
  } else if (name == "flashinfer_mha_prefill") {
#ifdef PTXB_WITH_FLASHINFER
    backend = std::make_unique<FlashInferMhaPrefill>(causal);
#else
    return flashinfer_not_built(name);
#endif
  } else {
    std::string known;
    for (const std::string& n : reference_backend_names()) known += (known.empty() ? "" : ", ") + n;
    return make_error("invalid_argument", "unknown reference backend '{}' (known: {})", name,
                      known);
  }
  return backend;
}

}  // namespace ptxb::gpu
