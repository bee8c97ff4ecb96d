// The front's own side (service/upstream_service.h): its store, queue, waiters and health. The
// hand-over to the backends and their polling are in upstream_forward.cc.
#include "service/upstream_service.h"

#include <algorithm>
#include <chrono>

#include "service/job_access.h"

namespace ptxb::service {

UpstreamService::UpstreamService(JobStore& store, UpstreamLedger& ledger, ArtifactStore& artifacts,
                                 const TaskRegistry& registry, HttpTransport& transport,
                                 const Clock& clock, UpstreamOptions options)
    : store_(store),
      ledger_(ledger),
      artifacts_(artifacts),
      registry_(registry),
      clock_(clock),
      options_(std::move(options)) {
  for (const auto& url : options_.backends) {
    auto backend = std::make_unique<Backend>();
    backend->client = std::make_unique<ServiceClient>(transport, url, options_.token);
    backend->url = backend->client->base_url();
    backends_.push_back(std::move(backend));
  }
}

UpstreamService::~UpstreamService() {
  stop();
}

Status UpstreamService::start() {
  PTXB_ASSIGN_OR_RETURN(std::int64_t max_seq, store_.max_seq());
  PTXB_ASSIGN_OR_RETURN(std::vector<Job> unfinished, store_.unfinished());
  PTXB_ASSIGN_OR_RETURN(std::vector<Forwarding> rows, ledger_.all());
  std::map<std::int64_t, Forwarding> forwarding;
  for (const auto& row : rows) forwarding[row.job] = row;
  std::vector<std::pair<std::int64_t, std::string>> orphaned;  // handed to a removed backend
  {
    std::lock_guard<std::mutex> lock(mutex_);
    seq_ = max_seq;
    for (const Job& job : unfinished) {
      live_[job.id] = job.owner;
      ++live_per_owner_[job.owner];
      auto row = forwarding.find(job.id);
      const int round = row == forwarding.end() ? 0 : row->second.round;
      if (row != forwarding.end() && !row->second.backend.empty()) {
        // Handed over (or maybe: the write-ahead row): followed there, found by its key.
        auto at = std::find_if(backends_.begin(), backends_.end(),
                               [&](const auto& b) { return b->url == row->second.backend; });
        if (at == backends_.end()) {
          orphaned.emplace_back(job.id, row->second.backend);
          continue;
        }
        Owned owned;
        owned.backend = static_cast<std::size_t>(at - backends_.begin());
        owned.round = round;
        owned.backend_job = row->second.backend_job;
        owned_[job.id] = owned;
        if (job.state == JobState::kQueued) {
          auto marked = store_.start(job.id, row->second.backend, ++seq_, clock_.now_seconds());
          if (!marked.ok()) return marked.error();
        }
        continue;
      }
      // Never handed over: back in the front's queue, in submission order.
      if (job.state == JobState::kRunning) {
        auto requeued = store_.requeue(job.id, "front_restart: re-queued after a restart");
        if (!requeued.ok()) return requeued.error();
      }
      rounds_[job.id] = round;
      queue_.push(job.owner, job.id);
    }
    started_ = true;
  }
  for (const auto& [id, url] : orphaned)
    finish(id, JobState::kFailed,
           fmt::format("backend_removed: it was handed to {}, which is no longer an upstream of "
                       "this front; it may have run there, so it is not handed over again",
                       url),
           "", "");
  dispatcher_ = std::thread([this] { dispatch_loop(); });
  for (std::size_t i = 0; i < backends_.size(); ++i)
    backends_[i]->poller = std::thread([this, i] { poll_loop(i); });
  return ok_status();
}

void UpstreamService::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_ || !started_) {
      stopping_ = true;
      return;
    }
    stopping_ = true;
  }
  work_changed_.notify_all();
  job_changed_.notify_all();
  stop_requested_.notify_all();
  if (dispatcher_.joinable()) dispatcher_.join();
  for (auto& backend : backends_)
    if (backend->poller.joinable()) backend->poller.join();
}

Result<InsertOutcome> UpstreamService::submit(const Client& client, const SubmitRequest& request) {
  // The same validation as a GPU service: a request the backends would refuse is refused here.
  PTXB_ASSIGN_OR_RETURN(
      Job job, make_job(request, client.name, registry_, artifacts_, clock_.now_seconds()));
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_) return make_error("unavailable", "the service is stopping");
  PTXB_ASSIGN_OR_RETURN(InsertOutcome outcome, admit_job(store_, client, std::move(job),
                                                         live_per_owner_[client.name], seq_));
  if (outcome.created) {
    queue_.push(client.name, outcome.job.id);
    live_[outcome.job.id] = client.name;
    ++live_per_owner_[client.name];
    rounds_[outcome.job.id] = 0;
    metrics_.job_submitted();
    work_changed_.notify_all();
  }
  return outcome;
}

Result<Job> UpstreamService::get(const std::string& owner, std::int64_t id) {
  return owned_job(store_, owner, id);
}

Result<Job> UpstreamService::wait(const std::string& owner, std::int64_t id, double seconds) {
  PTXB_ASSIGN_OR_RETURN(Job job, get(owner, id));
  if (is_terminal(job.state) || seconds <= 0) return job;
  const auto deadline = wait_deadline(seconds, options_.max_wait_seconds);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (waiters_ >= options_.max_waiters) return job;
    ++waiters_;
    job_changed_.wait_until(lock, deadline, [&] { return stopping_ || !live_.count(id); });
    --waiters_;
  }
  return get(owner, id);
}

Result<std::string> UpstreamService::result(const std::string& owner, std::int64_t id) {
  return owned_result(store_, owner, id);
}

Result<Job> UpstreamService::cancel(const std::string& owner, std::int64_t id) {
  PTXB_ASSIGN_OR_RETURN(Job job, get(owner, id));
  if (is_terminal(job.state)) return job;
  ServiceClient* backend = nullptr;
  std::string backend_job;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.remove(job.owner, id);
    if (auto it = owned_.find(id); it != owned_.end()) {
      backend = backends_[it->second.backend]->client.get();
      backend_job = it->second.backend_job;
    }
  }
  // First here, so the poller never collects it; then on the backend, as far as it answers (a
  // job whose hand-over is still unanswered is cancelled by the dispatcher once it is).
  finish(id, JobState::kCancelled, "cancelled: by its owner", "", "");
  if (backend && !backend_job.empty()) (void)backend->post("/v1/jobs/" + backend_job + "/cancel");
  return get(owner, id);
}

Result<std::vector<Job>> UpstreamService::list(const JobFilter& filter) {
  return list_jobs(store_, filter);
}

Result<std::optional<Job>> UpstreamService::find_by_key(const std::string& owner,
                                                        const std::string& key) {
  return job_by_key(store_, owner, key);
}

bool UpstreamService::finish(std::int64_t id, JobState state, const std::string& reason,
                             const std::string& verdict, const std::string& result_json) {
  auto finished = store_.finish(id, state, reason, verdict, result_json, clock_.now_seconds());
  const bool changed = finished.ok() && *finished;
  if (changed) metrics_.job_finished(std::string(job_state_name(state)), verdict, reason, -1, -1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(id);
    if (it != live_.end() && (changed || !finished.ok())) {
      queue_.remove(it->second, id);
      if (--live_per_owner_[it->second] <= 0) live_per_owner_.erase(it->second);
      live_.erase(it);
      owned_.erase(id);
      rounds_.erase(id);
    }
  }
  if (changed) (void)ledger_.forget(id);
  job_changed_.notify_all();
  work_changed_.notify_all();
  return changed;
}

void UpstreamService::requeue(std::int64_t id, int round, const std::string& reason) {
  auto requeued = store_.requeue(id, reason);
  if (!requeued.ok() || !*requeued) return;  // finished or cancelled meanwhile
  (void)ledger_.release(id, round);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(id);
    if (it == live_.end()) return;
    owned_.erase(id);
    rounds_[id] = round;
    queue_.push_front(it->second, id);
  }
  work_changed_.notify_all();
  job_changed_.notify_all();
}

Json UpstreamService::health() {
  const double now = clock_.now_seconds();
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::size_t, int> owned_per_backend;
  for (const auto& [id, owned] : owned_) ++owned_per_backend[owned.backend];
  Json backends = Json::array();
  int workers = 0, serving = 0, free = 0, reachable = 0;
  for (std::size_t i = 0; i < backends_.size(); ++i) {
    const Backend& b = *backends_[i];
    backends.push_back(
        Json{{"url", b.url},
             {"status", b.status},
             {"serving", b.load.serving},
             {"free", b.load.free()},
             {"queued", b.load.queued},
             {"running", b.load.running},
             {"owned", owned_per_backend[i]},
             {"unreachable_seconds",
              b.unreachable_since > 0 ? Json(now - b.unreachable_since) : Json(nullptr)},
             {"last_error", b.last_error.empty() ? Json(nullptr) : Json(b.last_error)}});
    if (!b.load.reachable) continue;
    ++reachable;
    workers += b.load.serving;
    serving += b.load.serving;
    free += std::max(0, b.load.free());
  }
  return Json{
      {"status", serving > 0 ? "ok" : "degraded"},
      {"role", "upstream"},
      {"backends", backends},
      {"capacity", Json{{"workers", workers},
                        {"serving", serving},
                        {"free", free},
                        {"backends", backends_.size()},
                        {"reachable", reachable}}},
      {"queue",
       Json{{"queued", queue_.size()}, {"running", owned_.size()}, {"owners", queue_.owners()}}}};
}

std::string UpstreamService::metrics_text() {
  ServiceGauges gauges;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    gauges.queued = static_cast<std::int64_t>(queue_.size());
    gauges.running = static_cast<std::int64_t>(owned_.size());
    gauges.waiters = waiters_;
    // One "worker" per backend: its state is the backend's status (ok, degraded, unreachable).
    for (const auto& b : backends_) gauges.worker_states[b->url] = b->status;
  }
  return metrics_.render(gauges);
}

}  // namespace ptxb::service
