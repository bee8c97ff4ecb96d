#include "cluster/scale_out.h"

#include <thread>

#include "agent/shard.h"
#include "core/clock.h"
#include "core/file_lock.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/strings.h"

namespace ptxb {
namespace {

std::string jobs_path(const std::string& root) {
  return shards_root(root) + "/jobs.json";
}

Status write_job_records(const std::string& root, const std::vector<JobRecord>& records) {
  Json list = Json::array();
  for (const auto& r : records)
    list.push_back(Json{{"id", r.id},
                        {"executor", r.executor},
                        {"indices", r.indices},
                        {"submitted", r.submitted}});
  return write_file_atomic(jobs_path(root),
                           dump_pretty(Json{{"format", "ptxbench-jobs/1"}, {"jobs", list}}));
}

// Shards that need a worker: not done and not already queued or running.
std::vector<int> shards_to_submit(const RunStatus& status) {
  std::vector<int> indices;
  for (const auto& shard : status.shards)
    if (shard.state == "stopped" || shard.state == "not_started") indices.push_back(shard.index);
  return indices;
}

std::string progress_line(const RunStatus& status) {
  std::map<std::string, int> states;
  for (const auto& shard : status.shards) ++states[shard.state];
  std::vector<std::string> parts;
  for (const auto& [state, count] : states) parts.push_back(fmt::format("{} {}", count, state));
  const auto eta = status.eta_seconds();
  return fmt::format("shards: {}; turns {}/{}; GPU-hours {:.3f}; ETA {}", join(parts, ", "),
                     status.turns_done(), status.turns_planned(), status.gpu_hours(),
                     eta ? format_duration(*eta) : "unknown");
}

// Sleeps `duration`, waking early on Ctrl-C/SIGTERM; false when interrupted.
bool sleep_unless_interrupted(std::chrono::milliseconds duration) {
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
    if (interrupted()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return !interrupted();
}

// Under the directory lock, so two coordinators never submit one shard twice.
Result<ScaleOutOutcome> submit_unfinished(Scheduler& scheduler, const ScaleOutOptions& options) {
  const std::string& root = options.job.run_root;
  FileLockOptions lock_options;
  lock_options.wait = std::chrono::seconds(30);
  PTXB_ASSIGN_OR_RETURN(
      FileLock lock,
      FileLock::acquire(root + "/.lock", "ptxbench run --out " + root, lock_options));
  PTXB_ASSIGN_OR_RETURN(const SchedulerView view, ask_scheduler(root, &scheduler));
  ScaleOutOutcome outcome;
  PTXB_ASSIGN_OR_RETURN(outcome.status, read_run_status(root, view));
  outcome.submitted = shards_to_submit(outcome.status);
  if (outcome.submitted.empty()) return outcome;
  ArrayJob job = options.job;
  job.indices = outcome.submitted;
  PTXB_ASSIGN_OR_RETURN(outcome.job_id, scheduler.submit(job));
  PTXB_ASSIGN_OR_RETURN(auto records, read_job_records(root));
  records.push_back(JobRecord{outcome.job_id, scheduler.name(), job.indices, iso_utc_now()});
  PTXB_RETURN_IF_ERROR(write_job_records(root, records));
  return outcome;
}

}  // namespace

Result<std::vector<JobRecord>> read_job_records(const std::string& root) {
  std::vector<JobRecord> records;
  const std::string path = jobs_path(root);
  if (!path_exists(path)) return records;
  PTXB_ASSIGN_OR_RETURN(Json json, read_json_file(path));
  try {
    for (const Json& j : json.at("jobs"))
      records.push_back(JobRecord{j.at("id"), j.at("executor"),
                                  j.at("indices").get<std::vector<int>>(),
                                  j.value("submitted", "")});
  } catch (const std::exception& e) {
    return make_error("parse", "{}: {}", path, e.what());
  }
  return records;
}

Result<SchedulerView> ask_scheduler(const std::string& root, Scheduler* scheduler) {
  PTXB_ASSIGN_OR_RETURN(const auto records, read_job_records(root));
  SchedulerView view;
  std::map<std::string, std::map<int, TaskState>> answers;  // one query per job
  for (const auto& record : records) {                      // in submission order: the latest wins
    if (scheduler && record.executor != scheduler->name()) continue;
    if (scheduler && !answers.count(record.id)) {
      PTXB_ASSIGN_OR_RETURN(answers[record.id], scheduler->query(record.id));
    }
    const auto& states = answers[record.id];
    for (int index : record.indices) {
      SchedulerTask task{fmt::format("{}_{}", record.id, index), std::nullopt};
      if (auto it = states.find(index); it != states.end()) task.state = it->second;
      view[index] = task;
    }
  }
  return view;
}

Result<ScaleOutOutcome> run_scaled_out(Scheduler& scheduler, const ScaleOutOptions& options) {
  auto note = [&](const std::string& line) {
    if (options.note) options.note(line);
  };
  PTXB_ASSIGN_OR_RETURN(ScaleOutOutcome outcome, submit_unfinished(scheduler, options));
  if (outcome.submitted.empty()) {
    note("no shard to submit: every shard is done, queued or running");
  } else {
    std::vector<std::string> indices;
    for (int i : outcome.submitted) indices.push_back(std::to_string(i));
    note(fmt::format("submitted {} of {} as {} job {} (array indices {})",
                     count_noun(static_cast<long long>(outcome.submitted.size()), "shard"),
                     options.job.shard_count, scheduler.name(), outcome.job_id,
                     join(indices, ",")));
  }
  if (!options.wait) return outcome;
  const std::string& root = options.job.run_root;
  std::string last_line;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(const SchedulerView view, ask_scheduler(root, &scheduler));
    PTXB_ASSIGN_OR_RETURN(outcome.status, read_run_status(root, view));
    if (const std::string line = progress_line(outcome.status); line != last_line) {
      note(line);
      last_line = line;
    }
    if (!outcome.status.any_live()) return outcome;
    if (!sleep_unless_interrupted(options.poll)) {
      outcome.interrupted = true;
      return outcome;
    }
  }
}

}  // namespace ptxb
