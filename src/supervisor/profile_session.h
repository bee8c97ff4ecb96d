// Drives the profiled runner (design.md §3.6): a second candidate runner started like the timed
// one but under Nsight Compute (supervisor/profile_plan.h), brought up with the same hello, load
// and bind (the same IPC buffers), then called like the timing stage calls: the warm-up, then
// the calls among which ncu profiles the chosen one, each on the next set in rotation with the
// L2 flushed first. The runner and ncu print into one capped log; the report follows the
// markers of profile_plan.h.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "supervisor/eval_context.h"
#include "supervisor/profile_plan.h"

namespace ptxb {

struct ProfiledRun {
  // The sandbox stopped the runner or the tool: this replaces the evaluation's verdict.
  std::optional<Finding> sandbox;
  // Why the run gave no report (ncu or the runner failed, a limit passed): the target verdict
  // is then "unknown" with this reason. Empty on success.
  std::string failure;
  std::string output;  // the runner's and ncu's output, ncu's pages after the markers
  // Supervisor's clock: "start" (ncu up, the runner bound), "calls" (warm-up and profiled
  // calls), "report" (shutdown until ncu's pages are printed: replay results, export, imports).
  std::map<std::string, double> phases_ms;
};

// Runs the plan within options.ncu_timeout_seconds (start-up, calls and ncu's report together).
ProfiledRun run_profiled_calls(EvalContext& ctx, const ProfilePlan& plan);

}  // namespace ptxb
