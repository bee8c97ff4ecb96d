#include "cluster/local_scheduler.h"

#include <signal.h>

#include "agent/shard.h"
#include "core/fs.h"

namespace ptxb {

LocalScheduler::LocalScheduler(ProcessRunner& processes, std::vector<std::string> gpus)
    : processes_(processes), free_gpus_(std::move(gpus)) {
  // Handed out from the back: reversed, so shard 0 gets the first GPU listed.
  std::reverse(free_gpus_.begin(), free_gpus_.end());
}

LocalScheduler::~LocalScheduler() {
  for (auto& thread : threads_) thread.join();
}

Result<std::string> LocalScheduler::submit(const ArrayJob& job) {
  if (free_gpus_.empty() && threads_.empty())
    return make_error("usage", "the local executor needs at least one GPU (--gpus 0,1,...)");
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string job_id = fmt::format("local-{}", ++submissions_);
  for (int index : job.indices) jobs_[job_id][index] = Task{};
  for (int index : job.indices)
    threads_.emplace_back([this, job, job_id, index] { run_task(job, job_id, index); });
  return job_id;
}

std::string LocalScheduler::take_gpu(const std::string& job_id, int index) {
  std::unique_lock<std::mutex> lock(mutex_);
  Task& task = jobs_[job_id][index];
  gpu_free_.wait(lock, [&] { return !free_gpus_.empty() || task.cancel_requested; });
  if (task.cancel_requested) return "";
  std::string gpu = free_gpus_.back();
  free_gpus_.pop_back();
  task.state = TaskState::kRunning;
  return gpu;
}

void LocalScheduler::give_gpu(const std::string& gpu) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    free_gpus_.push_back(gpu);
  }
  gpu_free_.notify_all();
}

void LocalScheduler::run_task(const ArrayJob& job, const std::string& job_id, int index) {
  const std::string gpu = take_gpu(job_id, index);
  if (gpu.empty()) {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_[job_id][index].state = TaskState::kCancelled;
    return;
  }
  const ShardSpec shard{index, job.shard_count};
  ProcessSpec spec;
  spec.argv = job.worker_argv;
  spec.argv.insert(spec.argv.end(), {"--shard", shard.arg(), "--gpus", gpu});
  spec.output_cap_bytes = 16u << 20;  // a worker's progress lines for a whole shard
  spec.on_start = [&](pid_t pid) {
    std::lock_guard<std::mutex> lock(mutex_);
    Task& task = jobs_[job_id][index];
    task.pid = pid;
    if (task.cancel_requested) ::killpg(pid, SIGTERM);  // cancelled while starting
  };
  auto result = processes_.run(spec);
  give_gpu(gpu);

  const std::string log = fmt::format("{}/{}.log", shard_dir(job.run_root, shard), job_id);
  std::string text = result.ok() ? result->stdout_text + result->stderr_text
                                 : "cannot start the worker: " + result.error().message + "\n";
  if (result.ok()) text += fmt::format("ptxbench: worker ended: {}\n", result->describe());
  (void)write_file_atomic(log, text);  // the log is for people; the state below is what counts

  std::lock_guard<std::mutex> lock(mutex_);
  Task& task = jobs_[job_id][index];
  task.pid = 0;
  if (task.cancel_requested)
    task.state = TaskState::kCancelled;
  else if (!result.ok() || result->term_signal != 0 || result->interrupted)
    task.state = TaskState::kFailed;
  else
    // Exit 3: finished, GPU stages skipped (a machine without a GPU); the shard is done.
    task.state = result->exit_code == 0 || result->exit_code == 3 ? TaskState::kCompleted
                                                                  : TaskState::kFailed;
}

Result<std::map<int, TaskState>> LocalScheduler::query(const std::string& job_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<int, TaskState> states;
  auto job = jobs_.find(job_id);
  if (job == jobs_.end()) return states;  // another process's job: nothing known here
  for (const auto& [index, task] : job->second) states[index] = task.state;
  return states;
}

Status LocalScheduler::cancel(const std::string& job_id, std::optional<int> index) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto job = jobs_.find(job_id);
    if (job == jobs_.end()) return make_error("usage", "no local job {}", job_id);
    for (auto& [i, task] : job->second) {
      if (index && i != *index) continue;
      task.cancel_requested = true;
      // SIGTERM, as scancel sends: the worker stops cleanly and releases its shard lock.
      if (task.pid > 0) ::killpg(task.pid, SIGTERM);
    }
  }
  gpu_free_.notify_all();
  return ok_status();
}

}  // namespace ptxb
