// FlashInfer as a GQA reference backend ("flashinfer_gqa_<layout>"), behind the candidate ABI.
//
// prepare_call() does FlashInfer's plan() for the call's index arrays (a synchronous index copy
// to the host, the planner, its schedule copied to the GPU) and caches it by (shape, index-array
// addresses); invoke() only enqueues FlashInfer's kernels (run()). describe() records the
// FlashInfer version and, per planned shape, the kernel configuration the plan chose: the trace's
// `reference.backend` (like cuDNN's engine name).
#pragma once

#include <map>
#include <memory>
#include <variant>

#include "references/flashinfer/flashinfer_kernels.h"
#include "references/gqa_reference.h"

namespace ptxb::gpu {

class FlashInferGqa final : public GqaReference {
 public:
  explicit FlashInferGqa(GqaLayout layout) : GqaReference(layout) {}
  ~FlashInferGqa() override;
  FlashInferGqa(const FlashInferGqa&) = delete;
  FlashInferGqa& operator=(const FlashInferGqa&) = delete;

  std::string name() const override { return "flashinfer_gqa_" + to_string(layout()); }
  Json describe() const override;

 protected:
  Status plan(const GqaCall& call) override;
  bool planned(const GqaCall& call) const override;
  Status run(const GqaCall& call) override;

 private:
  using Plan = std::variant<flashinfer_ref::DecodePlan, flashinfer_ref::PrefillPlan>;
  // FlashInfer's schedule lives in the int workspace, so every cached plan has its own (8 MiB;
  // one per input set the runner binds). The float workspace (split-KV partial results) and the
  // pinned staging buffer are shared: calls run one at a time on one stream, and planning
  // synchronizes before the staging buffer is reused.
  struct Planned {
    Plan plan;
    flashinfer_ref::Workspace workspace;
  };
  Status allocate_shared();
  void release(Planned& planned);

  std::map<GqaPlanKey, Planned> plans_;
  void* float_buffer_ = nullptr;
  void* pinned_int_buffer_ = nullptr;
};

// The kernel configuration of a plan, as describe() records it.
Json describe_plan(const flashinfer_ref::DecodePlan& plan);
Json describe_plan(const flashinfer_ref::PrefillPlan& plan, GqaLayout layout);

}  // namespace ptxb::gpu
