// What people and models read about an evaluation (design.md §5): the per-turn feedback text and
// the CLI's short table. Both are rendered from the EvalResult alone, so the agent, the CLI and
// the service show the same facts. Runner output appears only as a log, never as a verdict.
#pragma once

#include <string>
#include <vector>

#include "analysis/ncu_hints.h"
#include "eval/eval_types.h"

namespace ptxb {

// Prompt options of the feedback text. Defaults are the paper protocol.
struct FeedbackOptions {
  std::size_t log_cap_bytes = 6000;
  // "Profiler hints in words" (opt-in, for the ablation; off in the paper protocol): for a
  // PASSED evaluation, a "## Profiler hints" section of 3–5 sentences from the profiled call's
  // kProfilerHintMetrics (analysis/ncu_hints.h; the evaluation collects them when its
  // EvalOptions::profiler_hints is set) and ptxas's spills.
  bool profiler_hints = false;
  // Metrics from elsewhere (tests, a replayed profile); empty: the result's
  // target_instructions.hint_metrics.
  std::vector<NcuLaunchMetrics> profile;
};

// Feedback for the next turn: compile log with ptxas usage, sanitizer findings, per-workload
// status with errors or latencies and speedup, the target-instruction finding, and a next step.
std::string render_feedback(const EvalResult& result, std::size_t log_cap_bytes = 6000);
std::string render_feedback(const EvalResult& result, const FeedbackOptions& options);

// A few lines for a terminal.
std::string render_summary(const EvalResult& result);

}  // namespace ptxb
