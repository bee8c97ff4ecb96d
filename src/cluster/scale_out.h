// The coordinator of a scale-out run (`ptxbench run --executor slurm|local`, docs/cluster.md):
// it submits the run directory's unfinished shards as one job array and follows them until
// none is queued or running. It never evaluates anything itself; the workers
// (`ptxbench run --shard I/N`) do, each in its own shard of the directory.
//
// Resume is the same command again: shards that are done, queued or running are left alone;
// every other one (cut off by scancel, a time limit or a node failure, or stopped on model or
// evaluation failures) is submitted again, and its worker continues from its first unfinished
// turn (a committed turn is never evaluated twice: agent/run_directory.h).
//
// Submissions are recorded in RUN_DIR/shards/jobs.json (rewritten atomically, by the
// coordinator only, under the directory lock), so `ptxbench status` and a later coordinator
// can ask the scheduler about them.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "cluster/run_status.h"
#include "cluster/scheduler.h"

namespace ptxb {

struct JobRecord {
  std::string id;
  std::string executor;  // Scheduler::name()
  std::vector<int> indices;
  std::string submitted;  // ISO time
};

Result<std::vector<JobRecord>> read_job_records(const std::string& root);

// Each shard's latest task and what `scheduler` says about it (records of other executors are
// skipped). Without a scheduler: the tasks of every record, their states unknown.
Result<SchedulerView> ask_scheduler(const std::string& root, Scheduler* scheduler);

struct ScaleOutOptions {
  ArrayJob job;  // run_root, shard_count, worker_argv and placement; indices are filled here
  bool wait = true;
  // Between two looks at the scheduler and the directory. Slurm's own clients poll the
  // controller no faster than every few seconds; so do we.
  std::chrono::milliseconds poll{5000};
  std::function<void(const std::string&)> note;  // one progress line
};

struct ScaleOutOutcome {
  std::vector<int> submitted;  // shard indices submitted by this call
  std::string job_id;          // "" when nothing was submitted
  RunStatus status;            // at the end (or at submission without waiting)
  bool interrupted = false;    // Ctrl-C/SIGTERM while waiting
};

// The directory must exist with its layout (RunDirectory::prepare_sharded).
Result<ScaleOutOutcome> run_scaled_out(Scheduler& scheduler, const ScaleOutOptions& options);

}  // namespace ptxb
