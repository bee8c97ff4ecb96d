#include "agent/experiment_runner.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <thread>

#include "abi/signature.h"
#include "agent/task_prompt.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/strings.h"

namespace ptxb {
namespace {

std::string prompt_key(const std::string& task, const std::string& variant) {
  return task + "\n" + variant;
}

struct GroupSummary {
  std::string model, task, variant;
  int trajectories = 0, finished = 0, turns = 0, correct = 0, correct_with_target = 0;
  std::optional<double> best_speedup;
  std::map<std::string, int> statuses;
  std::map<std::string, int> exit_statuses;
};

}  // namespace

Result<std::map<std::string, TaskPrompt>> build_task_prompts(const ExperimentPlan& plan,
                                                             const TaskRegistry& registry,
                                                             const PackLibrary& packs) {
  std::map<std::string, TaskPrompt> prompts;
  for (const auto& t : plan.trajectories) {
    const std::string key = prompt_key(t.task, t.variant);
    if (prompts.count(key)) continue;
    PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(t.task));
    auto prompt = build_task_prompt(packs, *task, t.variant);
    if (!prompt.ok())
      return prompt.error().with_context(fmt::format("task {}, variant {}", t.task, t.variant));
    prompts[key] = TaskPrompt{t.task, prompt->system, prompt->first_user,
                              make_run_signature(task->definition).declaration()};
  }
  return prompts;
}

Result<PromptAids> load_prompt_aids(const ExperimentPlan& plan) {
  std::vector<std::string> tasks;
  for (const auto& t : plan.trajectories)
    if (std::find(tasks.begin(), tasks.end(), t.task) == tasks.end()) tasks.push_back(t.task);
  return PromptAids::load(plan.config.prompt, tasks);
}

Result<RunSummary> run_experiment(const ExperimentPlan& plan, RunDirectory& dir,
                                  ExperimentServices& services) {
  if (services.models.size() != plan.config.models.size())
    return make_error("internal", "{} model clients for {} models", services.models.size(),
                      plan.config.models.size());
  PTXB_ASSIGN_OR_RETURN(auto prompts, build_task_prompts(plan, services.registry, services.packs));
  PTXB_ASSIGN_OR_RETURN(const PromptAids aids, load_prompt_aids(plan));

  Semaphore model_slots(plan.config.concurrency.model);
  MiniPtxAgent agent(
      plan.config, AgentServices{dir, model_slots, services.evaluators, services.progress, &aids});
  services.progress.begin(plan.trajectories.size() * static_cast<std::size_t>(plan.config.turns),
                          dir.finished_turn_count(plan));

  // Trajectories are sequential inside (turn t+1 needs turn t's feedback) and independent of
  // each other: enough workers to keep every model slot and every GPU slot busy.
  const std::size_t workers = std::min<std::size_t>(
      plan.trajectories.size(),
      static_cast<std::size_t>(plan.config.concurrency.model + plan.config.concurrency.gpu));
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < plan.trajectories.size(); i = next++) {
        if (interrupted()) break;  // core/interrupt.h: start nothing new
        const TrajectoryPlan& t = plan.trajectories[i];
        agent.run(t, plan.config.models[t.model_index], *services.models[t.model_index],
                  prompts.at(prompt_key(t.task, t.variant)));
      }
    });
  for (auto& thread : threads) thread.join();
  services.progress.end();

  PTXB_ASSIGN_OR_RETURN(RunSummary summary, summarize_run(plan, dir.root()));
  PTXB_RETURN_IF_ERROR(dir.write_summary(summary.json));
  return summary;
}

Result<RunSummary> summarize_run(const ExperimentPlan& plan, const std::string& root) {
  // Every turn file (a sharded run has one per shard), each up to its last committed line.
  std::vector<TurnRecord> records;
  PTXB_ASSIGN_OR_RETURN(const auto files, run_turn_files(root));
  for (const std::string& path : files) {
    PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, 64u << 20));
    text.resize(committed_jsonl_length(text));
    PTXB_ASSIGN_OR_RETURN(auto part, parse_turns_jsonl(text, path));
    records.insert(records.end(), part.begin(), part.end());
  }
  std::map<std::string, std::vector<const TurnRecord*>> by_trajectory;
  for (const auto& r : records) by_trajectory[r.key.trajectory].push_back(&r);

  RunSummary summary;
  std::vector<GroupSummary> groups;
  std::map<std::string, std::size_t> group_index;
  std::map<std::string, int> exit_counts, status_counts;
  Json incomplete = Json::array();
  std::size_t recorded_turns = 0;  // of this plan's trajectories (a shard's, when sharded)
  for (const auto& t : plan.trajectories) {
    const std::string gkey = t.model + "\n" + t.task + "\n" + t.variant;
    if (!group_index.count(gkey)) {
      group_index[gkey] = groups.size();
      groups.push_back(GroupSummary{t.model, t.task, t.variant});
    }
    GroupSummary& g = groups[group_index[gkey]];
    ++g.trajectories;
    std::string exit_status = "not_started", detail;
    PTXB_ASSIGN_OR_RETURN(auto doc, read_trajectory_file(root, t.id));
    if (doc) {
      const Json& info = (*doc)["info"];
      exit_status = info.is_object() && info.contains("exit_status")
                        ? info["exit_status"].get<std::string>()
                        : "running";
      if (info.is_object() && info.contains("ptxbench") && info["ptxbench"].contains("end_detail"))
        detail = info["ptxbench"]["end_detail"].get<std::string>();
    }
    ++g.exit_statuses[exit_status];
    ++exit_counts[exit_status];
    if (is_final_exit_status(exit_status)) {
      ++g.finished;
    } else {
      ++summary.unfinished;
      incomplete.push_back(Json{{"id", t.id}, {"exit_status", exit_status}, {"detail", detail}});
    }
    for (const TurnRecord* r : by_trajectory[t.id]) {
      ++g.turns;
      ++recorded_turns;
      ++g.statuses[r->status_name()];
      ++status_counts[r->status_name()];
      if (r->status == PtxbStatus::kInfraError && r->reason == "gpu_skipped")
        ++summary.gpu_skipped_turns;
      if (!r->correct()) continue;
      ++g.correct;
      if (r->target_instructions == std::string(kInstDynamicPresent)) ++g.correct_with_target;
      if (r->speedup && (!g.best_speedup || *r->speedup > *g.best_speedup))
        g.best_speedup = r->speedup;
    }
  }

  Json groups_json = Json::array();
  summary.table =
      fmt::format("{:<24} {:<26} {:<44} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n", "MODEL", "TASK",
                  "VARIANT", "TRAJ", "TURNS", "CORRECT", "+TARGET", "BEST", "OUTCOMES");
  for (const auto& g : groups) {
    std::vector<std::string> mix;
    for (const auto& [status, count] : g.statuses)
      mix.push_back(fmt::format("{} {}", status, count));
    summary.table += fmt::format(
        "{:<24} {:<26} {:<44} {:>7} {:>7} {:>7} {:>7} {:>7}  {}\n", g.model, g.task, g.variant,
        fmt::format("{}/{}", g.finished, g.trajectories),
        fmt::format("{}/{}", g.turns, g.trajectories * plan.config.turns), g.correct,
        g.correct_with_target, g.best_speedup ? fmt::format("{:.3f}x", *g.best_speedup) : "—",
        mix.empty() ? "-" : join(mix, ", "));
    groups_json.push_back(
        Json{{"model", g.model},
             {"task", g.task},
             {"variant", g.variant},
             {"trajectories", g.trajectories},
             {"finished_trajectories", g.finished},
             {"turns", g.turns},
             {"planned_turns", g.trajectories * plan.config.turns},
             {"correct_turns", g.correct},
             {"correct_with_target_turns", g.correct_with_target},
             {"best_speedup", g.best_speedup ? Json(*g.best_speedup) : Json(nullptr)},
             {"statuses", g.statuses},
             {"exit_statuses", g.exit_statuses}});
  }
  summary.json = Json{
      {"format", "ptxbench-run-summary/1"},
      {"updated", iso_utc_now()},
      {"planned_trajectories", plan.trajectories.size()},
      {"unfinished_trajectories", summary.unfinished},
      {"planned_turns", plan.trajectories.size() * static_cast<std::size_t>(plan.config.turns)},
      {"recorded_turns", recorded_turns},
      {"gpu_skipped_turns", summary.gpu_skipped_turns},
      {"exit_statuses", exit_counts},
      {"statuses", status_counts},
      {"groups", groups_json},
      {"incomplete", incomplete}};
  return summary;
}

}  // namespace ptxb
