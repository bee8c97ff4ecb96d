// The evaluation service's core: accepts jobs, keeps them in the job store, schedules them
// fairly onto one worker per GPU, restarts crashed or hung workers, runs the calibration canary
// and answers status, results, cancels and lists. No network here: the HTTP front end
// (service/http_api.h) maps requests onto these calls, and the unit tests call them directly
// with a manual clock and fake workers.
//
// Error codes of the calls (the front end's HTTP status in brackets): invalid (400),
// unknown_task (400), unsupported_operation (400), artifact_missing (409), not_found (404),
// not_finished (409), quota (429), store (500).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "eval/eval_pipeline.h"
#include "service/artifact_store.h"
#include "service/canary.h"
#include "service/clock.h"
#include "service/fair_queue.h"
#include "service/job_service.h"
#include "service/job_store.h"
#include "service/service_metrics.h"
#include "service/submit_request.h"
#include "service/tokens.h"
#include "service/worker.h"
#include "tasks/registry.h"

namespace ptxb::service {

struct ServiceOptions {
  // Dispatches of one job: a worker crash, hang or evaluator infrastructure failure, or a
  // service restart while it ran, re-queues it (at the front of its owner's queue) until they
  // are spent; then it fails with the last reason.
  int max_attempts = 2;
  // A worker's limit for one evaluation: the supervisor's own cap plus the compile's.
  double job_timeout_seconds = kSupervisorTimeoutSeconds + 180;
  double canary_timeout_seconds = 300;
  CanaryPolicy canary;
  bool canary_enabled = true;
  // Terminal jobs (and artifacts no job names) are deleted this long after they finished.
  double retention_seconds = 7 * 24 * 3600.0;
  double housekeeping_seconds = 600;  // how often retention runs
  double max_wait_seconds = 60;       // the longest long-poll
  // Long-polls waiting at once; past it a status request answers at once. Leaves HTTP threads
  // for the requests that do not wait (service/http_api.h sizes the pool above it).
  int max_waiters = 256;
  double worker_restart_backoff_seconds = 1;  // between failed starts of a worker
};

// What health says about one worker.
struct WorkerHealth {
  std::string name;
  std::string state = "starting";  // starting | idle | busy | restarting | drained | down
  std::int64_t job = 0;            // the running job's id, 0 when none
  std::int64_t jobs_done = 0;
  int restarts = 0;
  std::string last_error;
  std::string drain_reason;
  Json canary = nullptr;  // the last canary's verdict (CanaryVerdict::to_json)
  std::int64_t jobs_since_canary = 0;

  Json to_json() const;
};

class EvalService final : public JobService {
 public:
  EvalService(JobStore& store, ArtifactStore& artifacts, const TaskRegistry& registry,
              std::vector<std::unique_ptr<Worker>> workers, const Clock& clock,
              ServiceOptions options);
  ~EvalService();

  // Recovers the store's unfinished jobs (running ones re-queued, or failed when their attempts
  // are spent) and starts one thread per worker plus housekeeping.
  Status start();
  // Stops the threads and kills the workers; queued and running jobs stay in the store.
  void stop();

  Result<InsertOutcome> submit(const Client& client, const SubmitRequest& request) override;
  Result<Job> get(const std::string& owner, std::int64_t id);
  // The job once it is terminal, or as it is after `seconds` (capped at max_wait_seconds).
  Result<Job> wait(const std::string& owner, std::int64_t id, double seconds) override;
  Result<std::string> result(const std::string& owner,
                             std::int64_t id) override;  // EvalResult JSON
  Result<Job> cancel(const std::string& owner, std::int64_t id) override;
  Result<std::vector<Job>> list(const JobFilter& filter) override;
  // The owner's job submitted with idempotency key `key`, if any (a client that lost track of
  // where it submitted a turn finds it again before it submits anywhere else).
  Result<std::optional<Job>> find_by_key(const std::string& owner, const std::string& key) override;

  Json health() override;
  std::string metrics_text() override;
  ServiceMetrics& metrics() override { return metrics_; }
  ArtifactStore& artifacts() override { return artifacts_; }
  // Runs retention once (also on the housekeeping thread): deleted jobs and artifacts.
  std::pair<int, int> run_retention();

 private:
  struct Live {  // a queued or running job
    std::string owner;
    int slot = -1;  // the worker it runs on, -1 while queued
  };
  struct Slot {
    std::unique_ptr<Worker> worker;
    WorkerHealth health;
    std::thread thread;
  };

  void slot_loop(int index);
  // One dispatch of `job` on slot `index`: returns after the job is terminal or re-queued.
  void run_job(int index, const QueuedJob& queued, std::int64_t dispatch_seq);
  // The canary on slot `index`; false when the GPU was drained.
  bool run_canary(int index);
  bool restart_worker(int index, const std::string& why);
  // Marks the job terminal and tells its waiters; false when it already was.
  bool finish(std::int64_t id, JobState state, const std::string& reason,
              const std::string& verdict, const std::string& result_json, double queued_at,
              double started_at);
  void requeue_or_fail(std::int64_t id, const std::string& owner, const std::string& reason);
  void housekeeping_loop();

  JobStore& store_;
  ArtifactStore& artifacts_;
  const TaskRegistry& registry_;
  const Clock& clock_;
  ServiceOptions options_;
  ServiceMetrics metrics_;

  std::mutex mutex_;  // guards everything below
  std::condition_variable work_available_;
  std::condition_variable job_changed_;     // any job's state changed (waiters filter by id)
  std::condition_variable stop_requested_;  // housekeeping's sleep
  FairQueue queue_;
  std::map<std::int64_t, Live> live_;
  std::map<std::string, int> live_per_owner_;
  std::vector<std::unique_ptr<Slot>> slots_;
  std::int64_t seq_ = 0;
  int waiters_ = 0;
  bool stopping_ = false;
  bool started_ = false;
  std::thread housekeeping_;
};

}  // namespace ptxb::service
