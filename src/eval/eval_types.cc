#include "eval/eval_types.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "core/json_fields.h"
#include "core/sha256.h"
#include "eval/also_reference.h"

namespace ptxb {
namespace {

// Reads a number that may be non-finite: JSON has no NaN/Inf (nlohmann writes null); a NaN the
// candidate wrote is a fact worth keeping, so non-finite values travel as the strings "NaN",
// "Infinity", "-Infinity" (number_to_json). null, from an older writer, reads as NaN.
auto finite_or_named(double& out) {
  return [&out](const Json& v, const std::string& path) -> Status {
    if (v.is_null()) {
      out = std::numeric_limits<double>::quiet_NaN();
    } else if (v.is_number()) {
      out = v.get<double>();
    } else if (v.is_string()) {
      const std::string text = v.get<std::string>();
      if (text == "Infinity")
        out = std::numeric_limits<double>::infinity();
      else if (text == "-Infinity")
        out = -std::numeric_limits<double>::infinity();
      else
        out = std::numeric_limits<double>::quiet_NaN();
    } else {
      return make_error("parse", "{}: expected a number, got {}", path, v.type_name());
    }
    return ok_status();
  };
}

// A PtxbStatus name ("PASSED", ...): an unknown one is an error naming the field.
auto status_name(PtxbStatus& out) {
  return [&out](const Json& v, const std::string& path) -> Status {
    if (!v.is_string()) return make_error("parse", "{}: expected a status name", path);
    auto status = parse_ptxb_status(v.get<std::string>());
    if (!status)
      return make_error("parse", "{}: unknown status \"{}\"", path, v.get<std::string>());
    out = *status;
    return ok_status();
  };
}

// JSON has no NaN/Inf (nlohmann writes null): see finite_or_named.
Json number_to_json(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "NaN";
  return value > 0 ? "Infinity" : "-Infinity";
}

Json stage_list_to_json(const std::vector<std::pair<std::string, double>>& stages) {
  Json j = Json::object();
  for (const auto& [name, ms] : stages) j[name] = ms;
  return j;
}

}  // namespace

Json EvalOptions::to_json() const {
  Json j{{"seed", seed},
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
  if (energy) j["energy"] = true;  // absent before the option existed, and when off
  // Written only when off (the default is on): requests keep their idempotency keys.
  if (!pin_reference_algorithm) j["pin_reference_algorithm"] = false;
  if (profiler_hints) j["profiler_hints"] = true;                     // likewise
  if (ncu_source_page) j["ncu_source_page"] = true;                   // likewise
  if (!also_reference.empty()) j["also_reference"] = also_reference;  // likewise
  // Likewise: requests without the debug stage keep their idempotency keys.
  if (debug) {
    j["debug"] = true;
    j["debug_budget_seconds"] = debug_budget_seconds;
  }
  return j;
}

Result<EvalOptions> EvalOptions::from_json(const Json& json) {
  // Options are a request's: every field is optional, defaulting to the member initialisers.
  EvalOptions o;
  FieldReader r(json);
  r.optional("seed", o.seed).optional("sanitize", o.sanitize);
  r.optional("sanitizer_tool", o.sanitizer_tool).optional("ncu", o.ncu);
  r.optional("trials", o.trials).optional("timing", o.timing);
  r.optional("reference_as_candidate", o.reference_as_candidate);
  r.optional("pin_reference_algorithm", o.pin_reference_algorithm);
  r.optional("unsafe_no_sandbox", o.unsafe_no_sandbox);
  r.optional("disable_static_checks", o.disable_static_checks);
  r.optional("runner_start_timeout_seconds", o.runner_start_timeout_seconds);
  r.optional("sanitizer_timeout_seconds", o.sanitizer_timeout_seconds);
  r.optional("ncu_timeout_seconds", o.ncu_timeout_seconds);
  r.optional("energy", o.energy).optional("profiler_hints", o.profiler_hints);
  r.optional("ncu_source_page", o.ncu_source_page);
  r.optional("debug", o.debug).optional("debug_budget_seconds", o.debug_budget_seconds);
  r.optional("also_reference", o.also_reference);
  PTXB_RETURN_IF_ERROR(r.status());
  const std::string what = "eval options";
  if (!o.also_reference.empty() && !is_also_reference_name(o.also_reference))
    return make_error("parse", "{}: also_reference \"{}\" is not one of: {}", what,
                      o.also_reference, also_reference_names());
  static const std::vector<std::string> kTools = {"memcheck", "racecheck", "synccheck",
                                                  "initcheck"};
  if (std::find(kTools.begin(), kTools.end(), o.sanitizer_tool) == kTools.end())
    return make_error("parse",
                      "{}: sanitizer_tool \"{}\" is not one of memcheck, racecheck, "
                      "synccheck, initcheck",
                      what, o.sanitizer_tool);
  // Above a minute the stage would cost more than the evaluation it explains.
  if (!(o.debug_budget_seconds >= 1.0 && o.debug_budget_seconds <= 60.0))
    return make_error("parse", "{}: debug_budget_seconds must be 1 to 60", what);
  if (o.trials < 0 || o.trials > 100)
    return make_error("parse", "{}: trials must be 0 (task default) to 100", what);
  return o;
}

Json PrebuiltFiles::to_json() const {
  return Json{{"shared_object_path", shared_object_path},
              {"shared_object_sha256", shared_object_sha256},
              {"ptx_path", ptx_path},
              {"ptx_sha256", ptx_sha256},
              {"nvcc_version", nvcc_version}};
}

Result<PrebuiltFiles> PrebuiltFiles::from_json(const Json& json) {
  PrebuiltFiles p;
  FieldReader fields(json, "$.prebuilt");
  fields.required("shared_object_path", p.shared_object_path)
      .required("shared_object_sha256", p.shared_object_sha256)
      .required("ptx_path", p.ptx_path)
      .required("ptx_sha256", p.ptx_sha256)
      .required("nvcc_version", p.nvcc_version);
  PTXB_RETURN_IF_ERROR(fields.status());
  return p;
}

Json EvalRequest::to_json() const {
  Json j{{"task", task},
         {"arch", arch},
         {"source_name", source_name},
         {"source", source},
         {"options", options.to_json()}};
  if (prebuilt) j["prebuilt"] = prebuilt->to_json();
  if (operation != EvalOperation::kEvaluate)
    j["operation"] = std::string(eval_operation_name(operation));
  return j;
}

Result<EvalRequest> EvalRequest::from_json(const Json& json) {
  EvalRequest r;
  FieldReader fields(json);
  fields.required("task", r.task).required("source", r.source);
  // Optional: the task's arch when absent or empty; "kernel.cu"; the default options.
  fields.optional("arch", r.arch).optional("source_name", r.source_name);
  fields.optional("options", r.options);
  std::string operation(eval_operation_name(r.operation));
  fields.optional("operation", operation);
  PTXB_RETURN_IF_ERROR(fields.status());
  auto parsed = parse_eval_operation(operation);
  if (!parsed)
    return make_error("parse", "$.operation: \"{}\" is not one of {}", operation,
                      eval_operation_names());
  r.operation = *parsed;
  if (json.contains("prebuilt") && !json["prebuilt"].is_null()) {
    PTXB_ASSIGN_OR_RETURN(PrebuiltFiles prebuilt, PrebuiltFiles::from_json(json["prebuilt"]));
    r.prebuilt = std::move(prebuilt);
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

Result<OutputCheck> OutputCheck::from_json(const Json& j) {
  OutputCheck c;
  FieldReader r(j);
  r.required("output", c.output).required("trial", c.trial).required("set", c.set);
  r.required("num_elements", c.num_elements).required("num_failing", c.num_failing);
  r.custom("max_abs_error", true, finite_or_named(c.max_abs_error));
  r.custom("max_rel_error", true, finite_or_named(c.max_rel_error));
  r.custom("matched_ratio", true, finite_or_named(c.matched_ratio));
  r.required("num_nonfinite_candidate", c.num_nonfinite_candidate);
  r.required("num_nonfinite_reference", c.num_nonfinite_reference);
  r.required("num_equal_poison", c.num_equal_poison);
  // Optional: absent in results written before the cross-checked reference existed (0).
  r.optional("num_matched_cross_only", c.num_matched_cross_only);
  // Optional: null when no element failed.
  if (r.status().ok() && r.has("first_failing")) {
    FieldReader first(j["first_failing"], r.path_of("first_failing"));
    first.required("index", c.first_failing_index);
    first.custom("candidate", true, finite_or_named(c.first_failing_candidate));
    first.custom("reference", true, finite_or_named(c.first_failing_reference));
    PTXB_RETURN_IF_ERROR(first.status());
  }
  PTXB_RETURN_IF_ERROR(r.status());
  return c;
}

Json Finding::to_json() const {
  return Json{{"status", ptxb_status_name(status)}, {"reason", reason}, {"detail", detail}};
}

Result<Finding> Finding::from_json(const Json& json) {
  Finding f;
  FieldReader r(json);
  r.custom("status", true, status_name(f.status));
  r.required("reason", f.reason).required("detail", f.detail);
  PTXB_RETURN_IF_ERROR(r.status());
  return f;
}

Json AlsoReferenceRecord::to_json() const {
  Json j{{"name", name},     {"backend", backend}, {"selector", selector},
         {"status", status}, {"why", why},         {"backend_description", backend_description},
         {"method", method}};
  j["checks"] = Json::array();
  for (const auto& c : checks) j["checks"].push_back(c.to_json());
  j["timing"] = timing ? timing->to_json() : Json(nullptr);
  j["speedup"] = speedup ? Json(*speedup) : Json(nullptr);
  if (measured_at) j["measured_at"] = *measured_at;
  return j;
}

Result<AlsoReferenceRecord> AlsoReferenceRecord::from_json(const Json& json) {
  AlsoReferenceRecord r;
  FieldReader f(json);
  f.required("name", r.name).required("backend", r.backend).required("status", r.status);
  f.optional("selector", r.selector).optional("why", r.why);
  f.optional("backend_description", r.backend_description).optional("method", r.method);
  f.optional("checks", r.checks).optional("timing", r.timing).optional("speedup", r.speedup);
  f.optional("measured_at", r.measured_at);
  PTXB_RETURN_IF_ERROR(f.status());
  return r;
}

Json ReferenceRecord::to_json() const {
  Json j{{"backend", backend}, {"forward_for_inputs", forward_for_inputs}};
  if (measured_at) j["measured_at"] = *measured_at;
  if (method) j["method"] = *method;
  if (!timed_backend.is_null()) j["timed_backend"] = timed_backend;
  if (!candidate_slot_backend.is_null()) j["candidate_slot_backend"] = candidate_slot_backend;
  if (also_reference) j["also_reference"] = also_reference->to_json();
  return j;
}

Result<ReferenceRecord> ReferenceRecord::from_json(const Json& json) {
  ReferenceRecord r;
  FieldReader f(json);
  f.optional("backend", r.backend).optional("forward_for_inputs", r.forward_for_inputs);
  f.optional("measured_at", r.measured_at).optional("method", r.method);
  f.optional("timed_backend", r.timed_backend);
  f.optional("candidate_slot_backend", r.candidate_slot_backend);
  f.optional("also_reference", r.also_reference);
  PTXB_RETURN_IF_ERROR(f.status());
  return r;
}

Json GpuStateRecord::to_json() const {
  Json j{{"before", before}};
  if (after_timing) j["after_timing"] = after_timing->to_json();
  j["noisy"] = noisy;
  j["why"] = why;
  return j;
}

Result<GpuStateRecord> GpuStateRecord::from_json(const Json& json) {
  GpuStateRecord g;
  FieldReader r(json);
  r.required("before", g.before).optional("after_timing", g.after_timing);
  r.required("noisy", g.noisy).required("why", g.why);
  PTXB_RETURN_IF_ERROR(r.status());
  return g;
}

Json RunnerRecord::to_json() const {
  // The order the evaluator learns them in.
  Json j = Json::object();
  if (gpu_state) j["gpu_state"] = gpu_state->to_json();
  if (log) j["log"] = *log;
  if (shutdown) j["shutdown"] = *shutdown;
  if (exit) j["exit"] = *exit;
  return j;
}

Result<RunnerRecord> RunnerRecord::from_json(const Json& json) {
  RunnerRecord runner;
  FieldReader r(json);
  r.optional("log", runner.log).optional("gpu_state", runner.gpu_state);
  r.optional("shutdown", runner.shutdown).optional("exit", runner.exit);
  PTXB_RETURN_IF_ERROR(r.status());
  return runner;
}

Json RefreshRecord::to_json() const {
  return Json{{"sample", sample}, {"set", set}, {"kind", kind}, {"device_ms", device_ms}};
}

Result<RefreshRecord> RefreshRecord::from_json(const Json& json) {
  RefreshRecord refresh;
  FieldReader r(json);
  r.required("sample", refresh.sample).required("set", refresh.set);
  r.required("kind", refresh.kind).required("device_ms", refresh.device_ms);
  PTXB_RETURN_IF_ERROR(r.status());
  return refresh;
}

Json RevalidationRecord::to_json() const {
  Json j{{"speedup", speedup}, {"threshold", threshold}, {"trials", trials}};
  if (device_ms) j["device_ms"] = *device_ms;
  if (passed) j["passed"] = *passed;
  return j;
}

Result<RevalidationRecord> RevalidationRecord::from_json(const Json& json) {
  RevalidationRecord v;
  FieldReader r(json);
  r.required("speedup", v.speedup).required("threshold", v.threshold);
  r.required("trials", v.trials);
  r.optional("device_ms", v.device_ms).optional("passed", v.passed);
  PTXB_RETURN_IF_ERROR(r.status());
  return v;
}

Json IntegrityRecord::to_json() const {
  Json j = Json::object();
  if (refreshes) {
    j["refreshes"] = Json::array();
    for (const auto& refresh : *refreshes) j["refreshes"].push_back(refresh.to_json());
  }
  if (revalidation) j["revalidation"] = revalidation->to_json();
  if (fresh_input) {
    j["fresh_input_median_ms"] =
        fresh_input->median_ms ? Json(*fresh_input->median_ms) : Json(nullptr);
    j["fresh_input_slowdown_limit"] = fresh_input->slowdown_limit;
    j["repeat_median_ms"] = fresh_input->repeat_median_ms;
  }
  if (batch_bound) j["batch_bound"] = batch_bound->to_json();
  if (schedule_secret) j["schedule_secret"] = *schedule_secret;
  return j;
}

Result<IntegrityRecord> IntegrityRecord::from_json(const Json& json) {
  IntegrityRecord integrity;
  FieldReader r(json);
  r.optional("refreshes", integrity.refreshes).optional("revalidation", integrity.revalidation);
  r.optional("batch_bound", integrity.batch_bound)
      .optional("schedule_secret", integrity.schedule_secret);
  // The fresh-input figures are written together (fresh_input_median_ms may be null).
  if (r.has("fresh_input_slowdown_limit")) {
    FreshInputRecord& fresh = integrity.fresh_input.emplace();
    r.optional("fresh_input_median_ms", fresh.median_ms);
    r.required("fresh_input_slowdown_limit", fresh.slowdown_limit);
    r.required("repeat_median_ms", fresh.repeat_median_ms);
  }
  PTXB_RETURN_IF_ERROR(r.status());
  return integrity;
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
  if (speedup_interval) j["speedup_interval"] = speedup_interval->to_json();
  if (reference_solo_timing) j["reference_solo_timing"] = reference_solo_timing->to_json();
  if (timing_interleave) j["timing_interleave"] = timing_interleave->to_json();
  if (energy) j["energy"] = energy->to_json();
  if (paper_timing) j["paper_timing"] = paper_timing->to_json();
  j["physical_floor_ms"] = physical_floor_ms;
  j["reference"] = reference.to_json();
  j["runner"] = runner.to_json();
  j["integrity"] = integrity.to_json();
  j["flags"] = flags;
  return j;
}

Result<WorkloadEval> WorkloadEval::from_json(const Json& j) {
  WorkloadEval w;
  FieldReader r(j);
  r.required("workload", w.workload).required("workload_uuid", w.workload_uuid);
  r.custom("status", true, status_name(w.status));
  r.required("reason", w.reason).required("message", w.message);
  r.required("seed", w.seed).required("set_seeds", w.set_seeds).required("trials", w.trials);
  r.required("checks", w.checks).required("findings", w.findings);
  r.custom("unwritten", true, [&](const Json& v, const std::string& path) -> Status {
    std::map<std::string, std::int64_t> counts;  // JSON object order is kept below
    PTXB_RETURN_IF_ERROR(json_fields_detail::read_value(v, path, counts));
    for (const auto& [name, count] : v.items()) w.unwritten.emplace_back(name, counts.at(name));
    return ok_status();
  });
  // Optional: null when that side was not timed (a failure first, or no library reference).
  r.optional("candidate_timing", w.candidate_timing);
  r.optional("reference_timing", w.reference_timing);
  r.optional("speedup", w.speedup);
  r.optional("speedup_interval", w.speedup_interval);
  r.optional("reference_solo_timing", w.reference_solo_timing);
  r.optional("timing_interleave", w.timing_interleave);
  r.optional("energy", w.energy);
  r.optional("paper_timing", w.paper_timing);
  r.required("physical_floor_ms", w.physical_floor_ms);
  r.required("reference", w.reference).required("runner", w.runner);
  r.required("integrity", w.integrity).required("flags", w.flags);
  PTXB_RETURN_IF_ERROR(r.status());
  return w;
}

Json ProfiledCallRecord::to_json() const {
  return Json{{"call", call},
              {"calls", calls},
              {"warmup_calls", warmup_calls},
              {"launch_skip", launch_skip},
              {"kernels", kernels},
              {"scope", scope},
              {"gpu_time_ms", gpu_time_ms},
              {"timed_median_ms", timed_median_ms},
              {"ratio", ratio},
              {"band", {band_low, band_high}},
              {"matches", matches},
              {"mismatch", mismatch}};
}

Result<ProfiledCallRecord> ProfiledCallRecord::from_json(const Json& json) {
  ProfiledCallRecord p;
  FieldReader r(json);
  r.required("call", p.call).required("calls", p.calls).required("warmup_calls", p.warmup_calls);
  r.required("launch_skip", p.launch_skip).required("kernels", p.kernels);
  r.optional("scope", p.scope);  // absent before the focused plan: every kernel was profiled
  r.required("gpu_time_ms", p.gpu_time_ms).required("timed_median_ms", p.timed_median_ms);
  r.required("ratio", p.ratio).required("matches", p.matches).required("mismatch", p.mismatch);
  std::vector<double> band;
  r.required("band", band);
  PTXB_RETURN_IF_ERROR(r.status());
  if (band.size() != 2) return make_error("parse", "profiled_call.band: expected [low, high]");
  p.band_low = band[0];
  p.band_high = band[1];
  return p;
}

Json TargetInstructionCheck::to_json() const {
  Json j{{"verdict", verdict},
         {"reason", reason},
         {"static", static_counts},
         {"dynamic", dynamic ? dynamic->to_json() : Json(nullptr)},
         {"cost_ms", cost_ms}};
  // Absent, not null, without a profiled call: results from before the field read back as-is.
  if (profiled_call) j["profiled_call"] = profiled_call->to_json();
  if (!phases_ms.empty()) j["phases_ms"] = phases_ms;
  if (work_done) j["work_done"] = work_done->to_json();
  if (!work_done_note.empty()) j["work_done_note"] = work_done_note;
  if (!focus_note.empty()) j["focus_note"] = focus_note;
  if (!counts_from.empty()) j["counts_from"] = counts_from;
  if (!hint_metrics.empty()) {
    Json launches = Json::array();
    for (const NcuLaunchMetrics& m : hint_metrics)
      launches.push_back(Json{{"kernel", m.kernel}, {"values", m.values}});
    j["hint_metrics"] = std::move(launches);
  }
  return j;
}

Json SanitizerRecord::to_json() const {
  Json j = report.to_json();
  j["summary"] = summary;
  return j;
}

Result<SanitizerRecord> SanitizerRecord::from_json(const Json& json) {
  SanitizerRecord record;
  PTXB_ASSIGN_OR_RETURN(record.report, SanitizerReport::from_json(json));
  FieldReader r(json);
  r.required("summary", record.summary);
  PTXB_RETURN_IF_ERROR(r.status());
  return record;
}

Json RunnerInfo::to_json() const {
  return Json{{"device_name", device_name},
              {"cuda_runtime_version", cuda_runtime_version},
              {"cuda_driver_version", cuda_driver_version},
              {"cupti_version", cupti_version},
              {"l2_bytes", l2_bytes},
              {"l2_flush_bytes", l2_flush_bytes}};
}

Result<RunnerInfo> RunnerInfo::from_json(const Json& json) {
  RunnerInfo info;
  FieldReader r(json);
  r.required("device_name", info.device_name);
  r.required("cuda_runtime_version", info.cuda_runtime_version);
  r.required("cuda_driver_version", info.cuda_driver_version);
  r.required("cupti_version", info.cupti_version);
  r.required("l2_bytes", info.l2_bytes).required("l2_flush_bytes", info.l2_flush_bytes);
  PTXB_RETURN_IF_ERROR(r.status());
  return info;
}

Json EnvironmentRecord::to_json() const {
  Json j = gpu ? gpu->to_json() : Json::object();
  if (gpu_name) j["gpu_name"] = *gpu_name;
  if (sandbox) j["sandbox"] = *sandbox;
  if (runner) j["runner"] = runner->to_json();
  if (supervisor_log) j["supervisor_log"] = *supervisor_log;
  if (tools) j["tools"] = *tools;
  if (gpu_probe) j["gpu_probe"] = *gpu_probe;
  return j;
}

Result<EnvironmentRecord> EnvironmentRecord::from_json(const Json& json) {
  EnvironmentRecord env;
  FieldReader r(json);
  PTXB_RETURN_IF_ERROR(r.status());
  // The GPU's facts sit at the top level: present when the probe worked ("name" is one).
  if (r.has("name")) {
    PTXB_ASSIGN_OR_RETURN(env.gpu, DeviceFacts::from_json(json));
  }
  r.optional("gpu_name", env.gpu_name).optional("sandbox", env.sandbox);
  r.optional("runner", env.runner).optional("supervisor_log", env.supervisor_log);
  r.optional("tools", env.tools).optional("gpu_probe", env.gpu_probe);
  PTXB_RETURN_IF_ERROR(r.status());
  return env;
}

Result<TargetInstructionCheck> TargetInstructionCheck::from_json(const Json& j) {
  TargetInstructionCheck t;
  FieldReader r(j);
  r.required("verdict", t.verdict).required("reason", t.reason);
  r.required("static", t.static_counts).required("cost_ms", t.cost_ms);
  // Optional: null unless Nsight Compute ran and its output parsed.
  r.optional("dynamic", t.dynamic).optional("profiled_call", t.profiled_call);
  r.optional("phases_ms", t.phases_ms).optional("work_done", t.work_done);
  r.optional("work_done_note", t.work_done_note);
  r.optional("focus_note", t.focus_note);
  r.optional("counts_from", t.counts_from);
  PTXB_RETURN_IF_ERROR(r.status());
  if (j.contains("hint_metrics")) {
    if (!j["hint_metrics"].is_array())
      return make_error("parse", "target_instructions.hint_metrics: not a list");
    for (const Json& launch : j["hint_metrics"]) {
      NcuLaunchMetrics m;
      FieldReader lr(launch);
      lr.required("kernel", m.kernel).required("values", m.values);
      PTXB_RETURN_IF_ERROR(lr.status());
      t.hint_metrics.push_back(std::move(m));
    }
  }
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
  j["sanitizer"] = sanitizer ? sanitizer->to_json() : Json(nullptr);
  // Absent unless the debug stage ran: results recorded before it existed keep their JSON.
  if (debug) j["debug"] = debug->to_json();
  j["environment"] = environment.to_json();
  j["stage_ms"] = stage_list_to_json(stage_ms);
  j["options"] = options.to_json();
  j["harness_version"] = harness_version;
  j["timestamp"] = timestamp;
  j["compile"] = compile ? compile_result_to_json(*compile) : Json(nullptr);
  return j;
}

Result<EvalResult> EvalResult::from_json(const Json& j) {
  EvalResult r;
  FieldReader f(j);
  f.required("task", r.task).required("arch", r.arch);
  f.custom("status", true, status_name(r.status));
  f.required("reason", r.reason).required("message", r.message);
  f.required("gpu_skipped", r.gpu_skipped).required("gpu_skip_reason", r.gpu_skip_reason);
  f.required("workloads", r.workloads).required("target_instructions", r.target_instructions);
  // Optional: null unless compute-sanitizer ran.
  f.optional("sanitizer", r.sanitizer);
  f.optional("debug", r.debug);  // null unless the debug stage ran
  f.required("environment", r.environment);
  f.custom("stage_ms", true, [&](const Json& v, const std::string& path) -> Status {
    std::map<std::string, double> stages;  // JSON object order is kept below
    PTXB_RETURN_IF_ERROR(json_fields_detail::read_value(v, path, stages));
    for (const auto& [name, ms] : v.items()) r.stage_ms.emplace_back(name, stages.at(name));
    return ok_status();
  });
  f.required("options", r.options);
  f.required("harness_version", r.harness_version).required("timestamp", r.timestamp);
  // Optional: null in the supervisor's answer (the CLI owns the compile result).
  f.custom("compile", false, [&](const Json& v, const std::string& path) -> Status {
    if (v.is_null()) return ok_status();
    auto compile = compile_result_from_json(v, path);
    if (!compile.ok()) return compile.error();
    r.compile = std::move(compile).value();
    return ok_status();
  });
  PTXB_RETURN_IF_ERROR(f.status());
  return r;
}

std::vector<Trace> EvalResult::traces(const std::string& definition, const Json& workload,
                                      const std::string& solution) const {
  std::vector<Trace> out;
  for (const auto& w : workloads) {
    const EvaluationStatus status = schema_status(w.status);
    Json libs = Json::object();
    if (environment.runner) {
      libs["cuda_runtime"] = std::to_string(environment.runner->cuda_runtime_version);
      libs["cuda_driver"] = std::to_string(environment.runner->cuda_driver_version);
    }
    Json evaluation{
        {"status", evaluation_status_name(status)},
        {"environment", {{"hardware", environment.gpu_name.value_or("none")}, {"libs", libs}}},
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
                              {"environment", environment.to_json()},
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
              {"compile", compile_result_to_json(compile)},
              {"tasks_dirs", tasks_dirs},
              {"runner_path", runner_path},
              {"reference_library_path", reference_library_path},
              {"ncu_path", ncu_path},
              {"sanitizer_path", sanitizer_path},
              {"cuda_gdb_path", cuda_gdb_path},
              {"sandbox_path", sandbox_path},
              {"profile_save_dir", profile_save_dir}};
}

Result<SupervisorJob> SupervisorJob::from_json(const Json& json) {
  SupervisorJob job;
  FieldReader r(json);
  r.required("request", job.request);
  r.custom("compile", true, [&](const Json& v, const std::string& path) -> Status {
    auto compile = compile_result_from_json(v, path);
    if (!compile.ok()) return compile.error();
    job.compile = std::move(compile).value();
    return ok_status();
  });
  r.required("runner_path", job.runner_path);
  // Optional: none given; "" = not available (the stages that need them say so).
  r.optional("tasks_dirs", job.tasks_dirs);
  r.optional("reference_library_path", job.reference_library_path);
  r.optional("ncu_path", job.ncu_path).optional("sanitizer_path", job.sanitizer_path);
  r.optional("cuda_gdb_path", job.cuda_gdb_path);
  r.optional("sandbox_path", job.sandbox_path).optional("profile_save_dir", job.profile_save_dir);
  PTXB_RETURN_IF_ERROR(r.status());
  return job;
}

std::uint64_t derive_set_seed(std::uint64_t base_seed, const std::string& task, int index) {
  // SHA-256 of a canonical text: stable across compilers and platforms, unlike std::hash.
  const std::string digest =
      sha256_hex(fmt::format("ptxbench-set-seed/{}/{}/{}", base_seed, task, index));
  return std::stoull(digest.substr(0, 15), nullptr, 16);
}

}  // namespace ptxb
