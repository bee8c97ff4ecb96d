// Operations sanitize and debug (eval/eval_operation.h): the correctness trials (after the
// compute-sanitizer gate, for sanitize), with nothing timed. The two stages here stand in for what
// the timed pipeline gets from the reference timing (the per-call limit) and from stage_integrity
// (the runner's orderly end and the PASSED verdict).
#include "supervisor/eval_stages.h"

namespace ptxb {

using std::chrono::milliseconds;

StageOutcome stage_untimed_limit(EvalContext& ctx) {
  // Without the reference's median the floor alone bounds a call, as for tasks that have no
  // library reference: 2 s (eval/timing_stats.h) is far above 100x any reference of the paper's
  // tasks, so no kernel that evaluate would let finish is cut short here.
  ctx.call_limit = seconds_to_ms(ctx.policy.call_limit_floor_seconds);
  return StageOutcome::kContinue;
}

StageOutcome stage_untimed_verdict(EvalContext& ctx) {
  WorkloadEval& w = ctx.workload;
  ctx.record_runner_log();
  // The same orderly end as after timing: a runner that does not shut down cleanly is recorded,
  // and leftover threads or processes were already judged by the correctness calls' replies.
  if (auto s = ctx.candidate.session->shutdown(milliseconds(10000)); !s.ok())
    w.runner.shutdown = s.error().message;
  w.runner.exit = ctx.candidate.session->wait(milliseconds(5000)).describe();
  const std::string sanitized =
      ctx.result.sanitizer
          ? fmt::format("clean under compute-sanitizer {}; ", ctx.options.sanitizer_tool)
          : std::string("compute-sanitizer not run; ");
  // Nothing decides a target-instruction verdict without the profiled call.
  const std::string_view operation = eval_operation_name(ctx.job.request.operation);
  ctx.result.target_instructions.reason = fmt::format("operation {}: not profiled", operation);
  return ctx.conclude(PtxbStatus::kPassed, "",
                      fmt::format("{}correct on {} trials; not timed (operation {})", sanitized,
                                  w.trials, operation));
}

}  // namespace ptxb
