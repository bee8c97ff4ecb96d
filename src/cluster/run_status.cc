#include "cluster/run_status.h"

#include <algorithm>
#include <cmath>

#include "agent/shard.h"
#include "core/file_lock.h"
#include "core/fs.h"
#include "core/strings.h"
#include "metrics/turn_record.h"

namespace ptxb {
namespace {

constexpr std::size_t kMaxRunFileBytes = 64u << 20;

struct PlanFacts {
  std::vector<std::string> trajectory_ids;  // in plan order: shard k mod N
  int turns = 0;
  int gpu_slots = 1;
  int model_slots = 8;
};

Result<PlanFacts> read_plan_facts(const std::string& root) {
  const std::string path = root + "/plan.json";
  if (!path_exists(path))
    return make_error("usage", "{}: no plan.json; not a ptxbench run directory", root);
  PTXB_ASSIGN_OR_RETURN(Json plan, read_json_file(path));
  PlanFacts facts;
  try {
    const Json& config = plan.at("config");
    facts.turns = config.at("turns").get<int>();
    if (config.contains("concurrency")) {
      facts.gpu_slots = config["concurrency"].value("gpu", 1);
      facts.model_slots = config["concurrency"].value("model", 8);
    }
    for (const Json& t : plan.at("trajectories")) facts.trajectory_ids.push_back(t.at("id"));
  } catch (const std::exception& e) {
    return make_error("parse", "{}: {}", path, e.what());
  }
  return facts;
}

// Every committed turn of the run, by trajectory id.
Result<std::map<std::string, std::vector<TurnRecord>>> read_turns(const std::string& root) {
  std::map<std::string, std::vector<TurnRecord>> turns;
  PTXB_ASSIGN_OR_RETURN(const auto files, run_turn_files(root));
  for (const auto& path : files) {
    PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxRunFileBytes));
    text.resize(committed_jsonl_length(text));  // a live shard may be mid-append
    PTXB_ASSIGN_OR_RETURN(auto records, parse_turns_jsonl(text, path));
    for (auto& r : records) turns[r.key.trajectory].push_back(std::move(r));
  }
  return turns;
}

// The summary a finished worker left: (unfinished trajectories, their exit statuses).
std::optional<std::pair<int, std::map<std::string, int>>> read_summary(const std::string& path) {
  auto json = read_json_file(path);
  if (!json.ok() || !json->contains("unfinished_trajectories")) return std::nullopt;
  std::map<std::string, int> stopped;
  if (json->contains("incomplete"))
    for (const Json& t : (*json)["incomplete"]) ++stopped[t.value("exit_status", "unknown")];
  return std::pair{(*json)["unfinished_trajectories"].get<int>(), stopped};
}

void count_turns(const std::vector<TurnRecord>& records, ShardStatus& shard) {
  for (const auto& r : records) {
    ++shard.turns_done;
    if (!r.correct()) ++shard.failures[r.status_name()];
    shard.eval_seconds += r.eval_wall_s;
    shard.turn_seconds += r.model_wall_s + r.eval_wall_s;
  }
}

// State and detail from the lock, the summary and the scheduler, in that order of trust: a
// live lock is a worker at work whatever the scheduler still says.
Status decide_state(const std::string& folder, const std::optional<SchedulerTask>& task,
                    ShardStatus& shard) {
  PTXB_ASSIGN_OR_RETURN(auto holder, FileLock::live_holder(folder + "/lock"));
  if (shard.name == "all" && !holder) {
    PTXB_ASSIGN_OR_RETURN(holder, FileLock::live_holder(folder + "/.lock"));
  }
  const auto summary = read_summary(folder + "/summary.json");
  if (summary) shard.stopped = summary->second;
  const bool all_turns = shard.turns_done >= shard.turns_planned;
  if (task) shard.job = task->job_id;
  if (holder) {
    shard.state = "running";
    shard.holder = holder->describe();
  } else if ((summary && summary->first == 0) || all_turns) {
    shard.state = "done";
    shard.stopped.clear();
  } else if (task && task->state && is_live(*task->state)) {
    shard.state = *task->state == TaskState::kPending ? "queued" : "running";
  } else if (task || shard.turns_done > 0 || summary) {
    shard.state = "stopped";
    std::vector<std::string> why;
    if (task && task->state) why.push_back(task_state_name(*task->state));
    for (const auto& [status, count] : shard.stopped)
      why.push_back(fmt::format("{} {}", count, status));
    shard.detail = why.empty() ? "cut off (no summary written)" : join(why, ", ");
  } else {
    shard.state = "not_started";
  }
  shard.turns_remaining = shard.state == "done" ? 0 : shard.turns_planned - shard.turns_done;
  return ok_status();
}

}  // namespace

Result<RunStatus> read_run_status(const std::string& root, const SchedulerView& view) {
  PTXB_ASSIGN_OR_RETURN(const PlanFacts plan, read_plan_facts(root));
  PTXB_ASSIGN_OR_RETURN(const std::optional<int> layout, read_shard_layout(root));
  PTXB_ASSIGN_OR_RETURN(const auto turns, read_turns(root));
  RunStatus status;
  status.root = root;
  status.shard_count = layout.value_or(0);
  status.gpu_slots = std::max(1, plan.gpu_slots);
  const int count = std::max(1, status.shard_count);
  for (int i = 0; i < count; ++i) {
    ShardStatus shard;
    shard.index = i;
    const ShardSpec spec{i, count};
    shard.name = layout ? spec.name() : "all";
    for (std::size_t k = 0; k < plan.trajectory_ids.size(); ++k) {
      if (!spec.owns(k)) continue;
      ++shard.trajectories;
      shard.turns_planned += plan.turns;
      if (auto it = turns.find(plan.trajectory_ids[k]); it != turns.end())
        count_turns(it->second, shard);
    }
    std::optional<SchedulerTask> task;
    if (auto it = view.find(i); it != view.end()) task = it->second;
    PTXB_RETURN_IF_ERROR(decide_state(layout ? shard_dir(root, spec) : root, task, shard));
    status.shards.push_back(std::move(shard));
  }
  return status;
}

int RunStatus::turns_done() const {
  int n = 0;
  for (const auto& s : shards) n += s.turns_done;
  return n;
}

int RunStatus::turns_planned() const {
  int n = 0;
  for (const auto& s : shards) n += s.turns_planned;
  return n;
}

int RunStatus::turns_remaining() const {
  int n = 0;
  for (const auto& s : shards) n += s.turns_remaining;
  return n;
}

double RunStatus::gpu_hours() const {
  double seconds = 0;
  for (const auto& s : shards) seconds += s.eval_seconds;
  return seconds / 3600.0;
}

std::optional<double> RunStatus::eta_seconds() const {
  const int done = turns_done();
  if (done == 0) return std::nullopt;
  if (turns_remaining() == 0) return 0.0;
  // A shard's evaluations queue for its GPU slots, so its pace is the measured evaluation time
  // per turn over its slots (the model calls of other trajectories overlap with them).
  const double eval_per_turn = gpu_hours() * 3600.0 / done;
  int running = 0;
  for (const auto& s : shards) running += s.state == "running" ? 1 : 0;
  const double pace = eval_per_turn / gpu_slots / std::max(1, running);
  return pace * turns_remaining();
}

bool RunStatus::complete() const {
  return std::all_of(shards.begin(), shards.end(),
                     [](const ShardStatus& s) { return s.state == "done"; });
}

bool RunStatus::any_live() const {
  return std::any_of(shards.begin(), shards.end(), [](const ShardStatus& s) {
    return s.state == "running" || s.state == "queued";
  });
}

Json RunStatus::to_json() const {
  Json list = Json::array();
  for (const auto& s : shards)
    list.push_back(Json{{"shard", s.name},
                        {"state", s.state},
                        {"detail", s.detail},
                        {"job", s.job},
                        {"holder", s.holder},
                        {"trajectories", s.trajectories},
                        {"turns_done", s.turns_done},
                        {"turns_planned", s.turns_planned},
                        {"turns_remaining", s.turns_remaining},
                        {"failures", s.failures},
                        {"stopped_trajectories", s.stopped},
                        {"gpu_hours", s.eval_seconds / 3600.0}});
  const auto eta = eta_seconds();
  return Json{{"format", "ptxbench-run-status/1"},
              {"run_dir", root},
              {"shard_count", shard_count},
              {"complete", complete()},
              {"turns_done", turns_done()},
              {"turns_planned", turns_planned()},
              {"turns_remaining", turns_remaining()},
              {"gpu_hours", gpu_hours()},
              {"eta_s", eta ? Json(*eta) : Json(nullptr)},
              {"shards", list}};
}

std::string format_duration(double seconds) {
  const long total = std::lround(seconds);
  if (total < 60) return fmt::format("{} s", total);
  if (total < 3600) return fmt::format("{} min", (total + 30) / 60);
  return fmt::format("{} h {:02} min", total / 3600, (total % 3600) / 60);
}

std::string RunStatus::table() const {
  std::string out =
      fmt::format("run {}: {} shard{}, {}/{} turns done, {} remaining\n", root, shards.size(),
                  shards.size() == 1 ? "" : "s", turns_done(), turns_planned(), turns_remaining());
  out += fmt::format("{:<12} {:<11} {:<12} {:>5} {:>11} {:>9} {:>8}  {}\n", "SHARD", "STATE", "JOB",
                     "TRAJ", "TURNS", "REMAINING", "GPU-H", "FAILURES / DETAIL");
  for (const auto& s : shards) {
    std::vector<std::string> notes;
    for (const auto& [status, count] : s.failures)
      notes.push_back(fmt::format("{} {}", status, count));
    if (!s.detail.empty()) notes.push_back("(" + s.detail + ")");
    if (!s.holder.empty()) notes.push_back("[" + s.holder + "]");
    out += fmt::format("{:<12} {:<11} {:<12} {:>5} {:>11} {:>9} {:>8.3f}  {}\n", s.name, s.state,
                       s.job.empty() ? "-" : s.job, s.trajectories,
                       fmt::format("{}/{}", s.turns_done, s.turns_planned), s.turns_remaining,
                       s.eval_seconds / 3600.0, notes.empty() ? "-" : join(notes, ", "));
  }
  out += fmt::format("GPU-hours so far: {:.3f} (evaluation wall time: each holds one GPU slot)\n",
                     gpu_hours());
  const auto eta = eta_seconds();
  out += eta ? fmt::format("ETA: {} at the measured pace\n", format_duration(*eta))
             : "ETA: unknown until a turn is measured\n";
  return out;
}

}  // namespace ptxb
