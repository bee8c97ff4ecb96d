#include "eval/eval_types.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/sha256.h"
#include "protocol/json_fields.h"

namespace ptxb {
namespace {

using protocol_detail::get_string;
using protocol_detail::require_object;

// Strict on types for what the supervisor acts on; a wrong type is an error, not a default.
template <typename T>
Status read_optional(const Json& json, const char* key, T& out, const std::string& what) {
  if (!json.contains(key)) return ok_status();
  try {
    out = json.at(key).get<T>();
  } catch (const std::exception& e) {
    return make_error("parse", "{}: field \"{}\": {}", what, key, e.what());
  }
  return ok_status();
}

// JSON has no NaN/Inf (nlohmann writes null); a NaN the candidate wrote is a fact worth keeping,
// so non-finite values travel as the strings "NaN", "Infinity", "-Infinity".
Json number_to_json(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "NaN";
  return value > 0 ? "Infinity" : "-Infinity";
}

double number_from_json(const Json& json, const char* key, double fallback) {
  if (!json.contains(key)) return fallback;
  const Json& v = json[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string text = v.get<std::string>();
    if (text == "Infinity") return std::numeric_limits<double>::infinity();
    if (text == "-Infinity") return -std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  return std::numeric_limits<double>::quiet_NaN();  // null: written by an older writer for NaN
}

Json stage_list_to_json(const std::vector<std::pair<std::string, double>>& stages) {
  Json j = Json::object();
  for (const auto& [name, ms] : stages) j[name] = ms;
  return j;
}

PtxbStatus status_or(const Json& json, const char* key, PtxbStatus fallback) {
  if (!json.contains(key) || !json[key].is_string()) return fallback;
  return parse_ptxb_status(json[key].get<std::string>()).value_or(fallback);
}

}  // namespace

Json EvalOptions::to_json() const {
  return Json{{"seed", seed},
              {"sanitize", sanitize},
              {"sanitizer_tool", sanitizer_tool},
              {"ncu", ncu},
              {"trials", trials},
              {"timing", timing.to_json()},
              {"reference_as_candidate", reference_as_candidate},
              {"unsafe_no_sandbox", unsafe_no_sandbox},
              {"disable_static_checks", disable_static_checks},
              {"runner_start_timeout_seconds", runner_start_timeout_seconds},
              {"sanitizer_timeout_seconds", sanitizer_timeout_seconds},
              {"ncu_timeout_seconds", ncu_timeout_seconds}};
}

Result<EvalOptions> EvalOptions::from_json(const Json& json) {
  EvalOptions o;
  const std::string what = "eval options";
  if (!json.is_object()) return make_error("parse", "{}: expected an object", what);
  PTXB_RETURN_IF_ERROR(read_optional(json, "seed", o.seed, what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "sanitize", o.sanitize, what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "sanitizer_tool", o.sanitizer_tool, what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "ncu", o.ncu, what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "trials", o.trials, what));
  PTXB_RETURN_IF_ERROR(
      read_optional(json, "reference_as_candidate", o.reference_as_candidate, what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "unsafe_no_sandbox", o.unsafe_no_sandbox, what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "disable_static_checks", o.disable_static_checks, what));
  PTXB_RETURN_IF_ERROR(
      read_optional(json, "runner_start_timeout_seconds", o.runner_start_timeout_seconds, what));
  PTXB_RETURN_IF_ERROR(
      read_optional(json, "sanitizer_timeout_seconds", o.sanitizer_timeout_seconds, what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "ncu_timeout_seconds", o.ncu_timeout_seconds, what));
  if (json.contains("timing")) o.timing = TimingPolicy::from_json(json["timing"]);
  static const std::vector<std::string> kTools = {"memcheck", "racecheck", "synccheck",
                                                  "initcheck"};
  if (std::find(kTools.begin(), kTools.end(), o.sanitizer_tool) == kTools.end())
    return make_error("parse",
                      "{}: sanitizer_tool \"{}\" is not one of memcheck, racecheck, "
                      "synccheck, initcheck",
                      what, o.sanitizer_tool);
  if (o.trials < 0 || o.trials > 100)
    return make_error("parse", "{}: trials must be 0 (task default) to 100", what);
  return o;
}

Json EvalRequest::to_json() const {
  return Json{{"task", task},
              {"arch", arch},
              {"source_name", source_name},
              {"source", source},
              {"options", options.to_json()}};
}

Result<EvalRequest> EvalRequest::from_json(const Json& json) {
  const std::string what = "eval request";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  EvalRequest r;
  PTXB_ASSIGN_OR_RETURN(r.task, get_string(json, "task", what));
  PTXB_ASSIGN_OR_RETURN(r.source, get_string(json, "source", what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "arch", r.arch, what));
  PTXB_RETURN_IF_ERROR(read_optional(json, "source_name", r.source_name, what));
  if (json.contains("options")) {
    PTXB_ASSIGN_OR_RETURN(r.options, EvalOptions::from_json(json["options"]));
  }
  return r;
}

Json OutputCheck::to_json() const {
  Json j{{"output", output},
         {"trial", trial},
         {"set", set},
         {"num_elements", num_elements},
         {"num_failing", num_failing},
         {"max_abs_error", number_to_json(max_abs_error)},
         {"max_rel_error", number_to_json(max_rel_error)},
         {"matched_ratio", number_to_json(matched_ratio)},
         {"num_nonfinite_candidate", num_nonfinite_candidate},
         {"num_nonfinite_reference", num_nonfinite_reference},
         {"num_equal_poison", num_equal_poison},
         {"num_matched_cross_only", num_matched_cross_only}};
  j["first_failing"] = first_failing_index < 0
                           ? Json(nullptr)
                           : Json{{"index", first_failing_index},
                                  {"candidate", number_to_json(first_failing_candidate)},
                                  {"reference", number_to_json(first_failing_reference)}};
  return j;
}

OutputCheck OutputCheck::from_json(const Json& j) {
  OutputCheck c;
  c.output = j.value("output", "");
  c.trial = j.value("trial", 0);
  c.set = j.value("set", 0);
  c.num_elements = j.value("num_elements", std::int64_t{0});
  c.num_failing = j.value("num_failing", std::int64_t{0});
  c.max_abs_error = number_from_json(j, "max_abs_error", 0.0);
  c.max_rel_error = number_from_json(j, "max_rel_error", 0.0);
  c.matched_ratio = number_from_json(j, "matched_ratio", 1.0);
  c.num_nonfinite_candidate = j.value("num_nonfinite_candidate", std::int64_t{0});
  c.num_nonfinite_reference = j.value("num_nonfinite_reference", std::int64_t{0});
  c.num_equal_poison = j.value("num_equal_poison", std::int64_t{0});
  c.num_matched_cross_only = j.value("num_matched_cross_only", std::int64_t{0});
  if (j.contains("first_failing") && j["first_failing"].is_object()) {
    c.first_failing_index = j["first_failing"].value("index", std::int64_t{-1});
    c.first_failing_candidate = number_from_json(j["first_failing"], "candidate", 0.0);
    c.first_failing_reference = number_from_json(j["first_failing"], "reference", 0.0);
  }
  return c;
}

Json Finding::to_json() const {
  return Json{{"status", ptxb_status_name(status)}, {"reason", reason}, {"detail", detail}};
}

Result<Finding> Finding::from_json(const Json& json) {
  Finding f;
  auto status = parse_ptxb_status(json.value("status", ""));
  if (!status) return make_error("parse", "finding: unknown status {}", json.value("status", ""));
  f.status = *status;
  f.reason = json.value("reason", "");
  f.detail = json.value("detail", "");
  return f;
}

Json WorkloadEval::to_json() const {
  Json j{{"workload", workload},
         {"workload_uuid", workload_uuid},
         {"status", ptxb_status_name(status)},
         {"reason", reason},
         {"message", message},
         {"seed", seed},
         {"set_seeds", set_seeds},
         {"trials", trials}};
  j["checks"] = Json::array();
  for (const auto& c : checks) j["checks"].push_back(c.to_json());
  j["unwritten"] = Json::object();
  for (const auto& [name, count] : unwritten) j["unwritten"][name] = count;
  j["findings"] = Json::array();
  for (const auto& f : findings) j["findings"].push_back(f.to_json());
  j["candidate_timing"] = candidate_timing ? candidate_timing->to_json() : Json(nullptr);
  j["reference_timing"] = reference_timing ? reference_timing->to_json() : Json(nullptr);
  j["speedup"] = speedup ? Json(*speedup) : Json(nullptr);
  j["physical_floor_ms"] = physical_floor_ms;
  j["reference"] = reference;
  j["runner"] = runner;
  j["integrity"] = integrity;
  j["flags"] = flags;
  return j;
}

Result<WorkloadEval> WorkloadEval::from_json(const Json& j) {
  WorkloadEval w;
  w.workload = j.value("workload", "");
  w.workload_uuid = j.value("workload_uuid", "");
  w.status = status_or(j, "status", PtxbStatus::kInfraError);
  w.reason = j.value("reason", "");
  w.message = j.value("message", "");
  w.seed = j.value("seed", std::uint64_t{0});
  if (j.contains("set_seeds")) w.set_seeds = j["set_seeds"].get<std::vector<std::uint64_t>>();
  w.trials = j.value("trials", 0);
  for (const auto& c : j.value("checks", Json::array()))
    w.checks.push_back(OutputCheck::from_json(c));
  const Json unwritten = j.value("unwritten", Json::object());  // items() must not outlive it
  for (const auto& [name, count] : unwritten.items())
    w.unwritten.emplace_back(name, count.get<std::int64_t>());
  for (const auto& f : j.value("findings", Json::array())) {
    PTXB_ASSIGN_OR_RETURN(Finding finding, Finding::from_json(f));
    w.findings.push_back(finding);
  }
  if (j.contains("candidate_timing") && j["candidate_timing"].is_object())
    w.candidate_timing = TimingStats::from_json(j["candidate_timing"]);
  if (j.contains("reference_timing") && j["reference_timing"].is_object())
    w.reference_timing = TimingStats::from_json(j["reference_timing"]);
  if (j.contains("speedup") && j["speedup"].is_number()) w.speedup = j["speedup"].get<double>();
  w.physical_floor_ms = j.value("physical_floor_ms", 0.0);
  w.reference = j.value("reference", Json::object());
  w.runner = j.value("runner", Json::object());
  w.integrity = j.value("integrity", Json::object());
  w.flags = j.value("flags", std::vector<std::string>{});
  return w;
}

Json TargetInstructionCheck::to_json() const {
  return Json{{"verdict", verdict},
              {"reason", reason},
              {"static", static_counts},
              {"dynamic", dynamic},
              {"cost_ms", cost_ms}};
}

TargetInstructionCheck TargetInstructionCheck::from_json(const Json& j) {
  TargetInstructionCheck t;
  t.verdict = j.value("verdict", std::string(kInstNotRun));
  t.reason = j.value("reason", "");
  t.static_counts = j.value("static", Json::object());
  t.dynamic = j.contains("dynamic") ? j["dynamic"] : Json(nullptr);
  t.cost_ms = j.value("cost_ms", 0.0);
  return t;
}

Json EvalResult::to_json() const {
  Json j{{"task", task},
         {"arch", arch},
         {"status", ptxb_status_name(status)},
         {"schema_status", evaluation_status_name(schema_status(status))},
         {"reason", reason},
         {"message", message},
         {"gpu_skipped", gpu_skipped},
         {"gpu_skip_reason", gpu_skip_reason}};
  j["workloads"] = Json::array();
  for (const auto& w : workloads) j["workloads"].push_back(w.to_json());
  j["target_instructions"] = target_instructions.to_json();
  j["sanitizer"] = sanitizer;
  j["environment"] = environment;
  j["stage_ms"] = stage_list_to_json(stage_ms);
  j["options"] = options.to_json();
  j["harness_version"] = harness_version;
  j["timestamp"] = timestamp;
  j["compile"] = compile;
  return j;
}

Result<EvalResult> EvalResult::from_json(const Json& j) {
  PTXB_RETURN_IF_ERROR(require_object(j, "eval result"));
  EvalResult r;
  r.task = j.value("task", "");
  r.arch = j.value("arch", "");
  r.status = status_or(j, "status", PtxbStatus::kInfraError);
  r.reason = j.value("reason", "");
  r.message = j.value("message", "");
  r.gpu_skipped = j.value("gpu_skipped", false);
  r.gpu_skip_reason = j.value("gpu_skip_reason", "");
  for (const auto& w : j.value("workloads", Json::array())) {
    PTXB_ASSIGN_OR_RETURN(WorkloadEval workload, WorkloadEval::from_json(w));
    r.workloads.push_back(std::move(workload));
  }
  if (j.contains("target_instructions"))
    r.target_instructions = TargetInstructionCheck::from_json(j["target_instructions"]);
  r.sanitizer = j.contains("sanitizer") ? j["sanitizer"] : Json(nullptr);
  r.environment = j.value("environment", Json::object());
  const Json stages = j.value("stage_ms", Json::object());
  for (const auto& [name, ms] : stages.items()) r.stage_ms.emplace_back(name, ms.get<double>());
  if (j.contains("options")) {
    PTXB_ASSIGN_OR_RETURN(r.options, EvalOptions::from_json(j["options"]));
  }
  r.harness_version = j.value("harness_version", "");
  r.timestamp = j.value("timestamp", "");
  r.compile = j.contains("compile") ? j["compile"] : Json(nullptr);
  return r;
}

std::vector<Trace> EvalResult::traces(const std::string& definition, const Json& workload,
                                      const std::string& solution) const {
  std::vector<Trace> out;
  for (const auto& w : workloads) {
    const EvaluationStatus status = schema_status(w.status);
    Json libs = Json::object();
    if (environment.contains("runner")) {
      const Json& runner = environment["runner"];
      libs["cuda_runtime"] = std::to_string(runner.value("cuda_runtime_version", 0));
      libs["cuda_driver"] = std::to_string(runner.value("cuda_driver_version", 0));
    }
    Json evaluation{
        {"status", evaluation_status_name(status)},
        {"environment",
         {{"hardware", environment.value("gpu_name", std::string("none"))}, {"libs", libs}}},
        {"timestamp", timestamp},
        {"log", w.message}};
    // The schema ties the metric blocks to the status (trace/trace.cc).
    if (status == EvaluationStatus::kPassed || status == EvaluationStatus::kIncorrectNumerical) {
      double max_abs = 0, max_rel = 0;
      for (const auto& check : w.checks) {
        max_abs = std::max(max_abs, check.max_abs_error);
        max_rel = std::max(max_rel, check.max_rel_error);
      }
      evaluation["correctness"] = {{"max_relative_error", max_rel},
                                   {"max_absolute_error", max_abs}};
    }
    if (status == EvaluationStatus::kPassed)
      evaluation["performance"] = {
          {"latency_ms", w.candidate_timing ? w.candidate_timing->median_ms : 0.0},
          {"reference_latency_ms", w.reference_timing ? w.reference_timing->median_ms : 0.0},
          {"speedup_factor", w.speedup.value_or(0.0)}};
    evaluation["ptxbench"] = {{"status", ptxb_status_name(w.status)},
                              {"reason", w.reason},
                              {"task", task},
                              {"workload", w.to_json()},
                              {"target_instructions", target_instructions.to_json()},
                              {"gpu_skipped", gpu_skipped},
                              {"gpu_skip_reason", gpu_skip_reason},
                              {"environment", environment},
                              {"stage_ms", stage_list_to_json(stage_ms)},
                              {"options", options.to_json()},
                              // Whether untrusted code ran in the sandbox (false only with
                              // --unsafe-no-sandbox): a filter for trace consumers.
                              {"sandboxed", !options.unsafe_no_sandbox},
                              {"harness_version", harness_version}};
    Json document{{"definition", definition},
                  {"workload", workload},
                  {"solution", solution},
                  {"evaluation", evaluation}};
    auto parsed = parse_trace(document, "evaluation trace");
    if (parsed.ok()) {
      out.push_back(std::move(parsed).value());
    } else {
      // Never lose a result: keep the document, with the validation problem attached.
      Trace raw;
      document["evaluation"]["ptxbench"]["trace_validation_error"] = parsed.error().message;
      raw.raw = document;
      out.push_back(std::move(raw));
    }
  }
  return out;
}

Json SupervisorJob::to_json() const {
  return Json{{"request", request.to_json()},
              {"compile", compile},
              {"tasks_dirs", tasks_dirs},
              {"runner_path", runner_path},
              {"reference_library_path", reference_library_path},
              {"ncu_path", ncu_path},
              {"sanitizer_path", sanitizer_path},
              {"sandbox_path", sandbox_path}};
}

Result<SupervisorJob> SupervisorJob::from_json(const Json& json) {
  const std::string what = "supervisor job";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  SupervisorJob job;
  if (!json.contains("request")) return make_error("parse", "{}: missing \"request\"", what);
  PTXB_ASSIGN_OR_RETURN(job.request, EvalRequest::from_json(json["request"]));
  job.compile = json.value("compile", Json(nullptr));
  if (json.contains("tasks_dirs"))
    job.tasks_dirs = json["tasks_dirs"].get<std::vector<std::string>>();
  PTXB_ASSIGN_OR_RETURN(job.runner_path, get_string(json, "runner_path", what));
  job.reference_library_path = json.value("reference_library_path", "");
  job.ncu_path = json.value("ncu_path", "");
  job.sanitizer_path = json.value("sanitizer_path", "");
  job.sandbox_path = json.value("sandbox_path", "");
  return job;
}

std::uint64_t derive_set_seed(std::uint64_t base_seed, const std::string& task, int index) {
  // SHA-256 of a canonical text: stable across compilers and platforms, unlike std::hash.
  const std::string digest =
      sha256_hex(fmt::format("ptxbench-set-seed/{}/{}/{}", base_seed, task, index));
  return std::stoull(digest.substr(0, 15), nullptr, 16);
}

}  // namespace ptxb
