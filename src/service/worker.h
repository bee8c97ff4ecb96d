// One GPU worker as the service sees it: a process that evaluates one request at a time on its
// GPU. Behind this interface so that the service core (dispatch, retries, restarts, the canary
// schedule) is unit-tested with in-process fakes (tests/support/fake_worker.h), and end to end
// with real worker processes running the fake evaluator.
#pragma once

#include <string>

#include "core/json_io.h"
#include "core/result.h"
#include "eval/eval_types.h"

namespace ptxb::service {

// Error codes of Worker::evaluate / canary. A crash or a hang costs the worker its process (the
// service restarts it); `eval_error` is the evaluator's own infrastructure failure, reported by
// a worker that is still healthy.
inline constexpr const char* kWorkerCrashed = "worker_crashed";
inline constexpr const char* kWorkerTimeout = "worker_timeout";
inline constexpr const char* kWorkerEvalError = "eval_error";

class Worker {
 public:
  virtual ~Worker() = default;
  // "gpu0": the name health, metrics and job records use.
  virtual const std::string& name() const = 0;
  // Starts the worker (again, after a crash): returns once it is ready for a request.
  virtual Status start() = 0;
  // Evaluates one request; the EvalResult as JSON. Blocks for at most `timeout_seconds`, then
  // kills the worker (error kWorkerTimeout).
  virtual Result<Json> evaluate(const EvalRequest& request, double timeout_seconds) = 0;
  // The calibration canary (service/canary.h): the library reference's time, in milliseconds.
  virtual Result<double> canary(double timeout_seconds) = 0;
  // Kills the worker now; a concurrent evaluate() returns kWorkerCrashed. Safe from any thread.
  virtual void kill() = 0;
};

}  // namespace ptxb::service
