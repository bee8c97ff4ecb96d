#include "service/job_access.h"

#include <algorithm>

namespace ptxb::service {

Result<InsertOutcome> admit_job(JobStore& store, const Client& client, Job job, int in_flight,
                                std::int64_t& seq) {
  if (!job.idempotency_key.empty()) {
    PTXB_ASSIGN_OR_RETURN(std::optional<Job> existing,
                          store.find_by_key(client.name, job.idempotency_key));
    if (existing) return InsertOutcome{*existing, false};
  }
  if (in_flight >= client.limits.queue_quota)
    return make_error("quota", "{} jobs of {} are queued or running (quota {})", in_flight,
                      client.name, client.limits.queue_quota);
  job.submit_seq = seq + 1;
  PTXB_ASSIGN_OR_RETURN(InsertOutcome outcome, store.insert(job));
  if (outcome.created) ++seq;
  return outcome;
}

Result<std::vector<Job>> list_jobs(JobStore& store, const JobFilter& filter) {
  JobFilter f = filter;
  f.limit = std::clamp(f.limit, 1, 1000);
  return store.list(f);
}

Result<std::optional<Job>> job_by_key(JobStore& store, const std::string& owner,
                                      const std::string& key) {
  if (key.empty() || key.size() > 200)
    return make_error("invalid", "idempotency_key: expected 1 to 200 characters");
  return store.find_by_key(owner, key);
}

Result<Job> owned_job(JobStore& store, const std::string& owner, std::int64_t id) {
  PTXB_ASSIGN_OR_RETURN(std::optional<Job> job, store.get(id));
  if (!job || (!owner.empty() && job->owner != owner))
    return make_error("not_found", "no job {}", id);
  return *job;
}

Result<std::string> owned_result(JobStore& store, const std::string& owner, std::int64_t id) {
  PTXB_ASSIGN_OR_RETURN(Job job, owned_job(store, owner, id));
  if (job.state != JobState::kDone)
    return make_error(is_terminal(job.state) ? "no_result" : "not_finished", "job {} is {}{}", id,
                      job_state_name(job.state), job.reason.empty() ? "" : " (" + job.reason + ")");
  PTXB_ASSIGN_OR_RETURN(std::optional<std::string> text, store.result(id));
  if (!text) return make_error("store", "job {} is done but its result is missing", id);
  return *text;
}

std::chrono::steady_clock::time_point wait_deadline(double seconds, double max_seconds) {
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(std::min(seconds, max_seconds)));
}

}  // namespace ptxb::service
