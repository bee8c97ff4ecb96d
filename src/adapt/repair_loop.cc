#include "adapt/repair_loop.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>

#include "adapt/outcome_log.h"
#include "agent/experiment.h"
#include "agent/mini_ptx_agent.h"
#include "agent/run_directory.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/semaphore.h"

namespace ptxb::adapt {
namespace {

constexpr std::size_t kMaxRepairedKernelBytes = 1u << 20;  // CompileOptions::max_source_bytes

ExperimentPlan repair_plan(const std::vector<MinedFailure>& failures,
                           const RepairOptions& options) {
  ExperimentPlan plan;
  ExperimentConfig& config = plan.config;
  config.models = {options.teacher};
  std::set<std::string> tasks;
  for (const auto& f : failures) tasks.insert(f.task);
  config.tasks.assign(tasks.begin(), tasks.end());
  config.trajectories = 1;
  config.turns = options.turns;
  config.early_stop_speedup = options.target_speedup;
  config.eval = options.eval;
  config.concurrency.model = options.model_concurrency;
  for (const auto& f : failures) {
    TrajectoryPlan t;
    t.id = repair_trajectory_id(f);
    t.model = options.teacher.name;
    t.task = f.task;
    t.variant = f.key.variant;
    t.key = f.key;
    t.key.model = options.teacher.name;
    t.key.trajectory = f.id;  // the repair is keyed by the failure it starts from
    t.workload_name = f.workload_name;
    plan.trajectories.push_back(std::move(t));
  }
  return plan;
}

TaskPrompt repair_prompt(const MinedFailure& f) {
  TaskPrompt prompt;
  prompt.task = f.task;
  prompt.system = f.system_prompt;
  prompt.first_user = f.task_message;
  prompt.opening = {
      Json{{"role", "assistant"},
           {"content", "```cuda\n" + f.kernel + (f.kernel.ends_with("\n") ? "" : "\n") + "```"},
           {"extra", {{"kind", "source_kernel"}, {"failure", f.id}, {"status", f.status}}}},
      Json{{"role", "user"},
           {"content", f.feedback + "\n\n" + kRepairInstruction},
           {"extra", {{"kind", "source_feedback"}, {"failure", f.id}}}}};
  return prompt;
}

}  // namespace

std::string repair_trajectory_id(const MinedFailure& failure) {
  return slug("fixit__" + failure.id);
}

Json RepairSummary::to_json() const {
  return Json{{"kept", kept},
              {"dropped", dropped},
              {"dropped_by_reason", dropped_by_reason},
              {"already_decided", already_decided},
              {"unfinished", unfinished}};
}

Result<RepairSummary> run_repairs(const std::vector<MinedFailure>& failures,
                                  const RepairOptions& options, const std::string& work_dir,
                                  RepairServices& services) {
  const ExperimentPlan plan = repair_plan(failures, options);
  bool resumed = false;
  PTXB_ASSIGN_OR_RETURN(auto dir, RunDirectory::open(work_dir + "/repairs", plan, resumed));
  PTXB_ASSIGN_OR_RETURN(auto log, OutcomeLog::open(work_dir + "/repairs.jsonl"));
  PTXB_RETURN_IF_ERROR(make_directories(work_dir + "/repaired"));

  RepairSummary summary;
  std::mutex summary_mutex;
  Semaphore model_slots(options.model_concurrency);
  AgentServices agent_services{*dir, model_slots, services.evaluators, services.progress};
  MiniPtxAgent agent(plan.config, agent_services);
  std::atomic<std::size_t> next{0};
  std::optional<Error> failure_error;

  auto decide = [&](const MinedFailure& f, const std::string& outcome, const std::string& reason,
                    Json extra) -> Status {
    Json entry{
        {"id", f.id},     {"outcome", outcome},         {"reason", reason},
        {"task", f.task}, {"error_type", f.error_type}, {"trajectory", repair_trajectory_id(f)}};
    for (auto& [k, v] : extra.items()) entry[k] = v;
    PTXB_RETURN_IF_ERROR(log->append(entry));
    std::lock_guard<std::mutex> lock(summary_mutex);
    if (outcome == "kept") {
      ++summary.kept;
    } else {
      ++summary.dropped;
      ++summary.dropped_by_reason[reason];
    }
    return ok_status();
  };

  auto repair_one = [&](std::size_t index) -> Status {
    const MinedFailure& f = failures[index];
    const TrajectoryPlan& t = plan.trajectories[index];
    if (log->contains(f.id)) {
      std::lock_guard<std::mutex> lock(summary_mutex);
      ++summary.already_decided;
      return ok_status();
    }
    const TrajectoryOutcome outcome =
        agent.run(t, options.teacher, services.teacher, repair_prompt(f));
    if (!outcome.finished()) {
      std::lock_guard<std::mutex> lock(summary_mutex);
      summary.unfinished.push_back(
          fmt::format("{}: {}: {}", f.id, outcome.exit_status, outcome.detail));
      return ok_status();
    }
    const Json turns_json{{"turns", outcome.turns_done}};
    if (outcome.exit_status == "context_window_exceeded")
      return decide(f, "dropped", "context_window", turns_json);
    if (outcome.exit_status != "target_reached")
      return decide(f, "dropped", "not_repaired", turns_json);

    // Verification on fresh inputs: a repair that passed once by luck of the inputs is dropped.
    PTXB_ASSIGN_OR_RETURN(std::string fixed, read_file(dir->kernel_file(t.id, outcome.turns_done),
                                                       kMaxRepairedKernelBytes));
    EvalRequest request;
    request.task = f.task;
    request.source_name = "kernel.cu";
    request.source = fixed;
    request.options = options.eval;
    request.options.seed = derive_set_seed(options.eval.seed, t.id + "#verify", 0);
    Result<EvalResult> verified = make_error("internal", "not evaluated");
    {
      auto lease = services.evaluators.acquire();
      verified = lease->evaluator().evaluate(request);
    }
    if (interrupted()) return ok_status();  // undecided: the next run verifies again
    if (!verified.ok()) {
      std::lock_guard<std::mutex> lock(summary_mutex);
      summary.unfinished.push_back(
          fmt::format("{}: verification: {}", f.id, verified.error().message));
      return ok_status();
    }
    std::optional<double> speedup;
    if (!verified->workloads.empty()) speedup = verified->workloads.front().speedup;
    Json verify{{"seed", request.options.seed},
                {"status", std::string(ptxb_status_name(verified->status))},
                {"reason", verified->reason},
                {"speedup", speedup ? Json(*speedup) : Json(nullptr)},
                {"target_instructions", verified->target_instructions.verdict}};
    Json extra{
        {"turns", outcome.turns_done}, {"fixed_turn", outcome.turns_done}, {"verify", verify}};
    const bool passed = verified->status == PtxbStatus::kPassed &&
                        verified->target_instructions.verdict == std::string(kInstDynamicPresent);
    if (!passed) return decide(f, "dropped", "verification_failed", extra);
    const std::string fixed_rel = "repaired/" + slug(f.id) + ".cu";
    PTXB_RETURN_IF_ERROR(write_file_atomic(work_dir + "/" + fixed_rel, fixed));
    extra["fixed_kernel_file"] = fixed_rel;
    return decide(f, "kept", "passed_with_dynamic_present", extra);
  };

  const int workers =
      std::max(1, std::min<int>(options.model_concurrency, static_cast<int>(failures.size())));
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&] {
      for (std::size_t i = next++; i < failures.size() && !interrupted(); i = next++) {
        Status status = repair_one(i);
        if (!status.ok()) {
          std::lock_guard<std::mutex> lock(summary_mutex);
          if (!failure_error) failure_error = status.error();
        }
      }
    });
  for (auto& thread : threads) thread.join();
  if (failure_error) return *failure_error;
  return summary;
}

}  // namespace ptxb::adapt
