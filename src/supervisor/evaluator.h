// The trusted supervisor's evaluation of one compiled candidate (design.md §3.3–§3.6): sanitizer
// gate, reference timing, correctness trials, full-write and input checks, timed samples with the
// integrity tripwires, and the dynamic target-instruction check.
//
// It never fails as a function: every problem (the candidate's or the harness's) becomes a
// status with a machine-readable reason in the EvalResult. The GPU, the runner processes and the
// profilers are reached only through eval_backend.h and ProcessRunner, so each status path is
// tested with fakes. run() sequences the stages of eval_stages.h (one file each, stage_*.cc).
#pragma once

#include <functional>

#include <string>

#include "compile/compile_types.h"
#include "core/process.h"
#include "eval/eval_types.h"
#include "supervisor/eval_backend.h"
#include "tasks/task.h"

namespace ptxb {

class Evaluator {
 public:
  // `secret` draws the evaluation's secret (which timed calls are verified, poison patterns,
  // batch inputs): the OS's randomness unless a test fixes it.
  using SecretSource = std::function<std::uint64_t()>;
  Evaluator(EvalDevice& device, RunnerLauncher& launcher, ProcessRunner& tools,
            SecretSource secret = os_secret)
      : device_(device), launcher_(launcher), tools_(tools), secret_(std::move(secret)) {}
  static std::uint64_t os_secret();

  // `compile` must be OK (the CLI stops earlier otherwise). Fills every field of the result
  // except `compile`, which the caller owns.
  EvalResult run(const SupervisorJob& job, const Task& task, const CompileResult& compile);

 private:
  EvalDevice& device_;
  RunnerLauncher& launcher_;
  ProcessRunner& tools_;
  SecretSource secret_;
};

// Whether a task's reference is the backward pass (one full-size trial, design.md §3.5).
bool is_backward_task(const Task& task);
// "cudnn_sdpa_fwd:causal" style selector for the reference library.
std::string reference_selector(const Task& task);
// The runner's --params-json for one self-contained call on the task's workload (profilers):
// random inputs, zeroed outputs, by-value scalars and safetensors inputs as the workload gives
// them (an error when a scalar has no numeric value or a safetensors file cannot be read).
Result<Json> self_contained_params(const Task& task, const std::string& signature,
                                   std::uint64_t seed);

}  // namespace ptxb
