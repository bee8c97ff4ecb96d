// The front's record of where each job it forwarded lives (`ptxbench serve --upstream`,
// service/upstream_service.h): which backend, under which forwarding key, and the backend's job
// id once its answer arrived. In the front's own SQLite database, beside its job store, so the
// front survives its own restart: it resumes polling the backends for the jobs it owns, and a
// job it may already have handed over is found again by its key before it is ever sent again.
//
// The write-ahead rule: a job's row names its backend *before* the job is posted there. After a
// crash, a row without a backend job id means "maybe posted": the front asks that backend for the
// key (GET /v1/jobs?idempotency_key=K) and either finds the job or learns it never arrived.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.h"

struct sqlite3;

namespace ptxb::service {

struct Forwarding {
  std::int64_t job = 0;     // the front's job id
  std::string backend;      // the backend's base URL; "" while the job waits at the front
  int round = 0;            // hand-overs so far; each has its own key (upstream_key)
  std::string backend_job;  // the backend's job id; "" until its answer was recorded
};

class UpstreamLedger {
 public:
  // Opens (creating) the ledger's tables in the database at `path` (the front's job store's).
  static Result<std::unique_ptr<UpstreamLedger>> open(const std::string& path);
  ~UpstreamLedger();

  // This front's identity, made at the first open and kept: part of every forwarding key, so
  // two fronts over the same backends never share a key.
  const std::string& front_id() const { return front_id_; }
  // The idempotency key of `job`'s hand-over number `round`.
  std::string key(std::int64_t job, int round) const;

  // Before posting: `job` goes to `backend` in `round` (no backend job id yet).
  Status assign(std::int64_t job, const std::string& backend, int round);
  // The backend accepted it as its job `backend_job`.
  Status accepted(std::int64_t job, const std::string& backend_job);
  // Back at the front (the backend confirmed it never ran it): the next hand-over is `round`.
  Status release(std::int64_t job, int round);
  // The job is terminal at the front: nothing to follow any more.
  Status forget(std::int64_t job);
  Result<std::vector<Forwarding>> all();

 private:
  UpstreamLedger(sqlite3* db, std::string front_id) : db_(db), front_id_(std::move(front_id)) {}
  sqlite3* db_;
  std::string front_id_;
  std::mutex mutex_;
};

}  // namespace ptxb::service
