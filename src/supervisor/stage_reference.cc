// The library reference's timing, measured in this evaluation with the candidate's policy. It
// comes first because its median sets the candidate's per-call limit.
#include "core/clock.h"
#include "supervisor/eval_stages.h"

namespace ptxb {

using std::chrono::milliseconds;

StageOutcome stage_reference(EvalContext& ctx) {
  const TimingPolicy& policy = ctx.policy;
  ctx.call_limit = seconds_to_ms(policy.call_limit_floor_seconds);
  // plain_cuda tasks have no library reference: no speedup, only the floor limit.
  if (!is_library_reference(ctx.task.reference_backend)) return StageOutcome::kContinue;
  const auto start = EvalClock::now();
  RunnerSide reference = start_runner(ctx, RunnerRole::kReference, "reference runner");
  if (reference.failure) return ctx.conclude_finding(*reference.failure);
  SideTiming timing = time_side(ctx, reference, false, seconds_to_ms(60.0));
  // The clock the calibration ended at, the baseline of the interleaved drift rule
  // (eval/interleave.h 4a); read by the supervisor, as every clock.
  if (auto facts = ctx.device.facts(); facts.ok())
    ctx.reference_solo_sm_clock_mhz = facts->sm_clock_mhz;
  if (timing.failure) {
    // Whatever failed on the reference's side is the harness's problem, not the candidate's.
    Finding f = *timing.failure;
    f.status = PtxbStatus::kInfraError;
    f.detail = "reference: " + f.detail + "\n" + cap_log(reference.session->log(), 4096);
    return ctx.conclude_finding(f);
  }
  // The batch bound's calibration needs a runner with no candidate code in it.
  if (auto f = calibrate_bound(ctx, reference, timing.stats.median_ms)) {
    f->status = PtxbStatus::kInfraError;
    f->detail =
        "reference batch bound: " + f->detail + "\n" + cap_log(reference.session->log(), 4096);
    return ctx.conclude_finding(*f);
  }
  // Interleaved timing samples it again beside the candidate (stage_interleave.cc); otherwise it is
  // timed already, and a reference that does not shut down cleanly changes nothing.
  if (policy.interleave || policy.paper)
    ctx.reference = std::move(reference);
  else
    (void)reference.session->shutdown(milliseconds(10000));
  WorkloadEval& w = ctx.workload;
  w.reference_timing = timing.stats;
  ctx.reference_samples_ns = timing.samples_ns;
  w.reference.measured_at = iso_utc_now();
  w.reference.method =
      "CUPTI activity window of each call in a ptxbench-runner process, L2 flushed before "
      "every sample, same policy and buffers as the candidate, measured in this evaluation";
  ctx.call_limit = std::max(ctx.call_limit, seconds_to_ms(policy.call_limit_reference_multiple *
                                                          timing.stats.median_ms / 1000.0));
  ctx.stage_done("reference_timing", start);
  return StageOutcome::kContinue;
}

}  // namespace ptxb
