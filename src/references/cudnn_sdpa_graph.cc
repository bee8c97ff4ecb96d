// The only translation unit that includes the cuDNN frontend (see cudnn_sdpa_graph.h).
//
// The frontend's bundled JSON library is switched off: we never serialize graphs, and one
// nlohmann version per binary is easier to reason about.
#define CUDNN_FRONTEND_SKIP_JSON_LIB
#include <cudnn_frontend.h>

#include "references/cudnn_sdpa_graph.h"

#include <dlfcn.h>

#include <unordered_map>

#include <fmt/format.h>

#include "references/library_check.h"

namespace ptxb::gpu {

namespace fe = cudnn_frontend;

namespace {

// Tensor uids of the variant pack; any distinct integers work.
enum Uid : std::int64_t {
  kUidQ = 1,
  kUidK,
  kUidV,
  kUidO,
  kUidStats,
  kUidDO,
  kUidDQ,
  kUidDK,
  kUidDV,
};

}  // namespace

struct SdpaGraph::Impl {
  SdpaDirection direction = SdpaDirection::kForward;
  std::shared_ptr<fe::graph::Graph> graph;
  std::int64_t workspace_bytes = 0;
  std::int64_t candidate_plans = 0;
  std::string plan_name;
};

SdpaGraph::SdpaGraph(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SdpaGraph::~SdpaGraph() = default;

std::int64_t SdpaGraph::workspace_bytes() const {
  return impl_->workspace_bytes;
}
const std::string& SdpaGraph::plan_name() const {
  return impl_->plan_name;
}
std::int64_t SdpaGraph::candidate_plan_count() const {
  return impl_->candidate_plans;
}

Result<std::unique_ptr<SdpaGraph>> SdpaGraph::build(cudnnHandle_t handle, SdpaDirection direction,
                                                    std::int64_t b, std::int64_t h, std::int64_t s,
                                                    std::int64_t d, bool causal, float scale) {
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const std::vector<std::int64_t> dims = {b, h, s, d};
  const std::vector<std::int64_t> strides = {h * s * d, s * d, d, 1};
  const std::vector<std::int64_t> stats_dims = {b, h, s, 1};
  const std::vector<std::int64_t> stats_strides = {h * s, s, 1, 1};
  auto bf16_tensor = [&](const char* name, std::int64_t uid) {
    return graph->tensor(fe::graph::Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_dim(dims)
                             .set_stride(strides)
                             .set_data_type(fe::DataType_t::BFLOAT16));
  };
  auto q = bf16_tensor("Q", kUidQ);
  auto k = bf16_tensor("K", kUidK);
  auto v = bf16_tensor("V", kUidV);

  if (direction == SdpaDirection::kForward) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("ptxb_sdpa_forward")
                       .set_generate_stats(true)
                       .set_attn_scale(scale);
    if (causal) {
      options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
          .set_diagonal_band_right_bound(0);
    }
    auto [o, stats] = graph->sdpa(q, k, v, options);
    o->set_output(true).set_uid(kUidO).set_dim(dims).set_stride(strides).set_data_type(
        fe::DataType_t::BFLOAT16);
    stats->set_output(true)
        .set_uid(kUidStats)
        .set_dim(stats_dims)
        .set_stride(stats_strides)
        .set_data_type(fe::DataType_t::FLOAT);
  } else {
    auto o = bf16_tensor("O", kUidO);
    auto d_o = bf16_tensor("dO", kUidDO);
    auto stats = graph->tensor(fe::graph::Tensor_attributes()
                                   .set_name("Stats")
                                   .set_uid(kUidStats)
                                   .set_dim(stats_dims)
                                   .set_stride(stats_strides)
                                   .set_data_type(fe::DataType_t::FLOAT));
    auto options =
        fe::graph::SDPA_backward_attributes().set_name("ptxb_sdpa_backward").set_attn_scale(scale);
    if (causal) {
      options.set_diagonal_alignment(fe::DiagonalAlignment_t::TOP_LEFT)
          .set_diagonal_band_right_bound(0);
    }
    auto [d_q, d_k, d_v] = graph->sdpa_backward(q, k, v, o, d_o, stats, options);
    for (auto& [tensor, uid] :
         {std::pair{d_q, kUidDQ}, std::pair{d_k, kUidDK}, std::pair{d_v, kUidDV}}) {
      tensor->set_output(true).set_uid(uid).set_dim(dims).set_stride(strides).set_data_type(
          fe::DataType_t::BFLOAT16);
    }
  }

  PTXB_CUDNN_CHECK(graph->validate());
  PTXB_CUDNN_CHECK(graph->build_operation_graph(handle));
  PTXB_CUDNN_CHECK(graph->create_execution_plans({fe::HeurMode_t::A}));
  PTXB_CUDNN_CHECK(graph->check_support());
  PTXB_CUDNN_CHECK(graph->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE));

  auto impl = std::make_unique<Impl>();
  impl->direction = direction;
  impl->candidate_plans = graph->get_execution_plan_count();
  PTXB_CUDNN_CHECK(graph->get_workspace_size(impl->workspace_bytes));
  PTXB_CUDNN_CHECK(graph->get_plan_name(impl->plan_name));
  impl->graph = std::move(graph);
  return std::unique_ptr<SdpaGraph>(new SdpaGraph(std::move(impl)));
}

Status SdpaGraph::execute(cudnnHandle_t handle, const SdpaTensors& t, void* workspace) const {
  // The variant pack takes non-const pointers; cuDNN does not write the inputs.
  auto in = [](const void* p) { return const_cast<void*>(p); };
  std::unordered_map<std::int64_t, void*> pack;
  if (impl_->direction == SdpaDirection::kForward) {
    pack = {
        {kUidQ, in(t.q)}, {kUidK, in(t.k)}, {kUidV, in(t.v)}, {kUidO, t.o}, {kUidStats, t.stats}};
  } else {
    pack = {{kUidQ, in(t.q)}, {kUidK, in(t.k)},    {kUidV, in(t.v)},
            {kUidO, t.o},     {kUidDO, in(t.d_o)}, {kUidStats, t.stats},
            {kUidDQ, t.d_q},  {kUidDK, t.d_k},     {kUidDV, t.d_v}};
  }
  PTXB_CUDNN_CHECK(impl_->graph->execute(handle, pack, workspace));
  return ok_status();
}

CudnnVersions cudnn_versions() {
  CudnnVersions versions;
  versions.loaded = cudnnGetVersion();
  versions.headers = CUDNN_VERSION;
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&cudnnGetVersion), &info) != 0 &&
      info.dli_fname != nullptr) {
    versions.loaded_path = info.dli_fname;
  } else {
    versions.loaded_path = "unknown";
  }
  versions.frontend_major = CUDNN_FRONTEND_MAJOR_VERSION;
  versions.frontend_minor = CUDNN_FRONTEND_MINOR_VERSION;
  versions.frontend_patch = CUDNN_FRONTEND_PATCH_VERSION;
  return versions;
}

Status check_cudnn_version() {
  CudnnVersions v = cudnn_versions();
  // cuDNN 9 encodes versions as major·10000 + minor·100 + patch.
  auto text = [](std::size_t n) {
    return fmt::format("{}.{}.{}", n / 10000, n / 100 % 100, n % 100);
  };
  if (v.loaded / 100 != v.headers / 100) {
    return make_error("cudnn_version",
                      "cuDNN version mismatch: compiled against cuDNN {} headers (CUDNN_VERSION "
                      "{}) but the loaded library {} is cuDNN {} (cudnnGetVersion() = {}); put "
                      "the directory of the matching libcudnn.so.9 (e.g. the PyTorch venv's "
                      "site-packages/nvidia/cudnn/lib) first on LD_LIBRARY_PATH",
                      text(v.headers), v.headers, v.loaded_path, text(v.loaded), v.loaded);
  }
  return ok_status();
}

}  // namespace ptxb::gpu
