#include "references/cudnn_sdpa.h"

#include <cmath>

#include <fmt/format.h>

#include "references/library_check.h"

namespace ptxb::gpu {
namespace {

float softmax_scale(std::int64_t head_dim) {
  // 1/√D computed in double and rounded once: the same value the plain reference uses.
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)));
}

std::string version_text(std::size_t n) {
  return fmt::format("{}.{}.{}", n / 10000, n / 100 % 100, n % 100);
}

}  // namespace

Json cudnn_library_info() {
  CudnnVersions v = cudnn_versions();
  return Json{{"name", "cuDNN"},
              {"version", v.loaded},
              {"version_string", version_text(v.loaded)},
              {"header_version", v.headers},
              {"path", v.loaded_path},
              {"frontend_version",
               fmt::format("{}.{}.{}", v.frontend_major, v.frontend_minor, v.frontend_patch)}};
}

CudnnSdpaPlans::~CudnnSdpaPlans() {
  entries_.clear();  // plans before the handle they were built with
  if (handle_ != nullptr) cudnnDestroy(handle_);
}

Status CudnnSdpaPlans::prepare(const AttentionShape& shape, cudaStream_t stream) {
  PTXB_RETURN_IF_ERROR(validate_shape(shape));
  if (entries_.contains(shape)) return ok_status();
  if (handle_ == nullptr) {
    // Before the first cuDNN call that does real work: a mismatched libcudnn can build plans
    // that then fail (or misbehave) in ways that are much harder to read than this message.
    PTXB_RETURN_IF_ERROR(check_cudnn_version());
    PTXB_CUDNN_CHECK(cudnnCreate(&handle_));
  }
  PTXB_CUDNN_CHECK(cudnnSetStream(handle_, stream));
  PTXB_ASSIGN_OR_RETURN(
      std::unique_ptr<SdpaGraph> graph,
      SdpaGraph::build(handle_, direction_, shape.batch, shape.heads, shape.seq_len, shape.head_dim,
                       causal_, softmax_scale(shape.head_dim)));
  Entry entry;
  PTXB_ASSIGN_OR_RETURN(entry.workspace,
                        DeviceBuffer::create(static_cast<std::size_t>(graph->workspace_bytes())));
  entry.graph = std::move(graph);
  entries_.emplace(shape, std::move(entry));
  PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
  return ok_status();
}

Status CudnnSdpaPlans::execute(const AttentionShape& shape, const SdpaTensors& tensors,
                               cudaStream_t stream, const std::string& backend) {
  auto it = entries_.find(shape);
  if (it == entries_.end()) {
    return make_error("not_prepared", "{}: shape {} was not prepared; call prepare() first",
                      backend, to_string(shape));
  }
  PTXB_CUDNN_CHECK(cudnnSetStream(handle_, stream));
  return it->second.graph->execute(handle_, tensors, it->second.workspace.data());
}

Json CudnnSdpaPlans::describe(const std::string& backend) const {
  Json shapes = Json::array();
  for (const auto& [shape, entry] : entries_) {
    shapes.push_back(Json{{"shape", to_string(shape)},
                          {"batch", shape.batch},
                          {"heads", shape.heads},
                          {"seq_len", shape.seq_len},
                          {"head_dim", shape.head_dim},
                          {"engine", entry.graph->plan_name()},
                          {"heuristic_plans", entry.graph->candidate_plan_count()},
                          {"workspace_bytes", entry.graph->workspace_bytes()}});
  }
  return Json{
      {"backend", backend},
      {"causal", causal_},
      {"library", cudnn_library_info()},
      {"graph", direction_ == SdpaDirection::kForward
                    ? "sdpa forward, generate_stats (natural-log LSE), bf16 io, fp32 compute"
                    : "sdpa_backward, bf16 io, fp32 compute"},
      {"mask", causal_ ? "diagonal band, TOP_LEFT alignment, right bound 0" : "none"},
      {"attn_scale", "1/sqrt(D)"},
      {"engine_selection", "HeurMode_t::A, BuildPlanPolicy_t::HEURISTICS_CHOICE"},
      {"shapes", shapes}};
}

Status CudnnSdpaForward::prepare_shape(const AttentionShape& shape, cudaStream_t stream) {
  return plans_.prepare(shape, stream);
}

Status CudnnSdpaForward::run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                             __nv_bfloat16* O, float* LSE, std::int64_t B, std::int64_t H,
                             std::int64_t D, std::int64_t S, cudaStream_t stream) {
  SdpaTensors tensors;
  tensors.q = Q;
  tensors.k = K;
  tensors.v = V;
  tensors.o = O;
  tensors.stats = LSE;
  return plans_.execute(AttentionShape{B, H, S, D}, tensors, stream, name());
}

Json CudnnSdpaForward::describe() const {
  return plans_.describe(name());
}

Status CudnnSdpaBackward::prepare_shape(const AttentionShape& shape, cudaStream_t stream) {
  return plans_.prepare(shape, stream);
}

Status CudnnSdpaBackward::run(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                              const __nv_bfloat16* V, const __nv_bfloat16* O,
                              const __nv_bfloat16* dO, const float* LSE, __nv_bfloat16* dQ,
                              __nv_bfloat16* dK, __nv_bfloat16* dV, std::int64_t B, std::int64_t H,
                              std::int64_t D, std::int64_t S, cudaStream_t stream) {
  SdpaTensors tensors;
  tensors.q = Q;
  tensors.k = K;
  tensors.v = V;
  tensors.o = const_cast<__nv_bfloat16*>(O);  // read-only input of the backward graph
  tensors.d_o = dO;
  tensors.stats = const_cast<float*>(LSE);  // read-only input of the backward graph
  tensors.d_q = dQ;
  tensors.d_k = dK;
  tensors.d_v = dV;
  return plans_.execute(AttentionShape{B, H, S, D}, tensors, stream, name());
}

Json CudnnSdpaBackward::describe() const {
  return plans_.describe(name());
}

}  // namespace ptxb::gpu
