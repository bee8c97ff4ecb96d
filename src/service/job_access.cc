#include "service/job_access.h"

#include <algorithm>

namespace ptxb::service {

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
