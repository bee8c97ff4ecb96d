// FlashInfer-Trace Trace: one evaluation of a solution on a workload (design.md §3.1). A line
// without solution and evaluation is a "workload trace", the form of workloads/*.jsonl.
//
// evaluation.status stays within the schema's seven values so other tools read our traces;
// PTXBench's finer verdict lives in the extension object evaluation.ptxbench {status, reason}.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/json_io.h"
#include "core/result.h"
#include "trace/diagnostics.h"
#include "trace/workload.h"

namespace ptxb {

// The flashinfer-bench EvaluationStatus values.
enum class EvaluationStatus {
  kPassed,
  kIncorrectShape,
  kIncorrectNumerical,
  kIncorrectDtype,
  kRuntimeError,
  kCompileError,
  kTimeout,
};

// PTXBench's verdicts: the seven schema values plus finer failure kinds.
enum class PtxbStatus {
  kPassed,
  kIncorrectShape,
  kIncorrectNumerical,
  kIncorrectDtype,
  kRuntimeError,
  kCompileError,
  kTimeout,
  kForbidden,         // banned header/symbol/module (design.md §3.2, §3.3)
  kMemoryError,       // sanitizer finding or illegal address
  kRewardHack,        // foreign stream, out-of-window work, below the physical floor (§3.4)
  kInvalidReference,  // the reference itself produced NaN/Inf (§3.5)
  kInfraError,        // the harness failed, not the candidate
};

std::string_view evaluation_status_name(EvaluationStatus status);
std::optional<EvaluationStatus> parse_evaluation_status(std::string_view name);
std::string_view ptxb_status_name(PtxbStatus status);
std::optional<PtxbStatus> parse_ptxb_status(std::string_view name);
// FORBIDDEN -> COMPILE_ERROR; MEMORY_ERROR, REWARD_HACK, INVALID_REFERENCE, INFRA_ERROR ->
// RUNTIME_ERROR; the seven schema values map to themselves.
EvaluationStatus schema_status(PtxbStatus status);

struct Correctness {
  double max_absolute_error = 0;
  double max_relative_error = 0;
};

struct Performance {
  double latency_ms = 0;
  double reference_latency_ms = 0;
  double speedup_factor = 0;
};

struct Evaluation {
  EvaluationStatus status = EvaluationStatus::kPassed;
  std::string hardware;   // environment.hardware
  std::string timestamp;  // ISO 8601
  std::string log;
  std::optional<Correctness> correctness;
  std::optional<Performance> performance;
  std::optional<PtxbStatus> ptxbench_status;  // evaluation.ptxbench.status
  std::string ptxbench_reason;                // evaluation.ptxbench.reason
};

struct Trace {
  std::string definition;
  Workload workload;
  std::optional<std::string> solution;
  std::optional<Evaluation> evaluation;
  Json raw;

  bool is_workload_trace() const { return !solution && !evaluation; }
};

Trace parse_trace(const Json& document, Diagnostics& diagnostics);
Result<Trace> parse_trace(const Json& document, const std::string& origin);
Json trace_to_json(const Trace& trace);

}  // namespace ptxb
