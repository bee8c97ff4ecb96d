// `ptxbench fixit repair`: a repair teacher fixes each mined failure (failure_mining.h) in a short
// multi-turn loop, through the same agent loop, evaluator and trajectory format as `ptxbench
// run` (MiniPtxAgent with TaskPrompt::opening = the failing kernel and its exact feedback plus
// the repair instruction). The loop stops at the first turn that passes with dynamic_present
// target instructions and a speedup >= target_speedup (the agent's early stop); that kernel is
// then evaluated once more on fresh inputs (another seed), and kept only if it passes again
// with dynamic_present.
//
// Work directory (the one `fixit mine --out` wrote):
//   failures.jsonl          the mined failures (input)
//   repairs/                a `ptxbench run` directory: plan.json, turns.jsonl, trajectories/,
//                           turns/ (one trajectory per failure, id fixit__<failure id>)
//   repaired/<id>.cu        each kept repair's kernel
//   repairs.jsonl           one line per decided failure: kept, or dropped with its reason
//                           (not_repaired, context_window, verification_failed); the commit point
// A failure whose trajectory stopped on a teacher or evaluator failure (after the client's own
// retries) gets no line: it is reported as unfinished with its reason, and the next run of the
// same command continues it from its first unfinished turn. Nothing decided is redone.
#pragma once

#include <string>
#include <vector>

#include "adapt/failure_mining.h"
#include "agent/progress.h"
#include "agent/turn_evaluator.h"
#include "eval/eval_types.h"
#include "llm/model_client.h"
#include "llm/model_config.h"

namespace ptxb::adapt {

// The user message after the failing kernel's feedback ("fix with the minimal change").
inline constexpr const char* kRepairInstruction =
    "Fix this kernel with the minimal change: keep its design and its target instructions, "
    "correct what the feedback above reports, and answer with the complete fixed kernel in one "
    "```cuda block.";

struct RepairOptions {
  ModelConfig teacher;
  int turns = 5;
  double target_speedup = 0;  // the repair must reach it (besides PASSED + dynamic_present)
  EvalOptions eval;
  int model_concurrency = 4;  // repairs in flight (each waits for a GPU slot to evaluate)
};

struct RepairServices {
  ModelClient& teacher;
  EvaluatorPool& evaluators;
  RunProgress& progress;
};

struct RepairSummary {
  int kept = 0, dropped = 0, already_decided = 0;
  std::map<std::string, int> dropped_by_reason;
  std::vector<std::string> unfinished;  // "id: exit_status: detail", resumable
  Json to_json() const;
};

// The trajectory id of a failure's repair in WORK/repairs.
std::string repair_trajectory_id(const MinedFailure& failure);

Result<RepairSummary> run_repairs(const std::vector<MinedFailure>& failures,
                                  const RepairOptions& options, const std::string& work_dir,
                                  RepairServices& services);

}  // namespace ptxb::adapt
