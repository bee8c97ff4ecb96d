// The experiment runner behind `ptxbench run`: every trajectory of a plan through MiniPTXAgent,
// several at once, with two separate bounds: model calls in flight (concurrency.model) and GPU
// evaluations (concurrency.gpu, one per GPU). Trajectories already finished in the run
// directory are skipped and unfinished ones continue, so running the same plan again after an
// interruption or a crash resumes it.
#pragma once

#include <string>
#include <vector>

#include "agent/experiment.h"
#include "agent/mini_ptx_agent.h"
#include "agent/progress.h"
#include "agent/run_directory.h"
#include "agent/turn_evaluator.h"
#include "llm/model_client.h"
#include "packs/pack_library.h"
#include "tasks/registry.h"

namespace ptxb {

struct ExperimentServices {
  const TaskRegistry& registry;
  const PackLibrary& packs;
  std::vector<ModelClient*> models;  // one per plan.config.models entry, same order
  EvaluatorPool& evaluators;
  RunProgress& progress;
};

struct RunSummary {
  Json json;                  // what summary.json holds
  std::string table;          // one row per model × task × variant, for stdout
  int unfinished = 0;         // trajectories stopped by a model/evaluation/I/O failure (resumable)
  int gpu_skipped_turns = 0;  // turns whose GPU stages were skipped (no GPU here)
};

// The prompts of every (task, variant) in the plan, keyed "task\nvariant"; fails on a variant
// whose pack does not compose for a task's architecture.
Result<std::map<std::string, TaskPrompt>> build_task_prompts(const ExperimentPlan& plan,
                                                             const TaskRegistry& registry,
                                                             const PackLibrary& packs);

// The prompt options' guidance and notes for every task of the plan (prompt_options.h).
Result<PromptAids> load_prompt_aids(const ExperimentPlan& plan);

Result<RunSummary> run_experiment(const ExperimentPlan& plan, RunDirectory& dir,
                                  ExperimentServices& services);

// Summary of the trajectories of `plan` in the run directory `root` as it stands (every turn
// file and the trajectory files), as summary.json and as a table. Reads only: a scale-out
// coordinator summarizes the shards' work without locking the directory.
Result<RunSummary> summarize_run(const ExperimentPlan& plan, const std::string& root);

}  // namespace ptxb
