// The GQA reference backends by name, and the plain CUDA one (plain_gqa.h) behind the ABI.
//   flashinfer_gqa_paged_decode, flashinfer_gqa_paged_prefill, flashinfer_gqa_ragged_prefill
//   plain_cuda_gqa_paged_decode, plain_cuda_gqa_paged_prefill, plain_cuda_gqa_ragged_prefill
// The FlashInfer ones exist only in a build configured with -DPTXB_WITH_FLASHINFER=ON
// (references/flashinfer/); elsewhere make_reference() names the option in its error.
#pragma once

#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "references/gqa_reference.h"

namespace ptxb::gpu {

const std::vector<std::string>& gqa_backend_names();
bool is_gqa_backend(std::string_view name);
// The layout a GQA backend name ends with; nullopt for any other name.
std::optional<GqaLayout> gqa_layout_of(std::string_view name);
// `causal` must be true for the prefills and false for decode (the task's cost model decides).
Result<std::unique_ptr<ReferenceBackend>> make_gqa_reference(std::string_view name, bool causal);

class PlainGqa final : public GqaReference {
 public:
  explicit PlainGqa(GqaLayout layout) : GqaReference(layout) {}
  std::string name() const override { return "plain_cuda_gqa_" + to_string(layout()); }
  Json describe() const override;

 protected:
  // The plain kernel needs no schedule; planning validates the index arrays once.
  Status plan(const GqaCall& call) override;
  bool planned(const GqaCall& call) const override;
  Status run(const GqaCall& call) override;

 private:
  std::map<GqaPlanKey, GqaHostIndex> checked_;
};

}  // namespace ptxb::gpu
