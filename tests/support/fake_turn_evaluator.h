// A test double for agent/turn_evaluator.h's TurnEvaluator: the verdict is read from a
// directive comment in the kernel. Used in process by the agent tests and, through
// `ptxbench-testing run --test-fake-eval DIR`, by the end-to-end run tests; never linked into
// the shipped `ptxbench`.
#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <string>

#include "agent/turn_evaluator.h"

namespace ptxb {

// A kernel line
//   // ptxbench-fake-eval: status=PASSED speedup=1.3 target=dynamic_present sleep_ms=0 tag=t2
// sets the result (defaults: PASSED, speedup 1.0, dynamic_present, no sleep); repeat_status=S
// gives every later evaluation of the same source status S (a kernel that passes once and fails
// on fresh inputs: the Fixit verification, tests/adapt); "error" as the
// status makes evaluate() fail as infrastructure does; exit=N ends the whole process with
// status N after the sleep (a GPU worker that crashes mid-job, tests/service). A request with
// reference_as_candidate (the service's canary) reports the reference median from
// <log folder>/canary_ms, 1.0 ms without that file. With a log folder, every evaluation
// appends "start <tag>" to <folder>/evals.log (flushed) before it sleeps, so a test can kill
// the process mid-evaluation. Operation sanitize gives a result without timing, as the
// supervisor does; the message names the operation.
class FakeTurnEvaluator final : public TurnEvaluator {
 public:
  explicit FakeTurnEvaluator(std::string log_dir = "") : log_dir_(std::move(log_dir)) {}
  Result<EvalResult> evaluate(const EvalRequest& request) override;
  int calls() const { return calls_.load(); }

 private:
  std::string log_dir_;
  std::atomic<int> calls_{0};
  std::mutex seen_mutex_;
  std::set<std::string> seen_sources_;
};

}  // namespace ptxb
