// The service's versioned HTTP/JSON API (docs/service.md), on cpp-httplib: a thin front end
// that authenticates, rate-limits and size-checks each request, then maps it onto a JobService
// (the GPU service, or the front of several with `serve --upstream`).
//
//   GET  /v1/health                  workers (state, canary, restarts), capacity, queue
//   GET  /v1/metrics                 Prometheus text
//   GET  /v1/tasks                   the catalogue: every task (tasks show --json)
//   GET  /v1/tasks/NAME              one task with its FlashInfer-Trace definition and workload
//   HEAD|GET /v1/artifacts/SHA256    200 when the service holds the artifact, else 404
//   PUT  /v1/artifacts/SHA256        upload (the bytes must hash to the name)
//   POST /v1/jobs                    submit {operation (evaluate|sanitize|profile), task, arch,
//                                    artifact, options, prebuilt, idempotency_key} (or an
//                                    Idempotency-Key header)
//   GET  /v1/jobs[?state=&after=&limit=]   the caller's jobs
//   GET  /v1/jobs/ID[?wait=SECONDS]  status; with wait, a long-poll until it is finished
//   GET  /v1/jobs/ID/result          the EvalResult (as `ptxbench eval --json`, without traces)
//   POST /v1/jobs/ID/cancel
//
// Every error is JSON {"error": {"code", "message"}} with a 4xx/5xx status; 429 carries
// Retry-After. There is no debug operation yet (docs/service.md "Operations").
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/result.h"
#include "service/clock.h"
#include "service/job_service.h"
#include "service/rate_limiter.h"
#include "service/tokens.h"
#include "tasks/registry.h"

namespace httplib {
class Server;
}

namespace ptxb::service {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8470;  // 0: any free port (bind() returns it)
  // JSON request bodies and uploaded artifacts (a kernel source: the compile stage's limit).
  std::size_t max_request_bytes = 256u << 10;
  std::size_t max_upload_bytes = 16u << 20;  // a prebuilt kernel.so or its PTX
  // HTTP threads: each open connection holds one while it is served or kept alive, so the pool
  // must exceed the long-polls the service lets wait (ServiceOptions::max_waiters) plus the
  // clients that are not waiting.
  int threads = 128;
  // Without tokens every request is the client "anonymous" with these limits (loopback only).
  std::optional<TokenTable> tokens;
  ClientLimits anonymous_limits;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback_host(const std::string& host);

class HttpApi {
 public:
  HttpApi(JobService& service, const TaskRegistry& registry, const Clock& clock,
          HttpOptions options);
  ~HttpApi();

  // Binds the socket; returns the port (the chosen one for port 0).
  Result<int> bind();
  // Serves until stop(); call after bind().
  void serve();
  void stop();

 private:
  void install_routes();

  JobService& service_;
  const TaskRegistry& registry_;
  HttpOptions options_;
  RateLimiter limiter_;
  std::unique_ptr<httplib::Server> server_;
};

}  // namespace ptxb::service
