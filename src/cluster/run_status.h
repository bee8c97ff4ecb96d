// `ptxbench status RUN_DIR`: where a run stands, per shard, from the run directory alone (and,
// when asked, the scheduler's view of the tasks): state, turns done and remaining, failures by
// status, the GPU-hours spent so far and an ETA from the measured turn times. Read-only: it
// never takes or breaks a lock, so it is safe while shards run on other nodes.
//
// Shard states:
//   done         every trajectory of the shard is final (its summary says none is unfinished,
//                or every planned turn is recorded)
//   running      a live worker holds the shard's lock (core/file_lock.h), or the scheduler says
//                RUNNING
//   queued       the scheduler says PENDING
//   stopped      neither: cut off (scancel, time limit, node failure) or ended with unfinished
//                trajectories; `detail` says which. Rerunning the same command resubmits it
//   not_started  nothing recorded and never submitted
// An unsharded run reads as one shard named "all".
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/scheduler.h"
#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// What the scheduler said about each shard's latest task (by shard index).
struct SchedulerTask {
  std::string job_id;
  std::optional<TaskState> state;  // nullopt: the scheduler no longer knows the task
};
using SchedulerView = std::map<int, SchedulerTask>;

struct ShardStatus {
  std::string name;  // "2-of-4", or "all"
  int index = 0;
  std::string state;
  std::string detail;
  std::string job;     // "JOB_I" of the latest submission, "" if never submitted
  std::string holder;  // "pid N on host H" while running
  int trajectories = 0;
  int turns_done = 0;
  int turns_planned = 0;
  int turns_remaining = 0;
  std::map<std::string, int> failures;  // turn statuses other than PASSED (NO_CODE included)
  std::map<std::string, int> stopped;   // unfinished trajectories by exit status
  double eval_seconds = 0;              // sum of the turns' evaluation wall time
  double turn_seconds = 0;              // sum of model + evaluation wall time
};

struct RunStatus {
  std::string root;
  int shard_count = 0;  // 0: an unsharded run
  int gpu_slots = 1;    // concurrency.gpu of each worker
  std::vector<ShardStatus> shards;

  int turns_done() const;
  int turns_planned() const;
  int turns_remaining() const;
  // Every evaluation holds one GPU slot for its whole wall time (compile included: a local
  // evaluator keeps the slot through it), so the slot-hours are the sum of evaluation times.
  double gpu_hours() const;
  // Seconds to go at the measured rate with the shards running now (at least one); nullopt
  // before any turn is measured.
  std::optional<double> eta_seconds() const;
  bool complete() const;  // every shard done
  bool any_live() const;  // some shard running or queued

  Json to_json() const;
  std::string table() const;
};

Result<RunStatus> read_run_status(const std::string& root, const SchedulerView& view = {});

// "2 h 05 min", "14 min", "40 s".
std::string format_duration(double seconds);

}  // namespace ptxb
