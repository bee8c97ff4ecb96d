// Test doubles of the service's outside world (src/service): a manual clock and an in-process
// GPU worker whose answers a test scripts (crash, hang, canary times).
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "service/clock.h"
#include "service/worker.h"

namespace ptxb::testing {

class ManualClock final : public service::Clock {
 public:
  double now_seconds() const override { return now_.load(); }
  void advance(double seconds) { now_ = now_.load() + seconds; }

 private:
  std::atomic<double> now_{1.8e9};
};

// Evaluates instantly with a PASSED result whose message is the kernel source; a source
// containing "crash" fails as a crashed worker would (once per listed count), "evalerror" as
// an evaluator infrastructure failure. Canary times come from `canary_ms` (the last repeats).
class FakeWorker final : public service::Worker {
 public:
  explicit FakeWorker(std::string name) : name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  Status start() override {
    ++starts;
    return ok_status();
  }
  Result<Json> evaluate(const EvalRequest& request, double) override {
    std::lock_guard<std::mutex> lock(mutex_);
    evaluated.push_back(request.source);
    requests.push_back(request);
    if (request.source.find("crash") != std::string::npos && crashes_left > 0) {
      --crashes_left;
      return make_error(service::kWorkerCrashed, "{}: the worker process killed by signal 9",
                        name_);
    }
    if (request.source.find("evalerror") != std::string::npos)
      return make_error(service::kWorkerEvalError, "supervisor failed");
    EvalResult result;
    result.task = request.task;
    result.arch = "sm_90a";
    result.status = PtxbStatus::kPassed;
    result.message = request.source;
    return result.to_json();
  }
  Result<double> canary(double) override {
    std::lock_guard<std::mutex> lock(mutex_);
    ++canaries;
    if (canary_ms.empty()) return 1.0;
    const double ms = canary_ms.front();
    if (canary_ms.size() > 1) canary_ms.pop_front();
    return ms;
  }
  void kill() override {}

  std::atomic<int> starts{0};
  std::atomic<int> canaries{0};
  int crashes_left = 1000;
  std::deque<double> canary_ms;
  std::vector<std::string> evaluated;
  std::vector<EvalRequest> requests;  // as the worker received them (prebuilt paths included)

 private:
  std::string name_;
  std::mutex mutex_;
};

}  // namespace ptxb::testing
