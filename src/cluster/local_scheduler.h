// The GPUs of one machine as the scheduler of a scale-out run (`ptxbench run --executor local
// --gpus 0,1,...`): the same shards as on Slurm, one worker process per GPU. A worker is
// `ptxbench run --shard I/N --gpus G`, i.e. a shard run whose one GPU evaluation slot
// (concurrency.gpu, agent/turn_evaluator.h's EvaluatorPool) is pinned to GPU G: the per-GPU
// slots of a single run, spread over processes, not a second mechanism. With more shards than
// GPUs a shard waits for a GPU to come free.
//
// Workers run on threads of this process through the ProcessRunner (their own process groups,
// killed with the coordinator on Ctrl-C); a worker's output goes to
// RUN_DIR/shards/I-of-N/local-K.log (K: the submission) when it ends.
#pragma once

#include <condition_variable>
#include <mutex>
#include <thread>

#include "cluster/scheduler.h"
#include "core/process.h"

namespace ptxb {

class LocalScheduler final : public Scheduler {
 public:
  LocalScheduler(ProcessRunner& processes, std::vector<std::string> gpus);
  ~LocalScheduler() override;  // waits for every worker
  std::string name() const override { return "local"; }
  Result<std::string> submit(const ArrayJob& job) override;
  Result<std::map<int, TaskState>> query(const std::string& job_id) override;
  Status cancel(const std::string& job_id, std::optional<int> index) override;

 private:
  struct Task {
    TaskState state = TaskState::kPending;
    pid_t pid = 0;  // also its process group; 0 before it starts
    bool cancel_requested = false;
  };
  void run_task(const ArrayJob& job, const std::string& job_id, int index);
  std::string take_gpu(const std::string& job_id, int index);  // blocks; "" when cancelled
  void give_gpu(const std::string& gpu);

  ProcessRunner& processes_;
  std::mutex mutex_;
  std::condition_variable gpu_free_;
  std::vector<std::string> free_gpus_;
  std::map<std::string, std::map<int, Task>> jobs_;
  std::vector<std::thread> threads_;
  int submissions_ = 0;
};

}  // namespace ptxb
