// What the two job services (EvalService for one GPU host, UpstreamService for a fleet front
// end) answer alike from their store: a job as its owner may see it, its result once done, and
// how long a wait may block.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/result.h"
#include "service/job_store.h"

namespace ptxb::service {

// The job, or not_found when it does not exist or belongs to another owner (no probing of
// other clients' ids); `owner` "" = any owner.
Result<Job> owned_job(JobStore& store, const std::string& owner, std::int64_t id);

// The result JSON text of the owner's job: not_finished while queued or running, no_result for
// a job that ended without one (failed, cancelled).
Result<std::string> owned_result(JobStore& store, const std::string& owner, std::int64_t id);

// When a wait of `seconds` (capped at `max_seconds`) ends.
std::chrono::steady_clock::time_point wait_deadline(double seconds, double max_seconds);

}  // namespace ptxb::service
