// A job of the evaluation service: one EvalRequest (eval/eval_types.h) accepted from one client,
// with its life in the queue. The request's source is not held here but by content hash in the
// artifact store; the result is the EvalResult JSON exactly as `ptxbench eval --json` prints it
// (without traces), kept by the job store.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::service {

// queued -> running -> done | failed; queued/running -> cancelled. `done` means the evaluator
// produced a result (any verdict, PASSED or not); `failed` that the service could not get one
// (a worker crashed or hung on every attempt, the artifact vanished). A running job whose
// service was killed is queued again when it restarts, or failed with reason
// `service_restart` once its attempts are spent.
enum class JobState { kQueued, kRunning, kDone, kFailed, kCancelled };
std::string_view job_state_name(JobState state);
std::optional<JobState> parse_job_state(std::string_view name);
inline bool is_terminal(JobState s) {
  return s == JobState::kDone || s == JobState::kFailed || s == JobState::kCancelled;
}

// What the evaluator is asked to do: evaluate, sanitize or profile (eval/eval_operation.h, by
// name). The job's options are stored with the operation already applied to them.
inline constexpr std::string_view kOperationEvaluate = "evaluate";

struct Job {
  std::int64_t id = 0;
  std::string owner;  // the client's name (service/tokens.h), never its token
  std::string idempotency_key;
  std::string operation = std::string(kOperationEvaluate);
  std::string task;
  std::string arch;
  std::string artifact;  // SHA-256 of the kernel source (service/artifact_store.h)
  std::string source_name = "kernel.cu";
  Json options = Json::object();  // EvalOptions JSON as submitted (validated)
  // The compile split: {"shared_object": SHA256, "ptx": SHA256, "nvcc_version"} of a client-built
  // kernel.so and its PTX (artifacts like the source); null when the service compiles.
  Json prebuilt = nullptr;
  JobState state = JobState::kQueued;
  std::string reason;   // why failed/cancelled/requeued; "" otherwise
  std::string verdict;  // the result's PtxbStatus when done
  int attempts = 0;     // dispatches so far
  double submitted_at = 0, started_at = 0, finished_at = 0;  // Unix seconds; 0 = not yet
  std::string worker;                                        // the last worker it ran on
  // One counter orders submissions and dispatches together, so fairness is checkable from the
  // records: the jobs of one owner are dispatched in submit order, and no owner is dispatched
  // twice while another had a job waiting since before the first of the two.
  std::int64_t submit_seq = 0, dispatch_seq = 0;

  Json to_json() const;
};

}  // namespace ptxb::service
