// One whole evaluation as the CLI, the agent and the service run it: compile in this process
// (no candidate code runs here), then the GPU stages in the trusted supervisor process
// (ptxbench-supervisor), which spawns the candidate's runner. Without a GPU, or without the
// supervisor binary, the GPU stages are reported as skipped with the reason.
#pragma once

#include <string>
#include <vector>

#include "compile/compile_types.h"
#include "compile/toolchain.h"
#include "core/process.h"
#include "eval/eval_types.h"
#include "tasks/registry.h"

namespace ptxb {

// Where the trusted binaries and the profilers are. Defaults: the helpers folder
// (core/install_layout.h: $PTXBENCH_LIBEXEC_DIR, the executable's folder in a build tree,
// <prefix>/libexec/ptxbench) for ptxbench-supervisor, ptxbench-runner,
// libptxbench_reference.so, ptxbench-sandbox; ncu, compute-sanitizer and cuda-gdb on PATH or in
// the CUDA toolkit's bin/.
struct EvalTools {
  std::string supervisor_path;
  std::string runner_path;
  std::string reference_library_path;
  std::string ncu_path;
  std::string sanitizer_path;
  std::string cuda_gdb_path;  // the debug stage's core-dump reader
  std::string sandbox_path;
  // Non-empty: the supervisor writes the profiled call's Nsight Compute pages there
  // (`eval --save-profile`). The operator's choice, never a request's: a service leaves it empty.
  std::string profile_save_dir;
  // Non-empty: the GPU stages are never run, whatever the machine has, and this is the reason
  // recorded (`ptxbench run --compile-only`).
  std::string gpu_disabled_reason;
  static EvalTools discover();
  Json to_json() const;
};

// Per-evaluation cap on the supervisor (design.md §3.4 "a documented cap"): sanitizer (300 s) +
// reference and candidate timing (2 × 15 s budgets plus per-call limits) + ncu (120 s), rounded
// up; a supervisor still running after it is killed and the evaluation is an INFRA_ERROR.
inline constexpr double kSupervisorTimeoutSeconds = 900.0;

// Why the GPU stages of an evaluation with `tools` for `arch` would be skipped here ("" when
// they would run): disabled, no GPU, no supervisor, an architecture this build cannot run.
std::string gpu_stages_unavailable(const EvalTools& tools, const std::string& arch = "sm_90a");

// The compile request evaluate() builds for `request` on `task` (options from the request, the
// task's `run` signature); a client that compiles for a service builds the same one.
CompileRequest make_compile_request(const EvalRequest& request, const Task& task);

// Runs the evaluation. Errors only for what the caller got wrong (unknown task, unreadable
// tools); everything about the candidate is a status in the result.
Result<EvalResult> evaluate(const EvalRequest& request, const TaskRegistry& registry,
                            const std::vector<std::string>& tasks_dirs, const EvalTools& tools,
                            ProcessRunner& processes);

}  // namespace ptxb
