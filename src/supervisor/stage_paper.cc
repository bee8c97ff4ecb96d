// --timing-protocol paper: the reference implementation's recipe on both runners, after our own
// timing (eval/paper_timing.h). Its speedup is the one reported; our method's samples, the
// verified calls and the batch bound still run, so the integrity checks are unchanged.
#include "eval/integrity_reasons.h"
#include "eval/paper_timing.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// One side: per trial, one batch of warm-up + timed calls on that trial's set, L2 flushed
// before each call, each call's CUPTI span.
Result<std::vector<double>> paper_side(EvalContext& ctx, RunnerSide& side, bool candidate,
                                       std::optional<Finding>& failure) {
  std::vector<double> medians;
  for (int t = 0; t < ctx.workload.trials; ++t) {
    BatchRequest request;
    request.sets.assign(kPaperWarmupCalls + kPaperTimedCalls,
                        static_cast<std::uint64_t>(t % ctx.num_sets));
    request.flush_l2 = true;
    request.timed = true;
    const milliseconds limit = ctx.call_limit * static_cast<int>(request.sets.size());
    auto reply = side.session->batch(request, candidate ? limit : milliseconds(600'000));
    if (!reply.ok()) {
      failure = call_failure(side, reply.error(), limit);
      return medians;
    }
    if ((failure = batch_reply_finding(*reply,
                                       candidate ? ctx.reply_checks : ctx.reference_reply_checks)))
      return medians;
    PTXB_ASSIGN_OR_RETURN(double median, paper_trial_median_ms(reply->device_ns));
    medians.push_back(median);
  }
  return medians;
}

}  // namespace

StageOutcome paper_timing_stage(EvalContext& ctx) {
  const auto start = EvalClock::now();
  PaperTimingRecord rec;
  rec.trials = ctx.workload.trials;
  std::optional<Finding> failure;
  auto reference = paper_side(ctx, ctx.reference, false, failure);
  if (!reference.ok() || failure) {
    Finding f = failure.value_or(
        Finding{PtxbStatus::kInfraError, "paper_timing", reference.error().message});
    f.status = PtxbStatus::kInfraError;
    f.detail = "reference (paper recipe): " + f.detail;
    return ctx.conclude_finding(f);
  }
  auto candidate = paper_side(ctx, ctx.candidate, true, failure);
  if (failure) return ctx.fail_candidate(*failure);
  // A timed call without GPU activity (or a malformed reply) in the candidate's batch.
  if (!candidate.ok())
    return ctx.fail_candidate(Finding{PtxbStatus::kRewardHack, std::string(reason::kNoGpuWork),
                                      candidate.error().message});
  rec.reference_trial_medians_ms = *reference;
  rec.candidate_trial_medians_ms = *candidate;
  rec.reference_ms = paper_mean_ms(*reference);
  rec.candidate_ms = paper_mean_ms(*candidate);
  if (rec.candidate_ms > 0) rec.speedup = rec.reference_ms / rec.candidate_ms;
  ctx.workload.paper_timing = rec;
  ctx.stage_done("paper_timing", start);
  return StageOutcome::kContinue;
}

}  // namespace ptxb
