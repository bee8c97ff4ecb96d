// The client side of the service's API (docs/service.md), over the HttpTransport interface
// (libcurl in the CLI): `ptxbench eval --remote`, `ptxbench run --evaluator`, the end-to-end
// tests and the throughput benchmark all use it.
//
// evaluate() is the whole exchange: the kernel source is named by its SHA-256 and uploaded only
// when the service answers artifact_missing; 429 and 503 are retried after their Retry-After;
// the job is long-polled until finished and its EvalResult read back.
#pragma once

#include <optional>
#include <string>

#include "core/json_io.h"
#include "eval/eval_types.h"
#include "llm/http_transport.h"

namespace ptxb::service {

class ServiceClient {
 public:
  // `base_url`: "http://host:port" (no trailing /v1); `token`: "" for a service without tokens.
  ServiceClient(HttpTransport& transport, std::string base_url, std::string token = "");

  // Errors carry the service's code (invalid, unknown_task, quota, not_found, ...) or
  // "network"/"timeout" when the service could not be reached.
  Result<Json> get(const std::string& path, double timeout_seconds = 30);
  Result<Json> health() { return get("/v1/health"); }
  // Submits `request` (uploading its source when missing); the job's JSON.
  Result<Json> submit(const EvalRequest& request, const std::string& idempotency_key);
  // Submits a ready POST /v1/jobs body; on artifact_missing uploads those of `artifacts`
  // (SHA-256, bytes) the service lacks and submits once more. The front of several services
  // forwards its jobs with this (service/upstream_service.h).
  Result<Json> submit_body(const Json& body,
                           const std::vector<std::pair<std::string, std::string>>& artifacts);
  // POST without a body (cancel); the answer's JSON, or the service's error.
  Result<Json> post(const std::string& path, double timeout_seconds = 30);
  // Long-polls until the job is finished or `timeout_seconds` passed (then code "job_timeout").
  Result<Json> wait(const std::string& job_id, double timeout_seconds);
  Result<EvalResult> result(const std::string& job_id);
  // The caller's job submitted with idempotency key `key`, or nullopt when this service has none.
  Result<std::optional<Json>> find(const std::string& key);
  // submit + wait + result; a job that failed (not evaluated) is an error with its reason.
  Result<EvalResult> evaluate(const EvalRequest& request, const std::string& idempotency_key,
                              double timeout_seconds);

  const std::string& base_url() const { return base_url_; }

 private:
  Result<HttpResponse> send(const std::string& method, const std::string& path,
                            const std::string& body, double timeout_seconds,
                            const std::string& content_type = "application/json");
  HttpTransport& transport_;
  std::string base_url_;
  std::string token_;
};

// The idempotency key of a request: its SHA-256, so a resubmission of the same request (a
// resumed run, a retry after a lost answer) finds the same job.
std::string request_key(const EvalRequest& request);

}  // namespace ptxb::service
