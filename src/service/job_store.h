// Where the service's jobs, results and canary history live: behind an interface so that the
// service core is tested against the same store it runs with (SqliteJobStore on a temporary
// file) and a fleet front end can keep its own (service/upstream.h). Every transition is one
// atomic write; a transition that does not apply (finishing a job that is no longer running)
// reports false instead of writing, which is how a job completes exactly once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "service/job.h"

namespace ptxb::service {

struct InsertOutcome {
  Job job;
  bool created = true;  // false: the owner's idempotency key named an existing job
};

struct JobFilter {
  std::string owner;              // "" = every owner
  std::optional<JobState> state;  // nullopt = any
  std::int64_t after_id = 0;      // ids greater than this (paging)
  int limit = 100;
};

class JobStore {
 public:
  virtual ~JobStore() = default;
  // Stores a new queued job, or returns the existing one when `job.owner` already used
  // `job.idempotency_key` (an empty key never matches). `job.id` is assigned.
  virtual Result<InsertOutcome> insert(const Job& job) = 0;
  virtual Result<std::optional<Job>> get(std::int64_t id) = 0;
  // The owner's job submitted with `key` (non-empty), if any.
  virtual Result<std::optional<Job>> find_by_key(const std::string& owner,
                                                 const std::string& key) = 0;
  virtual Result<std::vector<Job>> list(const JobFilter& filter) = 0;
  // Queued and running jobs in submission order (the service rebuilds its queue from them).
  virtual Result<std::vector<Job>> unfinished() = 0;
  // queued -> running, attempts + 1. False when the job is not queued (cancelled meanwhile).
  virtual Result<bool> start(std::int64_t id, const std::string& worker, std::int64_t dispatch_seq,
                             double at) = 0;
  // running -> queued (a worker crashed, the service restarted): `reason` is kept.
  virtual Result<bool> requeue(std::int64_t id, const std::string& reason) = 0;
  // queued/running -> a terminal state, with the result JSON text for `done`. False when the
  // job was already terminal: the first completion wins, a second writes nothing.
  virtual Result<bool> finish(std::int64_t id, JobState state, const std::string& reason,
                              const std::string& verdict, const std::string& result_json,
                              double at) = 0;
  virtual Result<std::optional<std::string>> result(std::int64_t id) = 0;
  // Deletes terminal jobs finished before `before`; returns how many.
  virtual Result<int> purge_finished(double before) = 0;
  // Artifacts still named by a job (the artifact store's cleanup keeps them).
  virtual Result<std::vector<std::string>> live_artifacts() = 0;
  // The largest submit/dispatch sequence number stored (the counter resumes after it).
  virtual Result<std::int64_t> max_seq() = 0;

  // The calibration canary's history per worker (service/canary.h), oldest first.
  virtual Status add_canary(const std::string& worker, double milliseconds, double at) = 0;
  virtual Result<std::vector<double>> canary_history(const std::string& worker, int count) = 0;
};

}  // namespace ptxb::service
