// Interleaved timing (design.md §3.4, eval/interleave.h): reference and candidate sampled in
// blocks, in secret mirrored couples, each side in its own runner and the candidate frozen while
// the reference runs; the drift rules void an attempt whose yardstick moved, and the reference is
// calibrated again for up to `drift_retries` more attempts.
#include <algorithm>

#include "core/strings.h"
#include "eval/integrity_reasons.h"
#include "eval/interleave.h"
#include "supervisor/candidate_freeze.h"
#include "supervisor/eval_stages.h"
#include "supervisor/side_sampler.h"

namespace ptxb {
namespace {

// One block of `which`: one untimed call (the switch between processes), then block_samples
// timed calls; the supervisor's NVML readings around it.
Result<TimingBlock> run_block(EvalContext& ctx, SideSampler& s, TimedSide which) {
  TimingBlock block;
  block.side = which;
  block.first_sample = static_cast<int>(s.samples.device_ns.size());
  CandidateFrozen frozen(ctx.candidate.cgroup_dir);
  if (which == TimedSide::kReference) PTXB_RETURN_IF_ERROR(frozen.freeze());
  const auto start = EvalClock::now();
  auto before = ctx.device.facts();
  bool ok = s.call(true);
  for (int i = 0; ok && i < ctx.policy.block_samples; ++i) ok = s.call(false);
  auto after = ctx.device.facts();
  s.seconds += std::chrono::duration<double>(EvalClock::now() - start).count();
  PTXB_RETURN_IF_ERROR(frozen.thaw());
  if (!ok) return block;  // s.out.failure says why
  std::vector<double> mine(s.samples.device_ns.begin() + block.first_sample,
                           s.samples.device_ns.end());
  std::sort(mine.begin(), mine.end());
  block.samples = static_cast<int>(mine.size());
  block.median_ms = percentile_sorted(mine, 0.5) * 1e-6;
  for (const auto* facts : {&before, &after}) {
    if (!facts->ok()) continue;
    for (const auto& r : (*facts)->clock_event_reasons)
      if (std::find(block.clock_event_reasons.begin(), block.clock_event_reasons.end(), r) ==
          block.clock_event_reasons.end())
        block.clock_event_reasons.push_back(r);
  }
  if (before.ok()) block.sm_clock_mhz_before = before->sm_clock_mhz;
  if (after.ok()) block.sm_clock_mhz_after = after->sm_clock_mhz;
  return block;
}

bool sampling_exhausted(SamplingDecision d) {
  return d == SamplingDecision::kStopCap || d == SamplingDecision::kStopBudget;
}

enum class Attempt { kMeasured, kVoid, kDone };

// kDone, once a stage helper has concluded the evaluation (its outcome is always kDone).
Attempt ended(StageOutcome) {
  return Attempt::kDone;
}

// One attempt: reference and candidate in blocks, each couple in a secret mirrored order
// (eval/interleave.h). kVoid: the yardstick moved (`rec.voided_attempts` gets the reason).
Attempt interleave_once(EvalContext& ctx, InterleaveRecord& rec) {
  WorkloadEval& w = ctx.workload;
  rec.block_samples = ctx.policy.block_samples;
  rec.drift_limit = ctx.policy.drift_limit;
  rec.reference_solo_median_ms = w.reference_timing->median_ms;
  rec.reference_solo_sm_clock_mhz = ctx.reference_solo_sm_clock_mhz;
  rec.candidate_freeze = ctx.candidate.cgroup_dir.empty()
                             ? "none: no cgroup of its own (sandbox off or process-group fallback)"
                             : "cgroup";
  SideSampler ref{ctx, ctx.reference, false, seconds_to_ms(60.0)};
  SideSampler cand{ctx, ctx.candidate, true, ctx.call_limit};
  // The reference is warm from its calibration; the candidate warms up alone, as it would
  // sequentially (lazy loading, first-call autotuning, the clock ramp).
  const auto warm_start = EvalClock::now();
  for (int i = 0; i < ctx.policy.warmup_calls; ++i)
    if (!cand.call(true)) return ended(ctx.fail_candidate(*cand.out.failure));
  cand.seconds = std::chrono::duration<double>(EvalClock::now() - warm_start).count();
  TimedSide previous = TimedSide::kCandidate;  // its warm-up ran last
  // One couple of blocks; kDone when the evaluation ended in it, kVoid when the yardstick moved.
  auto run_couple = [&](const std::vector<TimedSide>& order) -> Attempt {
    for (TimedSide which : order) {
      SideSampler& s = which == TimedSide::kReference ? ref : cand;
      auto block = run_block(ctx, s, which);
      if (!block.ok())
        return ended(ctx.conclude(PtxbStatus::kInfraError, "cgroup", block.error().message));
      if (s.out.failure) {
        if (s.is_candidate) return ended(ctx.fail_candidate(*s.out.failure));
        Finding f = *s.out.failure;
        f.status = PtxbStatus::kInfraError;
        f.detail = "reference: " + f.detail + "\n" + cap_log(ctx.reference.session->log(), 4096);
        return ended(ctx.conclude_finding(f));
      }
      block->after_candidate = previous == TimedSide::kCandidate;
      previous = which;
      add_block(rec, std::move(block).value());
      if (auto drift = drift_violation(rec)) {
        rec.voided_attempts.push_back(*drift);
        return Attempt::kVoid;
      }
    }
    return Attempt::kMeasured;
  };
  while (true) {
    const SamplingDecision rd = ref.decision(), cd = cand.decision();
    if (sampling_exhausted(rd) || sampling_exhausted(cd)) break;
    if (rd != SamplingDecision::kContinue && cd != SamplingDecision::kContinue) break;
    if (Attempt a = run_couple(next_couple_order(ctx.secret_rng)); a != Attempt::kMeasured)
      return a;
  }
  // Rule 4b needs a reference block that follows the reference's own; only couples of the order
  // R C C R (probability 1/2 each) leave none, and then one C R R C couple is added.
  if (!rec.after_candidate_slowdown)
    if (Attempt a = run_couple({TimedSide::kCandidate, TimedSide::kReference, TimedSide::kReference,
                                TimedSide::kCandidate});
        a != Attempt::kMeasured)
      return a;
  if (auto slowed = after_candidate_violation(rec)) {
    rec.voided_attempts.push_back(*slowed);
    return Attempt::kVoid;
  }
  ref.finish();
  cand.finish();
  if (ctx.options.energy) w.energy = measure_energy(ctx);
  w.reference_solo_timing = w.reference_timing;
  w.reference_timing = ref.out.stats;
  ctx.reference_samples_ns = ref.samples.device_ns;
  ctx.candidate_timing = std::move(cand.out);
  // Marked, not voided: within a pair both sides saw nearly the same state, but the evaluation as a
  // whole crossed a wide range of clocks (interleave.h kClockSpreadMhz).
  if (rec.clock_spread) w.flags.push_back("clock_spread");
  if (reference_faster_than_solo(rec)) w.flags.push_back("reference_faster_than_solo");
  return Attempt::kMeasured;
}

// The reference alone again, in the GPU's present state: the baseline of the next attempt.
Attempt recalibrate_reference(EvalContext& ctx) {
  SideTiming solo = time_side(ctx, ctx.reference, false, seconds_to_ms(60.0));
  if (solo.failure) {
    Finding f = *solo.failure;
    f.status = PtxbStatus::kInfraError;
    f.detail = "reference recalibration: " + f.detail;
    return ended(ctx.conclude_finding(f));
  }
  ctx.workload.reference_timing = solo.stats;
  if (auto facts = ctx.device.facts(); facts.ok())
    ctx.reference_solo_sm_clock_mhz = facts->sm_clock_mhz;
  return Attempt::kMeasured;
}

}  // namespace

// Interleaved timing with up to `drift_retries` more attempts when the yardstick moved: under
// the H200's power cap a legitimate reference can drift past the limit from a calibration made
// in another thermal state (2 of 4 backward evaluations of a replay run, 2026-12-02), so the
// reference is calibrated again and the blocks start over; every voided attempt stays in the
// record, and a void on the last attempt ends the evaluation (INFRA_ERROR).
StageOutcome interleaved_timing(EvalContext& ctx) {
  WorkloadEval& w = ctx.workload;
  std::vector<std::string> voided;
  for (int attempt = 0;; ++attempt) {
    InterleaveRecord rec;
    rec.voided_attempts = voided;
    const Attempt a = interleave_once(ctx, rec);
    if (a == Attempt::kDone) return StageOutcome::kDone;
    voided = rec.voided_attempts;
    if (a == Attempt::kMeasured) {
      if (!voided.empty()) w.flags.push_back("reference_recalibrated");
      w.timing_interleave = std::move(rec);
      return StageOutcome::kContinue;
    }
    if (attempt >= ctx.policy.drift_retries) {
      w.timing_interleave = rec;
      return ctx.conclude(
          PtxbStatus::kInfraError, std::string(reason::kReferenceDrift),
          fmt::format("{} ({} attempt{}, the reference recalibrated before each retry)",
                      voided.back(), attempt + 1, attempt ? "s" : ""));
    }
    if (recalibrate_reference(ctx) == Attempt::kDone) return StageOutcome::kDone;
  }
}

}  // namespace ptxb
