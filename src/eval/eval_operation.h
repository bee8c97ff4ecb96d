// What an evaluation is asked to do (docs/service.md "Operations"): the paper's service exposes
// correctness, sanitizing and latency/target-instruction profiling as separate operations.
//
//   evaluate  the whole pipeline: correctness, timing with the integrity checks, and the
//             options' sanitizer gate and Nsight Compute check (the default)
//   sanitize  the compute-sanitizer gate, then the correctness trials; no reference, no timing,
//             no Nsight Compute (the supervisor stops after correctness: supervisor/evaluator.cc)
//   profile   the evaluation with the Nsight Compute target-instruction check forced on. It runs
//             every stage of `evaluate`: the profiled call is one of the timed sequence and is
//             judged against the timed calls (supervisor/profile_plan.h), so timing cannot be
//             left out.
//   debug     the correctness trials as in sanitize (no gate unless asked for), with the debug
//             stage on: a RUNTIME_ERROR, MEMORY_ERROR or TIMEOUT comes back with compute-
//             sanitizer's fault and cuda-gdb's reading of a CUDA core dump (docs/eval.md
//             "Debug stage"); no reference timing, no Nsight Compute
//
// One mapping for every front end (`ptxbench eval --operation`, the service, the remote
// clients), so an operation means the same stages wherever it is asked for.
#pragma once

#include <optional>
#include <string_view>

#include "core/result.h"

namespace ptxb {

struct EvalOptions;

enum class EvalOperation { kEvaluate, kSanitize, kProfile, kDebug };

std::string_view eval_operation_name(EvalOperation operation);
std::optional<EvalOperation> parse_eval_operation(std::string_view name);
// "evaluate, sanitize, profile, debug": for messages.
std::string_view eval_operation_names();

// Sets the options the operation implies (sanitize: the gate on, Nsight Compute off; profile:
// Nsight Compute on; debug: the debug stage on, Nsight Compute off). Options that contradict the
// operation are refused (code "invalid") rather than silently overridden: `ncu: false` with
// profile, `energy` with sanitize (nothing is timed). Applying it twice changes nothing, so a
// client and the service may both apply it.
Status apply_operation(EvalOperation operation, EvalOptions& options);

}  // namespace ptxb
