#include "fake_turn_evaluator.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string_view>
#include <thread>

#include "core/clock.h"
#include "core/strings.h"

namespace ptxb {
namespace {

struct FakeDirective {
  std::string status = "PASSED";
  double speedup = 1.0;
  std::string target = std::string(kInstDynamicPresent);
  int sleep_ms = 0;
  std::string tag;
  int exit_code = -1;  // >= 0: the process exits with it mid-evaluation (a crashed GPU worker)
  std::string repeat_status;  // the status of every evaluation of the same source after its first
};

FakeDirective read_directive(const std::string& source) {
  FakeDirective d;
  constexpr std::string_view kMarker = "ptxbench-fake-eval:";
  const std::size_t at = source.find(kMarker);
  if (at == std::string::npos) return d;
  const std::size_t end = source.find('\n', at);
  const std::string line =
      source.substr(at + kMarker.size(),
                    end == std::string::npos ? std::string::npos : end - at - kMarker.size());
  for (const auto& word : split(trim(line), ' ')) {
    const std::size_t eq = word.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    try {
      if (key == "status") d.status = value;
      if (key == "speedup") d.speedup = std::stod(value);
      if (key == "target") d.target = value;
      if (key == "sleep_ms") d.sleep_ms = std::stoi(value);
      if (key == "tag") d.tag = value;
      if (key == "exit") d.exit_code = std::stoi(value);
      if (key == "repeat_status") d.repeat_status = value;
    } catch (const std::exception&) {
      // A malformed number keeps the default: this is a test double.
    }
  }
  return d;
}

}  // namespace

Result<EvalResult> FakeTurnEvaluator::evaluate(const EvalRequest& request) {
  ++calls_;
  FakeDirective d = read_directive(request.source);
  if (!d.repeat_status.empty()) {
    std::lock_guard<std::mutex> lock(seen_mutex_);
    if (!seen_sources_.insert(request.source).second) d.status = d.repeat_status;
  }
  if (!log_dir_.empty()) {
    std::ofstream log(log_dir_ + "/evals.log", std::ios::app);
    log << "start " << (d.tag.empty() ? "-" : d.tag) << "\n" << std::flush;
  }
  if (d.sleep_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(d.sleep_ms));
  if (d.exit_code >= 0) std::_Exit(d.exit_code);
  if (d.status == "error")
    return make_error("infra", "fake evaluator: scripted infrastructure failure");
  auto status = parse_ptxb_status(d.status);
  if (!status) return make_error("usage", "fake evaluator: unknown status {}", d.status);

  EvalResult result;
  result.task = request.task;
  result.arch = request.arch.empty() ? "sm_90a" : request.arch;
  result.status = *status;
  result.reason = "fake";
  // evaluate keeps the message the golden files hold; the other operations name themselves.
  result.message = request.operation == EvalOperation::kEvaluate
                       ? "fake evaluation (test double): " + d.status
                       : fmt::format("fake evaluation (test double, operation {}): {}",
                                     eval_operation_name(request.operation), d.status);
  result.options = request.options;
  result.timestamp = iso_utc_now();
  CompileResult& compile = result.compile.emplace();
  compile.status =
      *status == PtxbStatus::kCompileError ? CompileStatus::kCompileError : CompileStatus::kOk;
  compile.message = "fake compile";
  compile.log = *status == PtxbStatus::kCompileError ? "kernel.cu(1): error: fake" : "";
  WorkloadEval w;
  w.workload = request.task;
  w.status = *status;
  w.reason = "fake";
  w.message = result.message;
  // Like the supervisor: operations sanitize and debug stop after correctness, nothing timed.
  const bool timed =
      request.operation != EvalOperation::kSanitize && request.operation != EvalOperation::kDebug;
  if (*status == PtxbStatus::kPassed && timed) {
    TimingStats candidate, reference;
    reference.median_ms = 1.0;
    candidate.median_ms = 1.0 / d.speedup;
    candidate.samples = reference.samples = 50;
    w.candidate_timing = candidate;
    w.reference_timing = reference;
    w.speedup = d.speedup;
    result.target_instructions.verdict = d.target;
  }
  if (request.options.reference_as_candidate) {
    // The service's calibration canary (service/canary.h): the "library" time is read from
    // <log folder>/canary_ms when a test put one there (1.0 otherwise), so a test can make a
    // GPU drift.
    TimingStats reference;
    reference.median_ms = 1.0;
    if (!log_dir_.empty()) {
      std::ifstream canary(log_dir_ + "/canary_ms");
      double ms = 0;
      if (canary >> ms) reference.median_ms = ms;
    }
    w.reference_timing = reference;
  }
  result.workloads = {w};
  return result;
}

}  // namespace ptxb
