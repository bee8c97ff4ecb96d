// The front's hand-over side (service/upstream_service.h): the dispatcher posts queued jobs to
// the backend with the most free GPU capacity; one poller per backend reads its health, finds the
// jobs whose hand-over went unanswered by their key, copies finished jobs' results into the
// front's store, and applies the grace rules to a backend that went away.
#include <chrono>
#include <set>

#include "eval/eval_types.h"
#include "service/upstream_service.h"

namespace ptxb::service {
namespace {

// Retention runs this often at the front (as the GPU service's housekeeping).
constexpr double kRetentionEverySeconds = 600;

bool is_busy_code(const std::string& code) {
  return code == "quota" || code == "rate_limited" || code == "unavailable";
}

// A backend's job id ("17"); 0 for anything else (ids start at 1).
std::int64_t backend_id_of(const std::string& text) {
  if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
    return 0;
  return std::stoll(text);
}

}  // namespace

void UpstreamService::dispatch_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (clock_.now_seconds() - last_retention_ > kRetentionEverySeconds) {
      last_retention_ = clock_.now_seconds();
      lock.unlock();
      const double before = clock_.now_seconds() - options_.retention_seconds;
      (void)store_.purge_finished(before);
      if (auto live = store_.live_artifacts(); live.ok())
        artifacts_.remove_unreferenced(std::set<std::string>(live->begin(), live->end()),
                                       options_.retention_seconds);
      lock.lock();
      continue;
    }
    std::optional<std::size_t> target;
    if (queue_.size() > 0) {
      std::vector<BackendLoad> loads;
      for (const auto& backend : backends_) loads.push_back(backend->load);
      target = pick_backend(loads, &rotate_);
    }
    if (!target) {
      work_changed_.wait_for(lock, std::chrono::duration<double>(options_.poll_seconds));
      continue;
    }
    const std::int64_t id = queue_.pop()->id;
    const int round = rounds_[id];
    rounds_.erase(id);
    Owned owned;
    owned.backend = *target;
    owned.round = round;
    owned.posting = true;
    owned_[id] = owned;
    ++backends_[*target]->load.handed;
    ++backends_[*target]->posting;
    const std::int64_t dispatch_seq = ++seq_;
    lock.unlock();
    forward(id, *target, round, dispatch_seq);
    lock.lock();
    // Counted as answered a little late: a reading in between counts it twice, never not at all.
    --backends_[*target]->posting;
    ++backends_[*target]->posted;
  }
}

void UpstreamService::forward(std::int64_t id, std::size_t index, int round,
                              std::int64_t dispatch_seq) {
  Backend& backend = *backends_[index];
  auto stored = store_.get(id);
  if (!stored.ok() || !*stored) {
    finish(id, JobState::kFailed,
           "store: " + (stored.ok() ? std::string("job vanished") : stored.error().message), "",
           "");
    return;
  }
  const Job job = **stored;
  // Write-ahead: the ledger names the backend before the backend can hold the job.
  if (auto assigned = ledger_.assign(id, backend.url, round); !assigned.ok()) {
    finish(id, JobState::kFailed, "store: " + assigned.error().message, "", "");
    return;
  }
  auto started = store_.start(id, backend.url, dispatch_seq, clock_.now_seconds());
  if (!started.ok() || !*started) return;  // cancelled meanwhile: nothing was posted
  Json body{{"operation", job.operation},
            {"task", job.task},
            {"arch", job.arch},
            {"artifact", Json{{"sha256", job.artifact}, {"name", job.source_name}}},
            {"options", job.options},
            {"idempotency_key", ledger_.key(id, round)}};
  std::vector<std::string> shas = {job.artifact};
  if (!job.prebuilt.is_null()) {
    body["prebuilt"] = job.prebuilt;
    shas.push_back(job.prebuilt.value("shared_object", ""));
    shas.push_back(job.prebuilt.value("ptx", ""));
  }
  std::vector<std::pair<std::string, std::string>> artifacts;
  for (const auto& sha : shas) {
    auto bytes = artifacts_.get(sha);
    if (!bytes.ok()) {
      finish(id, JobState::kFailed, "artifact_missing: " + bytes.error().message, "", "");
      return;
    }
    artifacts.emplace_back(sha, std::move(bytes).value());
  }
  auto answer = backend.client->submit_body(body, artifacts);
  if (answer.ok()) {
    const std::string backend_job = answer->value("id", "");
    (void)ledger_.accepted(id, backend_job);
    bool cancelled_meanwhile = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = owned_.find(id);
      cancelled_meanwhile = it == owned_.end();
      if (!cancelled_meanwhile) {
        it->second.backend_job = backend_job;
        it->second.backend_state = answer->value("state", "queued");
        it->second.posting = false;
      }
    }
    // Its owner cancelled it while it was being posted: cancel the copy that just arrived.
    if (cancelled_meanwhile) (void)backend.client->post("/v1/jobs/" + backend_job + "/cancel");
    return;
  }
  const Error& error = answer.error();
  if (error.code == "network" || error.code == "timeout") {
    // Maybe posted: the backend's poller asks for the key once the backend answers again.
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = owned_.find(id); it != owned_.end()) it->second.posting = false;
    backend.last_error = error.message;
    return;
  }
  if (is_busy_code(error.code)) {
    requeue(id, round + 1, "upstream_busy: " + error.message);
    return;
  }
  finish(id, JobState::kFailed, "upstream_refused: " + error.message, "", "");
}

std::vector<std::pair<std::int64_t, UpstreamService::Owned>> UpstreamService::owned_on(
    std::size_t backend) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::int64_t, Owned>> out;
  for (const auto& [id, owned] : owned_)
    if (owned.backend == backend && !owned.posting) out.emplace_back(id, owned);
  return out;
}

void UpstreamService::poll_loop(std::size_t index) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    refresh_health(index);
    resolve_unanswered(index);
    follow_jobs(index);
    give_up_or_move(index);
    lock.lock();
    stop_requested_.wait_for(lock, std::chrono::duration<double>(options_.poll_seconds),
                             [&] { return stopping_; });
  }
}

void UpstreamService::refresh_health(std::size_t index) {
  Backend& backend = *backends_[index];
  std::int64_t posted_before = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    posted_before = backend.posted;
  }
  auto health = backend.client->get("/v1/health", 5);
  const double now = clock_.now_seconds();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (health.ok()) {
      backend.load = BackendLoad::from_health(*health);
      // What the reading cannot be sure to show: answered since it was asked for, or in flight.
      backend.load.handed = static_cast<int>(backend.posted - posted_before) + backend.posting;
      backend.status = health->value("status", "ok");
      backend.unreachable_since = 0;
      if (backend.load.serving > 0)
        backend.degraded_since = 0;
      else if (backend.degraded_since == 0)
        backend.degraded_since = now;
    } else {
      backend.load = BackendLoad{};
      backend.status = "unreachable";
      backend.last_error = health.error().message;
      if (backend.unreachable_since == 0) backend.unreachable_since = now;
    }
  }
  work_changed_.notify_all();
}

void UpstreamService::resolve_unanswered(std::size_t index) {
  Backend& backend = *backends_[index];
  for (const auto& [id, owned] : owned_on(index)) {
    if (!owned.backend_job.empty()) continue;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!backend.load.reachable) return;
    }
    auto found = backend.client->find(ledger_.key(id, owned.round));
    if (!found.ok()) continue;  // asked again at the next poll
    if (!*found) {
      // The backend answers and has no job under the key: the post never arrived, so the job
      // never ran there and may go anywhere.
      requeue(
          id, owned.round + 1,
          fmt::format("upstream_retry: {} never received hand-over {}", backend.url, owned.round));
      continue;
    }
    const std::string backend_job = (**found).value("id", "");
    (void)ledger_.accepted(id, backend_job);
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = owned_.find(id); it != owned_.end()) it->second.backend_job = backend_job;
  }
}

void UpstreamService::follow_jobs(std::size_t index) {
  Backend& backend = *backends_[index];
  std::map<std::int64_t, std::pair<std::int64_t, Owned>> by_backend_id;  // backend id -> ours
  for (const auto& [id, owned] : owned_on(index))
    if (!owned.backend_job.empty())
      by_backend_id[backend_id_of(owned.backend_job)] = std::make_pair(id, owned);
  if (by_backend_id.empty()) return;
  // The front's jobs on the backend, a page of up to 1000 at a time from the oldest it follows.
  std::map<std::int64_t, Json> listed;
  std::int64_t after = by_backend_id.begin()->first - 1;
  const std::int64_t last = by_backend_id.rbegin()->first;
  while (after < last) {
    auto page = backend.client->get(fmt::format("/v1/jobs?after={}&limit=1000", after), 30);
    if (!page.ok() || !page->contains("jobs") || !(*page)["jobs"].is_array()) return;
    const Json& jobs = (*page)["jobs"];
    for (const auto& job : jobs) listed[backend_id_of(job.value("id", ""))] = job;
    if (jobs.size() < 1000) break;
    const std::int64_t page_last = backend_id_of(jobs.back().value("id", ""));
    if (page_last <= after) break;
    after = page_last;
  }
  for (const auto& [backend_id, ours] : by_backend_id) {
    const auto& [id, owned] = ours;
    auto it = listed.find(backend_id);
    const std::string key = ledger_.key(id, owned.round);
    if (it == listed.end() || it->second.value("idempotency_key", Json(nullptr)) != key) {
      // Not there under our key: the backend's store was replaced, so this backend never ran
      // it (in the life it answers from) and never will.
      requeue(id, owned.round + 1,
              fmt::format("upstream_lost: {} no longer has job {} (its store was replaced)",
                          backend.url, backend_id));
      continue;
    }
    const std::string state = it->second.value("state", "");
    if (state == "done" || state == "failed" || state == "cancelled") {
      collect(index, id, it->second);
      continue;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto at = owned_.find(id); at != owned_.end()) at->second.backend_state = state;
  }
}

void UpstreamService::collect(std::size_t index, std::int64_t id, const Json& backend_job) {
  Backend& backend = *backends_[index];
  const std::string backend_id = backend_job.value("id", "");
  const std::string state = backend_job.value("state", "");
  const std::string reason =
      backend_job["reason"].is_string() ? backend_job["reason"].get<std::string>() : "";
  if (state != "done") {
    finish(id, JobState::kFailed,
           fmt::format("backend {} job {} {}: {}", backend.url, backend_id, state,
                       reason.empty() ? "-" : reason),
           "", "");
    return;
  }
  auto result = backend.client->get("/v1/jobs/" + backend_id + "/result", 60);
  if (!result.ok()) return;  // read again at the next poll
  // Read strictly before it is kept, as the GPU service reads its workers' answers.
  auto parsed = EvalResult::from_json(*result);
  if (!parsed.ok()) {
    finish(id, JobState::kFailed,
           fmt::format("bad_result: backend {} job {}: {}", backend.url, backend_id,
                       parsed.error().message),
           "", "");
    return;
  }
  // The backend's reason (a requeue there) or else the front's own (a hand-over moved).
  std::string kept = reason;
  if (kept.empty())
    if (auto ours = store_.get(id); ours.ok() && *ours) kept = (**ours).reason;
  finish(id, JobState::kDone, kept, std::string(ptxb_status_name(parsed->status)), result->dump());
}

void UpstreamService::give_up_or_move(std::size_t index) {
  Backend& backend = *backends_[index];
  const double now = clock_.now_seconds();
  double unreachable_for = 0, degraded_for = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (backend.unreachable_since > 0) unreachable_for = now - backend.unreachable_since;
    if (backend.degraded_since > 0) degraded_for = now - backend.degraded_since;
  }
  if (unreachable_for > options_.backend_grace_seconds) {
    // It cannot say whether it ran them: failing is the only answer that never evaluates twice.
    for (const auto& [id, owned] : owned_on(index))
      finish(id, JobState::kFailed,
             fmt::format("backend_unreachable: {} did not answer for {:.0f} s; the job may have "
                         "run there, so it is not handed over again",
                         backend.url, unreachable_for),
             "", "");
    return;
  }
  if (degraded_for <= options_.backend_grace_seconds) return;
  // Reachable, but no GPU worker serves: the jobs it has not started go elsewhere once its own
  // answer to their cancel says they never started.
  for (const auto& [id, owned] : owned_on(index)) {
    if (owned.backend_job.empty() || owned.backend_state != "queued") continue;
    auto cancelled = backend.client->post("/v1/jobs/" + owned.backend_job + "/cancel");
    if (!cancelled.ok()) continue;
    const bool never_started =
        cancelled->value("state", "") == "cancelled" && (*cancelled)["started_at"].is_null();
    if (never_started)
      requeue(id, owned.round + 1,
              fmt::format("moved: {} had no serving GPU worker for {:.0f} s and confirmed it "
                          "never started job {}",
                          backend.url, degraded_for, owned.backend_job));
    else if (cancelled->value("state", "") == "cancelled")
      finish(id, JobState::kFailed,
             fmt::format("backend_degraded: {} had started job {} when it was cancelled",
                         backend.url, owned.backend_job),
             "", "");
  }
}

}  // namespace ptxb::service
