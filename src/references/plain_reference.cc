#include "references/plain_reference.h"

#include "core/version.h"
#include "references/plain_kernels.h"

namespace ptxb::gpu {
namespace {

Status not_prepared(const std::string& backend, const std::string& shape) {
  return make_error("not_prepared", "{}: shape {} was not prepared; call prepare() first", backend,
                    shape);
}

template <typename Shape>
Json describe_plain(const std::string& backend, bool causal, const std::set<Shape>& shapes,
                    const char* algorithm) {
  Json prepared = Json::array();
  for (const Shape& shape : shapes) prepared.push_back(to_string(shape));
  return Json{{"backend", backend},
              {"causal", causal},
              {"library", {{"name", "ptxbench plain CUDA"}, {"version", harness_version()}}},
              {"algorithm", algorithm},
              {"shapes", prepared}};
}

}  // namespace

Status PlainGemm::prepare_shape(const GemmShape& shape, cudaStream_t) {
  PTXB_RETURN_IF_ERROR(validate_shape(shape));
  prepared_.insert(shape);
  return ok_status();
}

Status PlainGemm::run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                      std::int64_t M, std::int64_t N, std::int64_t K, cudaStream_t stream) {
  GemmShape shape{M, N, K};
  if (!prepared_.contains(shape)) return not_prepared(name(), to_string(shape));
  return plain_gemm(A, B, C, DType::kBFloat16, M, N, K, stream);
}

Json PlainGemm::describe() const {
  return describe_plain(name(), false, prepared_,
                        "16x16 shared-memory tiles, one fp32 accumulator per output, k ascending");
}

Status PlainAttentionForward::prepare_shape(const AttentionShape& shape, cudaStream_t) {
  PTXB_RETURN_IF_ERROR(validate_shape(shape));
  prepared_.insert(shape);
  return ok_status();
}

Status PlainAttentionForward::run(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                  const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE,
                                  std::int64_t B, std::int64_t H, std::int64_t D, std::int64_t S,
                                  cudaStream_t stream) {
  AttentionShape shape{B, H, S, D};
  if (!prepared_.contains(shape)) return not_prepared(name(), to_string(shape));
  return plain_attention_forward(Q, K, V, O, DType::kBFloat16, LSE, B, H, S, D, causal_, stream);
}

Json PlainAttentionForward::describe() const {
  return describe_plain(name(), causal_, prepared_,
                        "block per query row, scores in shared memory, two-pass softmax, fp32");
}

Status PlainAttentionBackward::prepare_shape(const AttentionShape& shape, cudaStream_t) {
  PTXB_RETURN_IF_ERROR(validate_shape(shape));
  prepared_.insert(shape);
  return ok_status();
}

Status PlainAttentionBackward::run(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                   const __nv_bfloat16* V, const __nv_bfloat16* O,
                                   const __nv_bfloat16* dO, const float* LSE, __nv_bfloat16* dQ,
                                   __nv_bfloat16* dK, __nv_bfloat16* dV, std::int64_t B,
                                   std::int64_t H, std::int64_t D, std::int64_t S,
                                   cudaStream_t stream) {
  AttentionShape shape{B, H, S, D};
  if (!prepared_.contains(shape)) return not_prepared(name(), to_string(shape));
  return plain_attention_backward(Q, K, V, O, dO, LSE, dQ, dK, dV, DType::kBFloat16, B, H, S, D,
                                  causal_, stream);
}

Json PlainAttentionBackward::describe() const {
  return describe_plain(name(), causal_, prepared_,
                        "dQ: block per query row; dK/dV: block per key row; P recomputed from "
                        "LSE, delta = rowsum(dO*O), fp32");
}

}  // namespace ptxb::gpu
