// What the HTTP front end (service/http_api.h) serves: the GPU service itself
// (service/eval_service.h, one worker per local GPU) or the front that forwards to several of
// them (service/upstream_service.h, `serve --upstream`). Both answer the same v1 API with the
// same job records, so a client cannot tell, and need not.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "service/artifact_store.h"
#include "service/job_store.h"
#include "service/service_metrics.h"
#include "service/submit_request.h"
#include "service/tokens.h"

namespace ptxb::service {

class JobService {
 public:
  virtual ~JobService() = default;

  virtual Result<InsertOutcome> submit(const Client& client, const SubmitRequest& request) = 0;
  // The job once it is terminal, or as it is after `seconds` (capped by the service).
  virtual Result<Job> wait(const std::string& owner, std::int64_t id, double seconds) = 0;
  virtual Result<std::string> result(const std::string& owner, std::int64_t id) = 0;
  virtual Result<Job> cancel(const std::string& owner, std::int64_t id) = 0;
  virtual Result<std::vector<Job>> list(const JobFilter& filter) = 0;
  // The owner's job submitted with idempotency key `key`, if any.
  virtual Result<std::optional<Job>> find_by_key(const std::string& owner,
                                                 const std::string& key) = 0;

  // GET /v1/health: "status", "capacity" {workers, serving, free} and "queue" {queued, running}
  // at least (the clients' least-loaded choice reads those).
  virtual Json health() = 0;
  virtual std::string metrics_text() = 0;
  virtual ServiceMetrics& metrics() = 0;
  virtual ArtifactStore& artifacts() = 0;
};

}  // namespace ptxb::service
