// The EvalService's worker slots: one thread per GPU worker that takes the next job from the
// fair queue, runs it, stores the result, restarts a crashed or hung worker, and runs the
// calibration canary (at start, every N jobs, and while drained). The rest of the service is
// in eval_service.cc.
#include <chrono>

#include "service/eval_service.h"

namespace ptxb::service {

bool EvalService::restart_worker(int index, const std::string& why) {
  Slot& slot = *slots_[index];
  if (!why.empty()) {
    metrics_.worker_restarted(slot.health.name, why);
    std::lock_guard<std::mutex> lock(mutex_);
    ++slot.health.restarts;
    slot.health.last_error = why;
    slot.health.state = "restarting";
  }
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopping_) return false;
    }
    auto started = slot.worker->start();
    std::unique_lock<std::mutex> lock(mutex_);
    if (started.ok()) {
      if (slot.health.state != "drained") slot.health.state = "idle";
      return true;
    }
    slot.health.state = "down";
    slot.health.last_error = started.error().message;
    work_available_.wait_for(lock,
                             std::chrono::duration<double>(options_.worker_restart_backoff_seconds),
                             [&] { return stopping_; });
  }
}

bool EvalService::run_canary(int index) {
  Slot& slot = *slots_[index];
  const std::string& name = slot.health.name;
  auto ms = slot.worker->canary(options_.canary_timeout_seconds);
  if (!ms.ok()) {
    // A canary that cannot run is a GPU that cannot be trusted to time anything.
    const std::string why = "canary failed: " + ms.error().message;
    if (ms.error().code == kWorkerCrashed || ms.error().code == kWorkerTimeout)
      restart_worker(index, why);
    metrics_.canary_ran(name, false);
    std::lock_guard<std::mutex> lock(mutex_);
    slot.health.state = "drained";
    slot.health.drain_reason = why;
    slot.health.jobs_since_canary = 0;
    return false;
  }
  auto history = store_.canary_history(name, options_.canary.history_size);
  const CanaryVerdict verdict =
      judge_canary(history.ok() ? *history : std::vector<double>{}, *ms, options_.canary);
  // Only agreeing samples join the history: a drifted GPU must come back to the old baseline.
  if (verdict.ok) (void)store_.add_canary(name, *ms, clock_.now_seconds());
  metrics_.canary_ran(name, verdict.ok);
  std::lock_guard<std::mutex> lock(mutex_);
  slot.health.canary = verdict.to_json(*ms);
  slot.health.jobs_since_canary = 0;
  if (verdict.ok) {
    slot.health.drain_reason.clear();
    slot.health.state = "idle";
    return true;
  }
  slot.health.state = "drained";
  slot.health.drain_reason =
      fmt::format("canary drift: {:.4f} ms vs baseline {:.4f} ms ({:.1f} % > {:.1f} %)", *ms,
                  *verdict.baseline_ms, 100 * *verdict.drift, 100 * options_.canary.max_drift);
  return false;
}

void EvalService::slot_loop(int index) {
  Slot& slot = *slots_[index];
  if (!restart_worker(index, "")) return;
  if (options_.canary_enabled) run_canary(index);
  while (true) {
    std::optional<QueuedJob> next;
    std::int64_t dispatch_seq = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (stopping_) return;
      if (slot.health.state == "drained") {
        stop_requested_.wait_for(lock,
                                 std::chrono::duration<double>(options_.canary.recheck_seconds),
                                 [&] { return stopping_; });
        if (stopping_) return;
        lock.unlock();
        run_canary(index);
        continue;
      }
      const bool canary_due = options_.canary_enabled && options_.canary.every_jobs > 0 &&
                              slot.health.jobs_since_canary >= options_.canary.every_jobs;
      if (canary_due) {
        lock.unlock();
        run_canary(index);
        continue;
      }
      work_available_.wait(lock, [&] { return stopping_ || queue_.size() > 0; });
      if (stopping_) return;
      next = queue_.pop();
      dispatch_seq = ++seq_;
      live_[next->id].slot = index;
      slot.health.state = "busy";
      slot.health.job = next->id;
    }
    run_job(index, *next, dispatch_seq);
    std::lock_guard<std::mutex> lock(mutex_);
    slot.health.job = 0;
    if (slot.health.state == "busy") slot.health.state = "idle";
  }
}

void EvalService::run_job(int index, const QueuedJob& queued, std::int64_t dispatch_seq) {
  Slot& slot = *slots_[index];
  const std::int64_t id = queued.id;
  auto fail = [&](const std::string& reason, double submitted_at, double started_at) {
    finish(id, JobState::kFailed, reason, "", "", submitted_at, started_at);
  };
  auto stored = store_.get(id);
  if (!stored.ok() || !*stored) {
    fail("store: " + (stored.ok() ? std::string("job vanished") : stored.error().message), 0, -1);
    return;
  }
  const Job job = **stored;
  const double started_at = clock_.now_seconds();
  auto started = store_.start(id, slot.health.name, dispatch_seq, started_at);
  if (!started.ok() || !*started) {
    // Cancelled between the queue and here: nothing ran.
    if (!started.ok()) fail("store: " + started.error().message, job.submitted_at, -1);
    return;
  }
  auto source = artifacts_.get(job.artifact);
  if (!source.ok()) {
    fail("artifact_missing: " + source.error().message, job.submitted_at, started_at);
    return;
  }
  EvalRequest request;
  request.task = job.task;
  request.arch = job.arch;
  request.source_name = job.source_name;
  request.source = std::move(source).value();
  auto options = EvalOptions::from_json(job.options);
  if (!options.ok()) {
    fail("invalid: " + options.error().message, job.submitted_at, started_at);
    return;
  }
  request.options = *options;
  // Checked when the job was accepted; a store edited by hand still gets a clear failure.
  const auto operation = parse_eval_operation(job.operation);
  if (!operation) {
    fail("invalid: unknown operation " + job.operation, job.submitted_at, started_at);
    return;
  }
  request.operation = *operation;
  if (!job.prebuilt.is_null()) {
    // The worker re-checks these hashes when it reads the files (eval/eval_pipeline.cc).
    PrebuiltFiles files;
    files.shared_object_sha256 = job.prebuilt.value("shared_object", "");
    files.ptx_sha256 = job.prebuilt.value("ptx", "");
    files.nvcc_version = job.prebuilt.value("nvcc_version", "");
    files.shared_object_path = artifacts_.path_of(files.shared_object_sha256);
    files.ptx_path = artifacts_.path_of(files.ptx_sha256);
    request.prebuilt = files;
  }

  auto reply = slot.worker->evaluate(request, options_.job_timeout_seconds);
  if (reply.ok()) {
    // The worker is ours, but its answer is still read strictly before it is kept.
    auto result = EvalResult::from_json(*reply);
    if (!result.ok()) {
      requeue_or_fail(id, job.owner, "bad_result: " + result.error().message);
      return;
    }
    // A done job keeps the reason it was re-queued for (how it got there stays visible).
    finish(id, JobState::kDone, job.reason, std::string(ptxb_status_name(result->status)),
           reply->dump(), job.submitted_at, started_at);
    std::lock_guard<std::mutex> lock(mutex_);
    ++slot.health.jobs_done;
    ++slot.health.jobs_since_canary;
    return;
  }
  const Error& error = reply.error();
  const std::string reason = error.code + ": " + error.message;
  if (error.code == kWorkerCrashed || error.code == kWorkerTimeout) restart_worker(index, reason);
  requeue_or_fail(id, job.owner, reason);
}

}  // namespace ptxb::service
