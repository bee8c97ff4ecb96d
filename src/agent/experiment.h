// An experiment: models × tasks × prompt variants × trajectories, each trajectory T turns
// (design.md §3.7: the paper runs 3 variants × 4 trajectories × 8 turns per model and task).
//
// ExperimentConfig is what `ptxbench run --config EXP.json` reads (flags override it); the plan
// expands it into trajectories with stable ids, derived only from (model, task, variant, index),
// so a resumed run finds its own trajectories again. Format: docs/agent.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/prompt_options.h"
#include "core/json_io.h"
#include "core/result.h"
#include "eval/eval_types.h"
#include "llm/model_config.h"
#include "metrics/turn_record.h"
#include "packs/pack_library.h"
#include "tasks/registry.h"

namespace ptxb {

struct Concurrency {
  int model = 8;  // model calls in flight at once, over all models
  int gpu = 1;    // GPU evaluation slots: one evaluation at a time per GPU (slot i: GPU i)
};

struct ExperimentConfig {
  std::vector<ModelConfig> models;
  std::string suite;                  // a suite name, or
  std::vector<std::string> tasks;     // task names (exactly one of the two)
  std::vector<std::string> variants;  // prompt variants for every task; empty: each task's own
  int trajectories = 4;
  int turns = 8;
  Concurrency concurrency;
  // Stop a trajectory at the first correct turn whose target instructions executed and whose
  // speedup reaches this. Off (nullopt) in the paper's protocol.
  std::optional<double> early_stop_speedup;
  EvalOptions eval;
  std::string packs_dir;  // "" = default_packs_dir()
  // Guidance, retrieval and profiler hints (prompt_options.h); all off in the paper protocol.
  PromptOptions prompt;

  // Errors name the JSON path ("$.models[1].api: ...") and `origin` (the file).
  static Result<ExperimentConfig> from_json(const Json& json, const std::string& origin);
  Json to_json() const;  // no secrets: models carry the key's variable name only
};

struct TrajectoryPlan {
  std::string id;  // stable: MODEL__TASK__VARIANT__tINDEX, file-name safe
  std::size_t model_index = 0;
  std::string model;  // ModelConfig::name
  std::string task;
  std::string variant;
  int index = 0;  // 0-based within (model, task, variant)
  TrajectoryKey key;
  std::string workload_name;

  Json to_json() const;  // as declared in trajectories.jsonl (key fields + workload_name + id)
};

struct ExperimentPlan {
  ExperimentConfig config;
  std::vector<TrajectoryPlan> trajectories;

  // What decides the results (models' request settings, tasks, variants, counts, early stop,
  // evaluation options, prompt options when any is on); endpoints, timeouts, retries and
  // concurrency may change on resume. Default prompt options are left out, so run directories
  // made before they existed still resume.
  Json identity() const;
  Json to_json() const;  // plan.json
};

// File-name-safe form of a name: [A-Za-z0-9._+-] kept, anything else '_'.
std::string slug(const std::string& text);
std::string trajectory_id(const std::string& model, const std::string& task,
                          const std::string& variant, int index);

// Expands the config: checks that tasks, suite and variant tags exist and that ids are unique.
Result<ExperimentPlan> make_plan(const ExperimentConfig& config, const TaskRegistry& registry,
                                 const PackLibrary& packs);

// "" when equal, else the first difference as "$.path: A vs B".
std::string first_json_difference(const Json& a, const Json& b, const std::string& path = "$");

}  // namespace ptxb
