// The batch system behind `ptxbench run --executor E` (docs/cluster.md): the few things a
// scale-out run asks of it, so the coordinator (cluster/scale_out.h) is tested with a fake and
// runs on Slurm (cluster/slurm_scheduler.h) or on the GPUs of one machine
// (cluster/local_scheduler.h) unchanged.
//
// A submission is one job array: task I runs shard I of the run directory's N shards
// (`ptxbench run --out DIR --shard I/N`, agent/shard.h). Only the unfinished shards are
// submitted, so the indices may have gaps.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace ptxb {

enum class TaskState {
  kPending,    // queued, not started (Slurm PENDING, REQUEUED, SUSPENDED, ...)
  kRunning,    // started (Slurm RUNNING, COMPLETING, CONFIGURING)
  kCompleted,  // ended with exit 0
  kFailed,     // ended with another exit code, or a system failure (Slurm FAILED, BOOT_FAIL)
  kCancelled,  // scancel, or the local executor's cancel
  kTimeout,    // hit its time limit
  kNodeFail,   // its node died
  kOutOfMemory,
};

// "PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
// "OUT_OF_MEMORY": Slurm's words, used by every scheduler.
const char* task_state_name(TaskState state);
// Still queued or running: its shard must not be submitted again.
bool is_live(TaskState state);

struct ArrayJob {
  std::string run_root;  // absolute; logs go to shards/I-of-N/
  int shard_count = 1;   // N
  std::vector<int> indices;
  std::string name;  // the job name the scheduler shows
  // Everything a task runs but its shard: `ptxbench run --out DIR ...`; the scheduler appends
  // `--shard I/N` (and, locally, `--gpus G`).
  std::vector<std::string> worker_argv;
  // Placement, Slurm only: at most this many tasks at once (0: no limit), partition, generic
  // resources ("gpu:1"), time limit ("04:00:00"), and any further sbatch arguments.
  int array_parallel = 0;
  std::string partition;
  std::string gres;
  std::string time_limit;
  std::vector<std::string> extra_args;
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::string name() const = 0;  // "slurm", "local": recorded in shards/jobs.json
  // Submits the array; returns the job id. Nothing is submitted on error.
  virtual Result<std::string> submit(const ArrayJob& job) = 0;
  // The state of each task of `job_id` the scheduler still knows (by array index). A task it
  // has forgotten (Slurm purges finished jobs after MinJobAge) is absent.
  virtual Result<std::map<int, TaskState>> query(const std::string& job_id) = 0;
  // Cancels one task of the array, or all of it.
  virtual Status cancel(const std::string& job_id, std::optional<int> index) = 0;
};

}  // namespace ptxb
