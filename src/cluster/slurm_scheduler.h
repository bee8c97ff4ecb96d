// Slurm as the scheduler of a scale-out run: sbatch (one job array per submission), squeue and
// sacct (task states), scancel. Every command goes through the ProcessRunner, so the tests
// script Slurm's answers; the CI cluster (scripts/slurm_ci.sh) runs the real ones.
//
// Each submission writes RUN_DIR/shards/sbatch.sh, which `exec`s the worker with
// `--shard ${SLURM_ARRAY_TASK_ID}/N`: the worker is then the batch step's main process, so
// scancel's SIGTERM reaches it and it stops cleanly (nothing half-done is recorded). Task
// output goes to RUN_DIR/shards/I-of-N/slurm-JOB_I.log (the shard's own file set).
#pragma once

#include <chrono>

#include "cluster/scheduler.h"
#include "core/process.h"

namespace ptxb {

class SlurmScheduler final : public Scheduler {
 public:
  explicit SlurmScheduler(ProcessRunner& processes) : processes_(processes) {}
  std::string name() const override { return "slurm"; }
  Result<std::string> submit(const ArrayJob& job) override;
  Result<std::map<int, TaskState>> query(const std::string& job_id) override;
  Status cancel(const std::string& job_id, std::optional<int> index) override;

  // The sbatch argument list and the batch script of `job` (for tests and --help's examples).
  static std::vector<std::string> sbatch_argv(const ArrayJob& job, const std::string& script);
  static std::string batch_script(const ArrayJob& job);
  // Slurm's state word ("CANCELLED by 0", "COMPLETING", ...) as a TaskState; nullopt for a
  // word it does not know.
  static std::optional<TaskState> parse_state(const std::string& word);
  // Lines "JOBID_INDEX|STATE" (squeue --format=%i|%T, sacct --parsable2) into `states`; lines
  // of other jobs and of not yet expanded ranges ("12_[3-5]") are skipped.
  static void parse_states(const std::string& text, const std::string& job_id,
                           std::map<int, TaskState>& states);

 private:
  Result<ProcessResult> run_tool(std::vector<std::string> argv);
  ProcessRunner& processes_;
};

}  // namespace ptxb
