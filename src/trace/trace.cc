#include "trace/trace.h"

#include <array>
#include <utility>

#include "trace/schema_json.h"

namespace ptxb {
namespace {

constexpr std::array<std::pair<EvaluationStatus, std::string_view>, 7> kSchemaStatuses = {{
    {EvaluationStatus::kPassed, "PASSED"},
    {EvaluationStatus::kIncorrectShape, "INCORRECT_SHAPE"},
    {EvaluationStatus::kIncorrectNumerical, "INCORRECT_NUMERICAL"},
    {EvaluationStatus::kIncorrectDtype, "INCORRECT_DTYPE"},
    {EvaluationStatus::kRuntimeError, "RUNTIME_ERROR"},
    {EvaluationStatus::kCompileError, "COMPILE_ERROR"},
    {EvaluationStatus::kTimeout, "TIMEOUT"},
}};

struct PtxbStatusInfo {
  PtxbStatus status;
  std::string_view name;
  EvaluationStatus schema;
};

constexpr std::array<PtxbStatusInfo, 12> kPtxbStatuses = {{
    {PtxbStatus::kPassed, "PASSED", EvaluationStatus::kPassed},
    {PtxbStatus::kIncorrectShape, "INCORRECT_SHAPE", EvaluationStatus::kIncorrectShape},
    {PtxbStatus::kIncorrectNumerical, "INCORRECT_NUMERICAL", EvaluationStatus::kIncorrectNumerical},
    {PtxbStatus::kIncorrectDtype, "INCORRECT_DTYPE", EvaluationStatus::kIncorrectDtype},
    {PtxbStatus::kRuntimeError, "RUNTIME_ERROR", EvaluationStatus::kRuntimeError},
    {PtxbStatus::kCompileError, "COMPILE_ERROR", EvaluationStatus::kCompileError},
    {PtxbStatus::kTimeout, "TIMEOUT", EvaluationStatus::kTimeout},
    // A forbidden kernel never reaches the GPU: to schema readers it did not build.
    {PtxbStatus::kForbidden, "FORBIDDEN", EvaluationStatus::kCompileError},
    {PtxbStatus::kMemoryError, "MEMORY_ERROR", EvaluationStatus::kRuntimeError},
    {PtxbStatus::kRewardHack, "REWARD_HACK", EvaluationStatus::kRuntimeError},
    {PtxbStatus::kInvalidReference, "INVALID_REFERENCE", EvaluationStatus::kRuntimeError},
    {PtxbStatus::kInfraError, "INFRA_ERROR", EvaluationStatus::kRuntimeError},
}};

std::optional<Correctness> parse_correctness(const Json& object, const std::string& path,
                                             Diagnostics& diagnostics) {
  if (!check_object(object, path, diagnostics)) return std::nullopt;
  Correctness correctness;
  // Both fields default to 0 in the schema.
  if (auto it = object.find("max_absolute_error"); it != object.end())
    correctness.max_absolute_error =
        as_non_negative_number(*it, json_path_key(path, "max_absolute_error"), diagnostics)
            .value_or(0);
  if (auto it = object.find("max_relative_error"); it != object.end())
    correctness.max_relative_error =
        as_non_negative_number(*it, json_path_key(path, "max_relative_error"), diagnostics)
            .value_or(0);
  return correctness;
}

std::optional<Performance> parse_performance(const Json& object, const std::string& path,
                                             Diagnostics& diagnostics) {
  if (!check_object(object, path, diagnostics)) return std::nullopt;
  Performance performance;
  const std::pair<const char*, double*> fields[] = {
      {"latency_ms", &performance.latency_ms},
      {"reference_latency_ms", &performance.reference_latency_ms},
      {"speedup_factor", &performance.speedup_factor}};
  for (const auto& [key, target] : fields)
    if (auto it = object.find(key); it != object.end())
      *target = as_non_negative_number(*it, json_path_key(path, key), diagnostics).value_or(0);
  return performance;
}

std::optional<Evaluation> parse_evaluation(const Json& object, Diagnostics& diagnostics) {
  const std::string path = "$.evaluation";
  if (!check_object(object, path, diagnostics)) return std::nullopt;
  Evaluation evaluation;
  if (auto status = require_string(object, "status", path, diagnostics)) {
    if (auto parsed = parse_evaluation_status(*status))
      evaluation.status = *parsed;
    else
      diagnostics.error(json_path_key(path, "status"),
                        "unknown status '" + *status +
                            "' (expected PASSED, INCORRECT_SHAPE, INCORRECT_NUMERICAL, "
                            "INCORRECT_DTYPE, RUNTIME_ERROR, COMPILE_ERROR or TIMEOUT; "
                            "PTXBench's finer statuses go in $.evaluation.ptxbench.status)");
  }
  if (const Json* environment = require_field(object, "environment", path, diagnostics)) {
    const std::string env_path = json_path_key(path, "environment");
    if (check_object(*environment, env_path, diagnostics)) {
      evaluation.hardware =
          require_string(*environment, "hardware", env_path, diagnostics).value_or("");
      if (auto libs = environment->find("libs"); libs != environment->end()) {
        const std::string libs_path = json_path_key(env_path, "libs");
        if (check_object(*libs, libs_path, diagnostics))
          for (const auto& [name, version] : libs->items())
            if (!version.is_string())
              diagnostics.error(json_path_key(libs_path, name),
                                "expected a version string, got " + json_type_description(version));
      }
    }
  }
  evaluation.timestamp = require_string(object, "timestamp", path, diagnostics).value_or("");
  evaluation.log = optional_string(object, "log", path, diagnostics).value_or("");
  if (auto it = object.find("correctness"); it != object.end() && !it->is_null())
    evaluation.correctness =
        parse_correctness(*it, json_path_key(path, "correctness"), diagnostics);
  if (auto it = object.find("performance"); it != object.end() && !it->is_null())
    evaluation.performance =
        parse_performance(*it, json_path_key(path, "performance"), diagnostics);

  // The schema ties the metric blocks to the status.
  const auto status_name = std::string(evaluation_status_name(evaluation.status));
  const bool needs_correctness = evaluation.status == EvaluationStatus::kPassed ||
                                 evaluation.status == EvaluationStatus::kIncorrectNumerical;
  const bool needs_performance = evaluation.status == EvaluationStatus::kPassed;
  if (needs_correctness && !evaluation.correctness)
    diagnostics.error(path, "status " + status_name + " requires 'correctness'");
  if (!needs_correctness && evaluation.correctness)
    diagnostics.error(json_path_key(path, "correctness"),
                      "must be absent when status is " + status_name);
  if (needs_performance && !evaluation.performance)
    diagnostics.error(path, "status " + status_name + " requires 'performance'");
  if (!needs_performance && evaluation.performance)
    diagnostics.error(json_path_key(path, "performance"),
                      "must be absent when status is " + status_name);

  if (auto it = object.find("ptxbench"); it != object.end()) {
    const std::string ext_path = json_path_key(path, "ptxbench");
    if (check_object(*it, ext_path, diagnostics)) {
      if (auto status = require_string(*it, "status", ext_path, diagnostics)) {
        auto parsed = parse_ptxb_status(*status);
        if (!parsed) {
          diagnostics.error(json_path_key(ext_path, "status"),
                            "unknown PTXBench status '" + *status + "'");
        } else {
          evaluation.ptxbench_status = *parsed;
          if (schema_status(*parsed) != evaluation.status)
            diagnostics.error(json_path_key(ext_path, "status"),
                              *status + " maps to schema status " +
                                  std::string(evaluation_status_name(schema_status(*parsed))) +
                                  ", but $.evaluation.status is " + status_name);
        }
      }
      evaluation.ptxbench_reason =
          optional_string(*it, "reason", ext_path, diagnostics).value_or("");
    }
  }
  return evaluation;
}

}  // namespace

std::string_view evaluation_status_name(EvaluationStatus status) {
  for (const auto& [value, name] : kSchemaStatuses)
    if (value == status) return name;
  return "RUNTIME_ERROR";
}

std::optional<EvaluationStatus> parse_evaluation_status(std::string_view name) {
  for (const auto& [value, spelled] : kSchemaStatuses)
    if (spelled == name) return value;
  return std::nullopt;
}

std::string_view ptxb_status_name(PtxbStatus status) {
  for (const auto& info : kPtxbStatuses)
    if (info.status == status) return info.name;
  return "INFRA_ERROR";
}

std::optional<PtxbStatus> parse_ptxb_status(std::string_view name) {
  for (const auto& info : kPtxbStatuses)
    if (info.name == name) return info.status;
  return std::nullopt;
}

EvaluationStatus schema_status(PtxbStatus status) {
  for (const auto& info : kPtxbStatuses)
    if (info.status == status) return info.schema;
  return EvaluationStatus::kRuntimeError;
}

Trace parse_trace(const Json& document, Diagnostics& diagnostics) {
  Trace trace;
  if (!check_object(document, "$", diagnostics)) return trace;
  trace.raw = document;
  trace.definition = require_string(document, "definition", "$", diagnostics).value_or("");
  if (const Json* workload = require_field(document, "workload", "$", diagnostics))
    trace.workload = parse_workload(*workload, "$.workload", diagnostics);
  if (auto it = document.find("solution"); it != document.end() && !it->is_null()) {
    if (it->is_string() && !it->get<std::string>().empty())
      trace.solution = it->get<std::string>();
    else
      diagnostics.error("$.solution", "expected a solution name (non-empty string), got " +
                                          json_type_description(*it));
  }
  if (auto it = document.find("evaluation"); it != document.end() && !it->is_null())
    trace.evaluation = parse_evaluation(*it, diagnostics);
  if (trace.evaluation && !trace.solution && !document.contains("solution"))
    diagnostics.error("$", "a trace with an evaluation must name its 'solution'");
  return trace;
}

Result<Trace> parse_trace(const Json& document, const std::string& origin) {
  Diagnostics diagnostics(origin);
  Trace trace = parse_trace(document, diagnostics);
  if (!diagnostics.ok()) return diagnostics.to_error();
  return trace;
}

Json trace_to_json(const Trace& trace) {
  return trace.raw;
}

}  // namespace ptxb
