// `ptxbench serve --upstream URL,...`: a front that owns no GPU and forwards its clients' jobs to
// several GPU services (docs/service.md "Several hosts"). It answers the same v1 API as one
// service (service/job_service.h), keeps its own job store and artifacts, and records in its own
// SQLite database which backend holds each job (service/upstream_ledger.h), so it survives its
// own restart: it resumes polling the backends for the jobs it owns, and never posts a job twice
// (every hand-over carries an idempotency key, and a hand-over whose answer was lost is looked up
// by that key before anything else happens to the job).
//
// Threads: one dispatcher (the fair queue at the front -> the backend with the most free GPU
// capacity, service/upstream_routing.h) and one poller per backend (its health, then the state of
// the jobs the front owns there; a finished job's result is copied into the front's store).
//
// A backend that goes away: its jobs wait for it for `backend_grace_seconds`; the jobs it never
// started move to another backend only when it confirms that it never ran them (the key is
// unknown to it, or it answers a cancel of a job that had not started); when it stays
// unreachable the front cannot know, and its jobs fail with reason `backend_unreachable` rather
// than risk a second evaluation.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "llm/http_transport.h"
#include "service/clock.h"
#include "service/fair_queue.h"
#include "service/job_service.h"
#include "service/service_client.h"
#include "service/upstream_ledger.h"
#include "service/upstream_routing.h"
#include "tasks/registry.h"

namespace ptxb::service {

struct UpstreamOptions {
  std::vector<std::string> backends;  // base URLs, "http://gpu1:8470"
  std::string token;                  // the front's bearer token on every backend ("" = none)
  double poll_seconds = 0.25;         // how often each backend's health and jobs are read
  // How long a backend may be unreachable, or reachable without a serving GPU worker, before its
  // jobs are moved (when it confirms it never ran them) or failed (when it cannot say).
  double backend_grace_seconds = 300;
  double max_wait_seconds = 60;  // the longest long-poll
  int max_waiters = 256;         // long-polls at once (as ServiceOptions::max_waiters)
  double retention_seconds = 7 * 24 * 3600.0;
};

class UpstreamService final : public JobService {
 public:
  UpstreamService(JobStore& store, UpstreamLedger& ledger, ArtifactStore& artifacts,
                  const TaskRegistry& registry, HttpTransport& transport, const Clock& clock,
                  UpstreamOptions options);
  ~UpstreamService() override;

  // Rebuilds the queue and the owned jobs from the store and the ledger, then starts the threads.
  Status start();
  void stop();

  Result<InsertOutcome> submit(const Client& client, const SubmitRequest& request) override;
  Result<Job> wait(const std::string& owner, std::int64_t id, double seconds) override;
  Result<std::string> result(const std::string& owner, std::int64_t id) override;
  Result<Job> cancel(const std::string& owner, std::int64_t id) override;
  Result<std::vector<Job>> list(const JobFilter& filter) override;
  Result<std::optional<Job>> find_by_key(const std::string& owner, const std::string& key) override;
  Json health() override;
  std::string metrics_text() override;
  ServiceMetrics& metrics() override { return metrics_; }
  ArtifactStore& artifacts() override { return artifacts_; }

 private:
  struct Owned {  // a job handed to a backend
    std::size_t backend = 0;
    int round = 0;
    std::string backend_job;  // "" until the backend's answer was recorded
    std::string backend_state = "queued";
    // The dispatcher is posting it: its key must not be looked up yet (not found would only
    // mean "not arrived yet").
    bool posting = false;
  };
  struct Backend {
    std::string url;
    std::unique_ptr<ServiceClient> client;
    BackendLoad load;
    std::string status = "unknown";  // ok | degraded | unreachable | unknown
    std::string last_error;
    double unreachable_since = 0;  // 0: reachable (or never tried)
    double degraded_since = 0;     // reachable without a serving worker since
    // Hand-overs a health reading may not show: posting now, or answered after the reading was
    // asked for. load.handed is recomputed from these at each reading.
    int posting = 0;
    std::int64_t posted = 0;  // hand-overs answered so far
    std::thread poller;
  };

  // upstream_service.cc: the front's own state.
  Result<Job> get(const std::string& owner, std::int64_t id);
  bool finish(std::int64_t id, JobState state, const std::string& reason,
              const std::string& verdict, const std::string& result_json);
  // Back into the front's queue (first in its owner's line) for hand-over `round`.
  void requeue(std::int64_t id, int round, const std::string& reason);

  // upstream_forward.cc: the dispatcher and the backends' pollers.
  void dispatch_loop();
  void forward(std::int64_t id, std::size_t backend, int round, std::int64_t dispatch_seq);
  void poll_loop(std::size_t backend);
  void refresh_health(std::size_t backend);
  void resolve_unanswered(std::size_t backend);
  void follow_jobs(std::size_t backend);
  void collect(std::size_t backend, std::int64_t id, const Json& backend_job);
  void give_up_or_move(std::size_t backend);
  std::vector<std::pair<std::int64_t, Owned>> owned_on(std::size_t backend);

  JobStore& store_;
  UpstreamLedger& ledger_;
  ArtifactStore& artifacts_;
  const TaskRegistry& registry_;
  const Clock& clock_;
  UpstreamOptions options_;
  ServiceMetrics metrics_;

  std::mutex mutex_;                        // guards everything below
  std::condition_variable work_changed_;    // the queue or a backend's capacity changed
  std::condition_variable job_changed_;     // a job became terminal (waiters filter by id)
  std::condition_variable stop_requested_;  // the pollers' sleep
  FairQueue queue_;
  std::map<std::int64_t, std::string> live_;  // queued or handed over: id -> owner
  std::map<std::string, int> live_per_owner_;
  std::map<std::int64_t, int> rounds_;  // next hand-over of a job waiting at the front
  std::map<std::int64_t, Owned> owned_;
  std::vector<std::unique_ptr<Backend>> backends_;
  std::size_t rotate_ = 0;
  std::int64_t seq_ = 0;
  int waiters_ = 0;
  bool stopping_ = false;
  bool started_ = false;
  double last_retention_ = 0;
  std::thread dispatcher_;
};

}  // namespace ptxb::service
