// A TurnEvaluator that hands every evaluation to one or more evaluation services
// (`ptxbench eval --remote`, `ptxbench run --evaluator URL[,URL...]`, docs/service.md).
//
// Choosing a service: the least loaded of those reachable, by their /v1/health (queued and
// running jobs per serving GPU worker); a service that cannot be reached is skipped for a while.
// No turn lost or evaluated twice: every submission carries an idempotency key derived from the
// run and the turn (turn_key_for), and before submitting anywhere the evaluator asks every
// reachable service whether it already holds that key. So a resumed run, or a retry after a lost
// answer, finds its job where it was submitted; when that service goes away mid-job, the turn
// fails over to another one with the same key.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/turn_evaluator.h"
#include "core/json_io.h"
#include "llm/http_transport.h"
#include "service/clock.h"
#include "service/service_client.h"

namespace ptxb::service {

// One service's load as its /v1/health reports it.
struct ServiceLoad {
  bool reachable = false;
  int serving = 0;  // workers idle or busy (not drained, down or restarting)
  int queued = 0;
  int running = 0;

  static ServiceLoad from_health(const Json& health);
};

// The index of the least loaded usable service (reachable, at least one serving worker): the
// fewest queued and running jobs per serving worker; ties go to the first at or after
// `rotation` (so equal services share the work). -1 when none is usable.
int pick_least_loaded(const std::vector<ServiceLoad>& loads, std::size_t rotation);

struct RemoteEvaluatorOptions {
  std::vector<std::string> urls;
  std::string token;       // "" for a service without tokens
  std::string key_prefix;  // the run's identity; part of every idempotency key
  // One evaluation's limit, queueing included (the service's own limit is --job-timeout).
  double job_timeout_seconds = 6 * 3600.0;
  // A service that did not answer is not asked again for this long (unless none is left).
  double down_seconds = 30;
  // Hand-overs of one turn (to another service, or the same one again) before giving up.
  int max_rounds = 6;
  double retry_pause_seconds = 1;  // before the second round, doubling up to 10 s
  // The client's half of the compile split (service/client_compile.h), run once per turn before
  // anything is sent: it sets request.prebuilt, or returns the verdict itself (a kernel that does
  // not compile needs no GPU). Unset: the service compiles the source.
  std::function<Result<std::optional<EvalResult>>(EvalRequest&)> prepare;
};

class RemoteEvaluator final : public TurnEvaluator {
 public:
  RemoteEvaluator(HttpTransport& transport, RemoteEvaluatorOptions options, const Clock& clock);

  // A request outside a turn: its key is the request itself (eval --remote passes a nonce).
  Result<EvalResult> evaluate(const EvalRequest& request) override;
  Result<EvalResult> evaluate_turn(const EvalRequest& request,
                                   const std::string& turn_key) override;
  // Serving GPU workers over the reachable services: how many evaluations to keep in flight.
  int capacity();

  // The idempotency key of one turn attempt: SHA-256 of the run's prefix, the turn key and the
  // request, so a changed request under the same turn is a new evaluation.
  static std::string idempotency_key(const std::string& prefix, const std::string& turn_key,
                                     const EvalRequest& request);

 private:
  struct Endpoint {
    std::unique_ptr<ServiceClient> client;
    double down_until = 0;
  };
  // Services not marked down (all of them when every one is).
  std::vector<std::size_t> candidates();
  void mark_down(std::size_t index);
  bool is_network(const Error& error) const;

  RemoteEvaluatorOptions options_;
  const Clock& clock_;
  std::vector<Endpoint> endpoints_;
  std::mutex mutex_;  // guards down_until and rotation_
  std::size_t rotation_ = 0;
};

}  // namespace ptxb::service
