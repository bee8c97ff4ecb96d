// A submission as the API receives it (POST /v1/jobs), and its validation into a Job. Shared by
// the GPU service (service/eval_service.h) and the front that forwards to several of them
// (service/upstream_service.h), so a request is accepted or refused the same way by both.
//
// Error codes: invalid (a malformed field, a contradiction between the operation and its options,
// an option the service never accepts), unsupported_operation (not evaluate, sanitize or
// profile), unknown_task, artifact_missing.
#pragma once

#include <string>

#include "core/json_io.h"
#include "core/result.h"
#include "service/artifact_store.h"
#include "service/job.h"
#include "tasks/registry.h"

namespace ptxb::service {

struct SubmitRequest {
  std::string operation = std::string(kOperationEvaluate);
  std::string task;
  std::string arch;
  std::string artifact;  // SHA-256 of the kernel source
  std::string source_name = "kernel.cu";
  Json options = Json::object();  // EvalOptions fields
  std::string idempotency_key;
  // The compile split: {"shared_object", "ptx", "nvcc_version"}, a client-built kernel.so and
  // its PTX by SHA-256 (uploaded like the source); null: the service compiles the source.
  Json prebuilt = nullptr;

  // Strict: unknown fields are errors (code "invalid"), so a typo is never ignored.
  static Result<SubmitRequest> from_json(const Json& json);
};

// The queued job `request` becomes for `owner`: the operation checked and applied to the options
// (eval/eval_operation.h), so the stored options are the ones that run; the task known; every
// artifact it names held by `artifacts`.
Result<Job> make_job(const SubmitRequest& request, const std::string& owner,
                     const TaskRegistry& registry, const ArtifactStore& artifacts,
                     double submitted_at);

}  // namespace ptxb::service
