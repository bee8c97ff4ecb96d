// What the two job services (EvalService for one GPU host, UpstreamService for a fleet front
// end) do alike with their store: admit a submission, a job as its owner may see it, its result
// once done, a listing, a lookup by idempotency key, and how long a wait may block.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <optional>
#include <vector>

#include "core/result.h"
#include "service/job_store.h"
#include "service/tokens.h"

namespace ptxb::service {

// Admits `job` for `client` under the service's lock: the owner's earlier job with the same
// idempotency key is answered as is (created = false; a resubmission costs nothing, so this comes
// before the quota); with `in_flight` of the owner's jobs queued or running at its quota, a quota
// error; else the job is inserted with submit sequence `seq` + 1, and `seq` advances.
Result<InsertOutcome> admit_job(JobStore& store, const Client& client, Job job, int in_flight,
                                std::int64_t& seq);

// The jobs `filter` selects, at most 1000 (a limit outside 1..1000 is clamped).
Result<std::vector<Job>> list_jobs(JobStore& store, const JobFilter& filter);

// The owner's job with idempotency key `key`; invalid for an empty key or one over 200
// characters.
Result<std::optional<Job>> job_by_key(JobStore& store, const std::string& owner,
                                      const std::string& key);

// The job, or not_found when it does not exist or belongs to another owner (no probing of
// other clients' ids); `owner` "" = any owner.
Result<Job> owned_job(JobStore& store, const std::string& owner, std::int64_t id);

// The result JSON text of the owner's job: not_finished while queued or running, no_result for
// a job that ended without one (failed, cancelled).
Result<std::string> owned_result(JobStore& store, const std::string& owner, std::int64_t id);

// When a wait of `seconds` (capped at `max_seconds`) ends.
std::chrono::steady_clock::time_point wait_deadline(double seconds, double max_seconds);

}  // namespace ptxb::service
