#include "references/flashinfer/flashinfer_mha.h"

#include <algorithm>

#include "cuda/cuda_check.h"
#include "references/flashinfer/flashinfer_kernels.h"

namespace ptxb::gpu {
namespace flashinfer_ref {

bool flashinfer_mha_supported(std::int64_t head_dim) {
  return std::find(std::begin(kMhaHeadDims), std::end(kMhaHeadDims), head_dim) !=
         std::end(kMhaHeadDims);
}

MhaPrefillConfig mha_prefill_config(std::int64_t head_dim, bool causal) {
  // getCTATileSize<D, D, CAUSAL> (hopper/prefill_sm90.cuh, FlashInfer 0.6.14).
  if (head_dim == 64) return {192, 128, 2};
  if (head_dim == 128)
    return causal ? MhaPrefillConfig{128, 128, 2} : MhaPrefillConfig{128, 192, 2};
  return {128, 64, 2};  // 256; not instantiated here
}

}  // namespace flashinfer_ref

Status FlashInferMhaPrefill::prepare_shape(const AttentionShape& shape, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(validate_shape(shape));
  if (lse_scratch_.contains(shape)) return ok_status();
  if (!flashinfer_ref::flashinfer_mha_supported(shape.head_dim))
    return make_error("unsupported",
                      "{}: FlashInfer {} has no SM90 prefill kernel for head_dim {} (its SM90 "
                      "prefill kernels: head_dim 64, 128, 256; this build instantiates 64 and 128)",
                      name(), flashinfer_ref::kVersion, shape.head_dim);
  PTXB_ASSIGN_OR_RETURN(
      DeviceBuffer scratch,
      DeviceBuffer::create(DType::kFloat32, shape.batch * shape.heads * shape.seq_len));
  lse_scratch_.emplace(shape, std::move(scratch));
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return ok_status();
}

Status FlashInferMhaPrefill::run(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                 const __nv_bfloat16* V, __nv_bfloat16* O, float* LSE,
                                 std::int64_t B, std::int64_t H, std::int64_t D, std::int64_t S,
                                 cudaStream_t stream) {
  const AttentionShape shape{B, H, S, D};
  auto scratch = lse_scratch_.find(shape);
  if (scratch == lse_scratch_.end())
    return make_error("not_prepared", "{}: shape {} was not prepared", name(), to_string(shape));
  flashinfer_ref::MhaPrefillCall call;
  call.q = Q, call.k = K, call.v = V, call.o = O, call.lse = LSE;
  call.lse_scratch = scratch->second.as<float>();
  call.shape = shape;
  call.causal = causal_;
  call.stream = stream;
  return flashinfer_ref::run_mha_prefill(call);
}

Json FlashInferMhaPrefill::describe() const {
  Json shapes = Json::array();
  for (const auto& [shape, scratch] : lse_scratch_) {
    const flashinfer_ref::MhaPrefillConfig config =
        flashinfer_ref::mha_prefill_config(shape.head_dim, causal_);
    const std::int64_t heads = shape.batch * shape.heads;
    shapes.push_back(
        Json{{"shape", to_string(shape)},
             {"plan",
              {{"kernel",
                "PrefillWithKVCacheKernel (SM90 FA3, single prefill, batch folded into "
                "heads, HND strides)"},
               {"mask", causal_ ? "causal" : "none"},
               {"cta_tile_q", config.cta_q},
               {"cta_tile_kv", config.cta_kv},
               {"stages", config.stages},
               {"kv_load", "TMA"},
               {"scheduler", "SingleTileScheduler"},
               {"grid", {(shape.seq_len + config.cta_q - 1) / config.cta_q, heads}},
               {"lse",
                "FlashInfer's log2 LSE [S, B*H] in a scratch buffer, then ln 2 * transpose into "
                "the task's LSE [B,H,S] (in the timed call)"}}}});
  }
  return Json{{"backend", name()},
              {"causal", causal()},
              {"library", flashinfer_ref::library_description()},
              {"shapes", shapes}};
}

}  // namespace ptxb::gpu
