#include "agent/turn_evaluator.h"

#include "core/strings.h"

namespace ptxb {
namespace {

// Runs every child with CUDA_VISIBLE_DEVICES set: the supervisor, and through it the runner,
// see only the GPU of their evaluation slot.
class DevicePinnedProcessRunner final : public ProcessRunner {
 public:
  explicit DevicePinnedProcessRunner(std::string devices) : devices_(std::move(devices)) {}
  Result<ProcessResult> run(const ProcessSpec& spec) override {
    ProcessSpec pinned = spec;
    std::vector<std::string> env = spec.env ? *spec.env : current_environment();
    std::erase_if(env,
                  [](const std::string& e) { return starts_with(e, "CUDA_VISIBLE_DEVICES="); });
    env.push_back("CUDA_VISIBLE_DEVICES=" + devices_);
    pinned.env = std::move(env);
    return inner_.run(pinned);
  }

 private:
  std::string devices_;
  SystemProcessRunner inner_;
};

}  // namespace

PipelineTurnEvaluator::PipelineTurnEvaluator(const TaskRegistry& registry,
                                             std::vector<std::string> tasks_dirs, EvalTools tools,
                                             std::string cuda_visible_devices)
    : registry_(registry),
      tasks_dirs_(std::move(tasks_dirs)),
      tools_(std::move(tools)),
      cuda_visible_devices_(std::move(cuda_visible_devices)) {}

std::string PipelineTurnEvaluator::gpu_unavailable_reason() const {
  return gpu_stages_unavailable(tools_);
}

Result<EvalResult> PipelineTurnEvaluator::evaluate(const EvalRequest& request) {
  if (cuda_visible_devices_.empty()) {
    SystemProcessRunner processes;
    return ptxb::evaluate(request, registry_, tasks_dirs_, tools_, processes);
  }
  DevicePinnedProcessRunner processes(cuda_visible_devices_);
  return ptxb::evaluate(request, registry_, tasks_dirs_, tools_, processes);
}

}  // namespace ptxb
