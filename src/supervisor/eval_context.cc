#include "supervisor/eval_context.h"

#include <cmath>

#include "core/fs.h"
#include "eval/integrity_reasons.h"
#include "supervisor/eval_stages.h"

namespace ptxb {

using std::chrono::milliseconds;

double ms_since(EvalClock::time_point start) {
  return std::chrono::duration<double, std::milli>(EvalClock::now() - start).count();
}

milliseconds seconds_to_ms(double seconds) {
  return milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

std::string cap_log(const std::string& log, std::size_t cap) {
  if (log.size() <= cap) return log;
  return fmt::format("[{} earlier bytes dropped]\n", log.size() - cap) +
         log.substr(log.size() - cap);
}

std::optional<Finding> sandbox_failure(const ProcessResult& ran) {
  const std::string output = ran.stdout_text + ran.stderr_text;
  if (auto f = sandbox_setup_failure(ran.exit_code, output)) return f;
  return sandbox_finding_in_output(output);
}

Finding call_failure(RunnerSide& side, const Error& error, milliseconds limit) {
  // The supervisor's own count of the runner's processes failed (supervisor/cgroup_watch.h):
  // nothing the candidate did.
  if (error.code == "cgroup") return Finding{PtxbStatus::kInfraError, "cgroup", error.message};
  if (error.code == "timeout") {
    side.session->kill();
    side.session->wait(milliseconds(5000));
    return Finding{PtxbStatus::kTimeout, std::string(reason::kCallTimeout),
                   fmt::format("the call did not finish within the per-call limit of {:.1f} s; the "
                               "runner's process group was killed",
                               limit.count() / 1000.0)};
  }
  RunnerExit exit = side.session->wait(milliseconds(5000));
  // A runner that ended by itself may have been stopped by the sandbox: that verdict is the
  // more specific one (and before hello, only the sandbox's own set-up can have failed).
  if (exit.finished && !exit.killed_by_us) {
    if (!side.answered_hello)
      if (auto f = sandbox_setup_failure(exit.exit_code, side.session->log())) return *f;
    if (auto f = sandbox_finding(exit.term_signal, side.session->log())) return *f;
  }
  if (error.code == "eof" || error.code == "frame_truncated" || exit.finished) {
    return Finding{
        PtxbStatus::kRuntimeError,
        std::string(exit.term_signal != 0 ? reason::kRunnerCrashed : reason::kRunnerExited),
        fmt::format("the {} process ended during the call: {}", side.role, exit.describe())};
  }
  return Finding{PtxbStatus::kRuntimeError, std::string(reason::kCallFailed), error.message};
}

std::optional<Finding> first_failure(const std::vector<OutputCheck>& checks) {
  // A non-finite reference makes every comparison meaningless: it wins over any mismatch.
  for (const auto& c : checks) {
    if (c.num_nonfinite_reference > 0)
      return Finding{PtxbStatus::kInvalidReference, std::string(reason::kNonfiniteReference),
                     fmt::format("the reference output {} holds {} NaN/Inf values", c.output,
                                 c.num_nonfinite_reference)};
  }
  for (const auto& c : checks) {
    if (c.passed()) continue;
    const bool nonfinite = c.num_nonfinite_candidate > 0;
    std::string detail = fmt::format(
        "output {} (trial {}): {} of {} elements fail |x-ref| > atol and > rtol*|ref|; max abs "
        "error {:.4g}, max rel error {:.4g}, matched {:.4f}",
        c.output, c.trial, c.num_failing, c.num_elements, c.max_abs_error, c.max_rel_error,
        c.matched_ratio);
    if (c.first_failing_index >= 0)
      detail +=
          fmt::format("; first at flat index {}: got {:.6g}, expected {:.6g}",
                      c.first_failing_index, c.first_failing_candidate, c.first_failing_reference);
    if (nonfinite) detail += fmt::format("; {} NaN/Inf values", c.num_nonfinite_candidate);
    return Finding{PtxbStatus::kIncorrectNumerical,
                   std::string(nonfinite ? reason::kNonfiniteOutput : reason::kMismatch), detail};
  }
  return std::nullopt;
}

EvalContext::StagingDir::~StagingDir() {
  if (!path.empty()) remove_tree(path);
}

void EvalContext::stage_done(const std::string& name, EvalClock::time_point start) {
  result.stage_ms.emplace_back(name, ms_since(start));
}

StageOutcome EvalContext::finish(PtxbStatus status, std::string reason, std::string message) {
  result.status = status;
  result.reason = std::move(reason);
  result.message = std::move(message);
  return StageOutcome::kDone;
}

StageOutcome EvalContext::conclude(PtxbStatus status, std::string reason, std::string message) {
  workload.status = status;
  workload.reason = std::move(reason);
  workload.message = std::move(message);
  result.workloads.push_back(workload);
  return finish(workload.status, workload.reason, workload.message);
}

StageOutcome EvalContext::conclude_finding(const Finding& finding) {
  workload.findings.push_back(finding);
  return conclude(finding.status, finding.reason, finding.detail);
}

void EvalContext::record_runner_log() {
  if (!candidate.session) return;
  workload.runner.log = cap_log(candidate.session->log());
}

StageOutcome EvalContext::fail_candidate(const Finding& failure) {
  record_runner_log();
  candidate.session->kill();
  workload.runner.exit = candidate.session->wait(milliseconds(5000)).describe();
  Finding f = failure;
  // The debug stage's memcheck pass locates a memory fault too (and more); without it, one
  // memcheck pass does.
  if (options.debug)
    debug_failure(*this, f);
  else if (f.status == PtxbStatus::kMemoryError)
    locate_memory_error(*this, f);
  return conclude_finding(f);
}

Result<ProcessResult> EvalContext::run_tool(std::vector<std::string> argv, double timeout_seconds,
                                            std::size_t output_cap) {
  ProcessSpec spec;
  spec.argv = std::move(argv);
  spec.timeout = seconds_to_ms(timeout_seconds);
  spec.output_cap_bytes = output_cap;
  PTXB_ASSIGN_OR_RETURN(spec, sandbox->wrap_tool(std::move(spec), library_as_candidate));
  return tools.run(spec);
}

int secret_poison_trial(EvalContext& ctx) {
  return kSecretPoisonTrialBase + static_cast<int>(ctx.secret_rng() % (1u << 20));
}

}  // namespace ptxb
