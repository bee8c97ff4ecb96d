#include "supervisor/evaluator.h"

#include <random>

#include "abi/signature.h"
#include "core/clock.h"
#include "core/strings.h"
#include "core/version.h"
#include "protocol/protocol.h"
#include "supervisor/eval_stages.h"
#include "trace/safetensors.h"

namespace ptxb {

bool is_backward_task(const Task& task) {
  return task.reference_backend == "cudnn_sdpa_bwd" || contains(task.cost_model, "bwd");
}

std::string reference_selector(const Task& task) {
  return task.reference_backend + (ends_with(task.cost_model, "_causal") ? ":causal" : "");
}

namespace {

// A by-value scalar input as the self-contained runner takes it ({"f32": x}, {"i32": n}, ...).
Result<Json> scalar_param(const Task& task, const AbiParameter& p, const TensorSpec& spec) {
  const InputSpec* input = task.workload.find_input(p.source_name);
  if (input == nullptr || input->kind != InputSpec::Kind::kScalar ||
      !input->scalar_value.is_number())
    return make_error("setup", "task {}: scalar {} has no numeric 'scalar' input", task.name,
                      p.source_name);
  const Json& v = input->scalar_value;
  switch (spec.dtype) {
    case DType::kFloat32:
      return Json{{"name", p.name}, {"f32", v.get<double>()}};
    case DType::kInt32:
      return Json{{"name", p.name}, {"i32", v.get<std::int64_t>()}};
    case DType::kInt64:
      return Json{{"name", p.name}, {"i64", v.get<std::int64_t>()}};
    default:
      return make_error("setup", "task {}: scalar {} of type {} is not supported", task.name,
                        p.source_name, dtype_name(spec.dtype));
  }
}

}  // namespace

Result<Json> self_contained_params(const Task& task, const std::string& signature,
                                   std::uint64_t seed) {
  const RunSignature run = make_run_signature(task.definition);
  const auto axes = task.axis_values();
  Json params = Json::array();
  for (const auto& p : run.parameters) {
    if (p.kind == AbiParameter::Kind::kStream) continue;
    if (p.kind == AbiParameter::Kind::kAxis) {
      params.push_back(Json{{"name", p.name}, {"i64", axes.at(p.source_name)}});
      continue;
    }
    const TensorSpec* tensor = task.definition.find_tensor(p.source_name);
    if (tensor && tensor->is_scalar()) {
      PTXB_ASSIGN_OR_RETURN(Json scalar, scalar_param(task, p, *tensor));
      params.push_back(std::move(scalar));
      continue;
    }
    std::uint64_t elements = 1;
    if (tensor && tensor->shape)
      for (const auto& axis : *tensor->shape) elements *= static_cast<std::uint64_t>(axes.at(axis));
    Json spec = {{"dtype", tensor ? std::string(dtype_name(tensor->dtype)) : "float32"},
                 {"elements", elements},
                 {"init", p.kind == AbiParameter::Kind::kInput ? "normal" : "zeros"}};
    // Workload constants (the GQA index arrays) go in as they are: random request boundaries
    // would send a correct kernel out of bounds under the sanitizer.
    const InputSpec* input = task.workload.find_input(p.source_name);
    if (input != nullptr && input->kind == InputSpec::Kind::kSafetensors) {
      PTXB_ASSIGN_OR_RETURN(
          SafetensorsTensor loaded,
          read_safetensors_tensor(task.set_root + "/" + input->path, input->tensor_key));
      spec["init"] = "data";
      spec["data_hex"] = to_hex(loaded.bytes.data(), loaded.bytes.size());
    }
    params.push_back(Json{{"name", p.name}, {"tensor", spec}});
  }
  return Json{{"signature", signature}, {"seed", seed}, {"params", params}};
}

std::uint64_t Evaluator::os_secret() {
  std::random_device os;
  return (static_cast<std::uint64_t>(os()) << 32) ^ os();
}

EvalResult Evaluator::run(const SupervisorJob& job, const Task& task,
                          const CompileResult& compile) {
  EvalContext ctx(job, task, compile, device_, launcher_, tools_, secret_());
  EvalResult& result = ctx.result;
  result.task = task.name;
  result.arch = compile.artifact.arch;
  result.options = job.request.options;
  result.harness_version = harness_version();
  result.timestamp = iso_utc_now();
  for (const auto& [family, count] : compile.sass.family_totals)
    result.target_instructions.static_counts[family] = count;
  // In order; each stage either hands on to the next or decides the status. The sanitizer gate
  // runs before the workload's inputs exist: it uses the self-contained runner's own.
  using Stage = StageOutcome (*)(EvalContext&);
  static constexpr Stage kStages[] = {stage_setup,          stage_sanitizer,    stage_workload,
                                      stage_reference,      stage_correctness,  stage_timing,
                                      stage_bound,          stage_revalidation, stage_integrity,
                                      stage_also_reference, stage_profile};
  // Operation sanitize: the gate and the correctness trials, nothing timed. The reference runner
  // is not started either: the expected outputs come from the workload stage, and only its
  // timing (which sets the per-call limit) is skipped.
  static constexpr Stage kSanitizeStages[] = {stage_setup,       stage_sanitizer,
                                              stage_workload,    stage_untimed_limit,
                                              stage_correctness, stage_untimed_verdict};
  // Operation debug runs the same untimed stages; the debug stage itself runs where the
  // candidate fails (EvalContext::fail_candidate), with options.debug set.
  if (job.request.operation == EvalOperation::kSanitize ||
      job.request.operation == EvalOperation::kDebug) {
    for (Stage stage : kSanitizeStages)
      if (stage(ctx) == StageOutcome::kDone) break;
  } else {
    for (Stage stage : kStages)
      if (stage(ctx) == StageOutcome::kDone) break;
  }
  return std::move(ctx.result);
}

}  // namespace ptxb
