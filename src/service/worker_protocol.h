// The wire between the service and a worker process (`ptxbench serve-worker`): one JSON object
// per line on the worker's stdin and stdout.
//
//   worker -> service  {"type":"ready","pid":N}                      once, when it can take work
//   service -> worker  {"type":"evaluate","request":{EvalRequest}}
//   worker -> service  {"type":"result","result":{EvalResult}}
//                      {"type":"error","code":"eval_error","message":"..."}
//   service -> worker  {"type":"canary"}
//   worker -> service  {"type":"canary","ms":0.123}
//
// The worker's stderr is its log (inherited by the service). Anything else on stdout is a
// protocol error: the service kills the worker and reports it.
#pragma once

#include <functional>
#include <istream>
#include <ostream>

#include "agent/turn_evaluator.h"
#include "core/result.h"

namespace ptxb::service {

// Measures the calibration canary on this worker's GPU (milliseconds).
using CanaryProbe = std::function<Result<double>()>;

// The worker's side: announces itself, then answers requests until stdin closes. Returns the
// process's exit code. Evaluator errors are replies, not exits: only a broken pipe ends it.
int serve_worker_loop(std::istream& in, std::ostream& out, TurnEvaluator& evaluator,
                      const CanaryProbe& canary);

}  // namespace ptxb::service
