#include "service/job.h"

#include <array>
#include <cmath>

namespace ptxb::service {
namespace {

constexpr std::array<std::pair<JobState, std::string_view>, 5> kStateNames = {{
    {JobState::kQueued, "queued"},
    {JobState::kRunning, "running"},
    {JobState::kDone, "done"},
    {JobState::kFailed, "failed"},
    {JobState::kCancelled, "cancelled"},
}};

Json time_or_null(double seconds) {
  if (seconds <= 0) return nullptr;
  return std::round(seconds * 1000) / 1000;
}

}  // namespace

std::string_view job_state_name(JobState state) {
  for (const auto& [s, name] : kStateNames)
    if (s == state) return name;
  return "unknown";
}

std::optional<JobState> parse_job_state(std::string_view name) {
  for (const auto& [s, n] : kStateNames)
    if (n == name) return s;
  return std::nullopt;
}

Json Job::to_json() const {
  Json j = Json::object();
  j["id"] = std::to_string(id);
  j["state"] = std::string(job_state_name(state));
  j["operation"] = operation;
  j["task"] = task;
  j["arch"] = arch;
  j["owner"] = owner;
  j["idempotency_key"] = idempotency_key.empty() ? Json(nullptr) : Json(idempotency_key);
  j["artifact"] = Json{{"sha256", artifact}, {"name", source_name}};
  j["options"] = options;
  j["prebuilt"] = prebuilt;
  j["verdict"] = verdict.empty() ? Json(nullptr) : Json(verdict);
  j["reason"] = reason.empty() ? Json(nullptr) : Json(reason);
  j["attempts"] = attempts;
  j["worker"] = worker.empty() ? Json(nullptr) : Json(worker);
  j["submitted_at"] = time_or_null(submitted_at);
  j["started_at"] = time_or_null(started_at);
  j["finished_at"] = time_or_null(finished_at);
  j["queue"] = Json{{"submit_seq", submit_seq},
                    {"dispatch_seq", dispatch_seq ? Json(dispatch_seq) : Json(nullptr)}};
  return j;
}

}  // namespace ptxb::service
