#include "service/eval_service.h"

#include <algorithm>
#include <chrono>

#include "core/strings.h"
#include "service/job_access.h"

namespace ptxb::service {

Json WorkerHealth::to_json() const {
  return Json{{"name", name},
              {"state", state},
              {"job", job ? Json(std::to_string(job)) : Json(nullptr)},
              {"jobs_done", jobs_done},
              {"restarts", restarts},
              {"last_error", last_error.empty() ? Json(nullptr) : Json(last_error)},
              {"drain_reason", drain_reason.empty() ? Json(nullptr) : Json(drain_reason)},
              {"canary", canary},
              {"jobs_since_canary", jobs_since_canary}};
}

EvalService::EvalService(JobStore& store, ArtifactStore& artifacts, const TaskRegistry& registry,
                         std::vector<std::unique_ptr<Worker>> workers, const Clock& clock,
                         ServiceOptions options)
    : store_(store),
      artifacts_(artifacts),
      registry_(registry),
      clock_(clock),
      options_(std::move(options)) {
  for (auto& worker : workers) {
    auto slot = std::make_unique<Slot>();
    slot->health.name = worker->name();
    slot->worker = std::move(worker);
    slots_.push_back(std::move(slot));
  }
}

EvalService::~EvalService() {
  stop();
}

Status EvalService::start() {
  PTXB_ASSIGN_OR_RETURN(std::int64_t max_seq, store_.max_seq());
  PTXB_ASSIGN_OR_RETURN(std::vector<Job> unfinished, store_.unfinished());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seq_ = max_seq;
    for (const Job& job : unfinished) {
      if (job.state == JobState::kRunning) {
        // It was running when the service died: its worker died with it (parent-death
        // signal), so nothing of that attempt survives.
        if (job.attempts >= options_.max_attempts) {
          PTXB_RETURN_IF_ERROR(store_.finish(job.id, JobState::kFailed,
                                             "service_restart: the service stopped while it ran, "
                                             "attempts spent",
                                             "", "", clock_.now_seconds()));
          metrics_.job_finished("failed", "", "service_restart", -1, -1);
          continue;
        }
        PTXB_RETURN_IF_ERROR(
            store_.requeue(job.id, "service_restart: re-queued after a service restart"));
      }
      queue_.push(job.owner, job.id);
      live_[job.id] = Live{job.owner, -1};
      ++live_per_owner_[job.owner];
    }
    started_ = true;
  }
  for (std::size_t i = 0; i < slots_.size(); ++i)
    slots_[i]->thread = std::thread([this, i] { slot_loop(static_cast<int>(i)); });
  housekeeping_ = std::thread([this] { housekeeping_loop(); });
  return ok_status();
}

void EvalService::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || !started_) {
      stopping_ = true;
      return;
    }
    stopping_ = true;
  }
  work_available_.notify_all();
  job_changed_.notify_all();
  stop_requested_.notify_all();
  for (auto& slot : slots_) slot->worker->kill();
  for (auto& slot : slots_)
    if (slot->thread.joinable()) slot->thread.join();
  if (housekeeping_.joinable()) housekeeping_.join();
}

Result<InsertOutcome> EvalService::submit(const Client& client, const SubmitRequest& request) {
  PTXB_ASSIGN_OR_RETURN(
      Job job, make_job(request, client.name, registry_, artifacts_, clock_.now_seconds()));
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) return make_error("unavailable", "the service is stopping");
  PTXB_ASSIGN_OR_RETURN(InsertOutcome outcome, admit_job(store_, client, std::move(job),
                                                         live_per_owner_[client.name], seq_));
  if (outcome.created) {
    queue_.push(client.name, outcome.job.id);
    live_[outcome.job.id] = Live{client.name, -1};
    ++live_per_owner_[client.name];
    metrics_.job_submitted();
    work_available_.notify_one();
  }
  return outcome;
}

Result<Job> EvalService::get(const std::string& owner, std::int64_t id) {
  return owned_job(store_, owner, id);
}

Result<Job> EvalService::wait(const std::string& owner, std::int64_t id, double seconds) {
  PTXB_ASSIGN_OR_RETURN(Job job, get(owner, id));
  if (is_terminal(job.state) || seconds <= 0) return job;
  const auto deadline = wait_deadline(seconds, options_.max_wait_seconds);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (waiters_ >= options_.max_waiters) return job;  // answer now: keep threads for others
    ++waiters_;
    // In memory: a job leaves live_ when it becomes terminal.
    auto changed = [&] { return stopping_ || live_.find(id) == live_.end(); };
    job_changed_.wait_until(lock, deadline, changed);
    --waiters_;
  }
  return get(owner, id);
}

Result<std::string> EvalService::result(const std::string& owner, std::int64_t id) {
  return owned_result(store_, owner, id);
}

Result<Job> EvalService::cancel(const std::string& owner, std::int64_t id) {
  PTXB_ASSIGN_OR_RETURN(Job job, get(owner, id));
  if (is_terminal(job.state)) return job;
  Worker* to_kill = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(id);
    if (it != live_.end()) {
      queue_.remove(it->second.owner, id);
      if (it->second.slot >= 0) to_kill = slots_[it->second.slot]->worker.get();
    }
  }
  const bool running = to_kill != nullptr;
  finish(id, JobState::kCancelled,
         running ? "cancelled: by its owner while it ran (worker restarted)"
                 : "cancelled: by its owner",
         "", "", job.submitted_at, running ? clock_.now_seconds() : -1);
  // The evaluation is stopped by ending its worker; the slot sees the job cancelled and only
  // restarts the worker.
  if (to_kill) to_kill->kill();
  return get(owner, id);
}

Result<std::vector<Job>> EvalService::list(const JobFilter& filter) {
  return list_jobs(store_, filter);
}

Result<std::optional<Job>> EvalService::find_by_key(const std::string& owner,
                                                    const std::string& key) {
  return job_by_key(store_, owner, key);
}

bool EvalService::finish(std::int64_t id, JobState state, const std::string& reason,
                         const std::string& verdict, const std::string& result_json,
                         double queued_at, double started_at) {
  const double now = clock_.now_seconds();
  auto finished = store_.finish(id, state, reason, verdict, result_json, now);
  const bool changed = finished.ok() && *finished;
  if (changed)
    metrics_.job_finished(std::string(job_state_name(state)), verdict, reason,
                          started_at > 0 ? started_at - queued_at : -1,
                          started_at > 0 ? now - started_at : -1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(id);
    if (it != live_.end() && (changed || !finished.ok())) {
      if (--live_per_owner_[it->second.owner] <= 0) live_per_owner_.erase(it->second.owner);
      live_.erase(it);
    }
  }
  job_changed_.notify_all();
  return changed;
}

void EvalService::requeue_or_fail(std::int64_t id, const std::string& owner,
                                  const std::string& reason) {
  auto job = store_.get(id);
  if (!job.ok() || !*job || (*job)->state != JobState::kRunning) return;  // cancelled meanwhile
  if ((*job)->attempts >= options_.max_attempts) {
    finish(id, JobState::kFailed, reason, "", "", (*job)->submitted_at, (*job)->started_at);
    return;
  }
  auto requeued = store_.requeue(id, reason);
  if (!requeued.ok() || !*requeued) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(id);
    if (it == live_.end()) return;
    it->second.slot = -1;
    queue_.push_front(owner, id);
  }
  work_available_.notify_one();
  job_changed_.notify_all();
}

Json EvalService::health() {
  std::lock_guard<std::mutex> lock(mutex_);
  Json workers = Json::array();
  int serving = 0, busy = 0;
  for (const auto& slot : slots_) {
    workers.push_back(slot->health.to_json());
    if (slot->health.state == "idle" || slot->health.state == "busy") ++serving;
    if (slot->health.state == "busy") ++busy;
  }
  const std::int64_t running = static_cast<std::int64_t>(live_.size() - queue_.size());
  return Json{{"status", serving > 0 ? "ok" : "degraded"},
              {"workers", workers},
              {"capacity",
               Json{{"workers", slots_.size()}, {"serving", serving}, {"free", serving - busy}}},
              {"queue",
               Json{{"queued", queue_.size()}, {"running", running}, {"owners", queue_.owners()}}}};
}

std::string EvalService::metrics_text() {
  ServiceGauges gauges;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    gauges.queued = static_cast<std::int64_t>(queue_.size());
    gauges.running = static_cast<std::int64_t>(live_.size() - queue_.size());
    gauges.waiters = waiters_;
    for (const auto& slot : slots_) gauges.worker_states[slot->health.name] = slot->health.state;
  }
  return metrics_.render(gauges);
}

std::pair<int, int> EvalService::run_retention() {
  const double before = clock_.now_seconds() - options_.retention_seconds;
  auto purged = store_.purge_finished(before);
  int artifacts_removed = 0;
  if (auto live = store_.live_artifacts(); live.ok()) {
    std::set<std::string> keep(live->begin(), live->end());
    artifacts_removed = artifacts_.remove_unreferenced(keep, options_.retention_seconds);
  }
  return {purged.ok() ? *purged : 0, artifacts_removed};
}

void EvalService::housekeeping_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    run_retention();
    lock.lock();
    stop_requested_.wait_for(lock, std::chrono::duration<double>(options_.housekeeping_seconds),
                             [&] { return stopping_; });
  }
}

}  // namespace ptxb::service
