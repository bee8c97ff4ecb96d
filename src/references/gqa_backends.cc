#include "references/gqa_backends.h"

#include "core/version.h"
#include "references/plain_gqa.h"
#ifdef PTXB_WITH_FLASHINFER
#include "references/flashinfer/flashinfer_gqa.h"
#endif

namespace ptxb::gpu {
namespace {

constexpr GqaLayout kLayouts[] = {GqaLayout::kPagedDecode, GqaLayout::kPagedPrefill,
                                  GqaLayout::kRaggedPrefill};

}  // namespace

bool flashinfer_built() {
#ifdef PTXB_WITH_FLASHINFER
  return true;
#else
  return false;
#endif
}

Error flashinfer_not_built(std::string_view backend) {
  return make_error("unavailable",
                    "reference backend {}: this build has no FlashInfer kernels; configure with "
                    "-DPTXB_WITH_FLASHINFER=ON (scripts/setup.sh installs the FlashInfer headers; "
                    "PTXB_WITH_FLASHINFER=ON bash scripts/setup.sh does both)",
                    backend);
}

const std::vector<std::string>& gqa_backend_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const char* prefix : {"flashinfer_gqa_", "plain_cuda_gqa_"})
      for (GqaLayout layout : kLayouts) out.push_back(prefix + to_string(layout));
    return out;
  }();
  return names;
}

bool is_gqa_backend(std::string_view name) {
  return gqa_layout_of(name).has_value();
}

std::optional<GqaLayout> gqa_layout_of(std::string_view name) {
  for (const char* prefix : {"flashinfer_gqa_", "plain_cuda_gqa_"}) {
    if (!name.starts_with(prefix)) continue;
    for (GqaLayout layout : kLayouts)
      if (name.substr(std::string_view(prefix).size()) == to_string(layout)) return layout;
  }
  return std::nullopt;
}

Result<std::unique_ptr<ReferenceBackend>> make_gqa_reference(std::string_view name, bool causal) {
  const std::optional<GqaLayout> layout = gqa_layout_of(name);
  if (!layout) return make_error("invalid_argument", "'{}' is not a GQA reference backend", name);
  const bool prefill = *layout != GqaLayout::kPagedDecode;
  if (causal != prefill)
    return make_error("invalid_argument", "reference backend {} is {}: it cannot run {}", name,
                      prefill ? "causal prefill" : "non-causal decode",
                      causal ? "with a causal mask" : "without one");
  if (name.starts_with("plain_cuda_gqa_"))
    return std::unique_ptr<ReferenceBackend>(std::make_unique<PlainGqa>(*layout));
#ifdef PTXB_WITH_FLASHINFER
  return std::unique_ptr<ReferenceBackend>(std::make_unique<FlashInferGqa>(*layout));
#else
  return flashinfer_not_built(name);
#endif
}

Status PlainGqa::plan(const GqaCall& call) {
  PTXB_ASSIGN_OR_RETURN(GqaHostIndex index, copy_host_index(call));
  checked_.emplace(plan_key(call), std::move(index));
  return ok_status();
}

bool PlainGqa::planned(const GqaCall& call) const {
  return checked_.contains(plan_key(call));
}

Status PlainGqa::run(const GqaCall& call) {
  return plain_gqa_attention(call, call.output, DType::kBFloat16);
}

Json PlainGqa::describe() const {
  Json shapes = Json::array();
  for (const auto& [key, index] : checked_) shapes.push_back(to_string(key.shape));
  return Json{{"backend", name()},
              {"causal", causal()},
              {"library", {{"name", "ptxbench plain CUDA"}, {"version", harness_version()}}},
              {"algorithm",
               "block per (query row, query head), warp per key, two passes (max, then "
               "exp-sum and weighted V), fp32"},
              {"shapes", shapes}};
}

}  // namespace ptxb::gpu
