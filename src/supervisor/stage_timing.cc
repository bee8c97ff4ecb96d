// Timing (design.md §3.4): the candidate's samples, sequential (supervisor/side_sampler.h) or
// interleaved with the reference's (stage_interleave.cc); then the integrity tripwires on them:
// the fresh-input slowdown, the GPU-state guard and the physical floor. Ends with the PASSED
// verdict.
#include <algorithm>
#include <optional>
#include <string_view>

#include "core/strings.h"
#include "eval/integrity_reasons.h"
#include "eval/interleave.h"
#include "eval/speedup_interval.h"
#include "protocol/reference_selector.h"
#include "supervisor/candidate_freeze.h"
#include "supervisor/eval_stages.h"

namespace ptxb {

using std::chrono::milliseconds;

StageOutcome stage_timing(EvalContext& ctx) {
  const auto start = EvalClock::now();
  WorkloadEval& w = ctx.workload;
  if (ctx.policy.interleave && ctx.reference.session && w.reference_timing) {
    if (interleaved_timing(ctx) == StageOutcome::kDone) return StageOutcome::kDone;
  } else {
    ctx.candidate_timing = time_side(ctx, ctx.candidate, true, ctx.call_limit);
  }
  const SideTiming& timing = ctx.candidate_timing;
  w.checks.insert(w.checks.end(), timing.refresh_checks.begin(), timing.refresh_checks.end());
  if (timing.failure) return ctx.fail_candidate(*timing.failure);
  w.candidate_timing = timing.stats;
  ctx.stage_done("timing", start);
  if (ctx.policy.paper && ctx.reference.session)
    if (paper_timing_stage(ctx) == StageOutcome::kDone) return StageOutcome::kDone;
  // What the timed processes' libraries chose (they select on their own; diagnostic only).
  if (ctx.reference.session)
    w.reference.timed_backend = prepared_description_in_log(ctx.reference.session->log());
  if (ctx.library_as_candidate && ctx.candidate.session)
    w.reference.candidate_slot_backend = prepared_description_in_log(ctx.candidate.session->log());
  if (ctx.reference.session) {
    // Done with the yardstick: the GPU-state guard and the batch bound expect the candidate
    // alone.
    (void)ctx.reference.session->shutdown(milliseconds(10000));
    (void)ctx.reference.session->wait(milliseconds(5000));
    ctx.reference.session.reset();
  }
  w.integrity.refreshes = timing.refreshes;
  w.integrity.schedule_secret = ctx.schedule_secret;
  return StageOutcome::kContinue;
}

namespace {

// GPU-state guard (design.md §3.4): another compute process on the GPU, or a throttle reason
// other than idle/boost housekeeping, makes the timing noisy. The trace is marked, never
// silently used: consumers filter on gpu_state.noisy.
GpuStateRecord gpu_state(EvalContext& ctx) {
  GpuStateRecord state;
  state.before = ctx.facts.compute_processes;
  auto after = ctx.device.facts();
  bool& noisy = state.noisy;
  std::vector<std::string>& why = state.why;
  if (ctx.facts.compute_processes > 1) {
    noisy = true;
    why.push_back(
        fmt::format("{} compute processes on the GPU before the evaluation (only the "
                    "supervisor expected)",
                    ctx.facts.compute_processes));
  }
  if (after.ok()) {
    state.after_timing = *after;
    // The candidate runner is still alive here: supervisor + runner = 2.
    if (after->compute_processes > 2) {
      noisy = true;
      why.push_back(fmt::format("{} compute processes on the GPU after timing (2 expected)",
                                after->compute_processes));
    }
    for (const auto& reason : after->clock_event_reasons)
      if (contains(reason, "thermal") || contains(reason, "power_brake") ||
          reason == "hw_slowdown") {
        noisy = true;
        why.push_back("clock event: " + reason);
      }
  }
  return state;
}

// The fresh-input tripwire: calls on freshly rewritten inputs (refreshes and re-validation
// trials) much slower than the repeated ones mean the repeats were served from a cache.
std::optional<Finding> fresh_input_check(EvalContext& ctx) {
  WorkloadEval& w = ctx.workload;
  FreshInputRecord& fresh = w.integrity.fresh_input.emplace();
  std::vector<double> sorted = ctx.candidate_timing.fresh_ns;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty()) fresh.median_ms = percentile_sorted(sorted, 0.5) * 1e-6;
  fresh.slowdown_limit = ctx.policy.fresh_input_slowdown_limit;
  std::vector<double> repeats = ctx.candidate_timing.repeat_ns;
  std::sort(repeats.begin(), repeats.end());
  const double repeat_median_ns = repeats.empty() ? 0.0 : percentile_sorted(repeats, 0.5);
  fresh.repeat_median_ms = repeat_median_ns * 1e-6;
  auto slow = fresh_input_finding(ctx.candidate_timing.fresh_ns, repeat_median_ns,
                                  ctx.policy.fresh_input_slowdown_limit);
  if (w.integrity.revalidation) w.integrity.revalidation->passed = !slow;
  return slow;
}

// The speedup's couples: interleaved timing's couples of blocks (their ratios recorded in the
// trace), or one couple of all samples when the sides were timed one after the other.
Result<std::vector<CoupleSamples>> speedup_couples(EvalContext& ctx) {
  auto& interleave = ctx.workload.timing_interleave;
  if (!interleave)
    return std::vector<CoupleSamples>{
        CoupleSamples{ctx.reference_samples_ns, ctx.candidate_timing.samples_ns}};
  PTXB_ASSIGN_OR_RETURN(
      std::vector<CoupleSamples> couples,
      couple_samples(*interleave, ctx.reference_samples_ns, ctx.candidate_timing.samples_ns));
  interleave->couple_speedups = couple_ratios(couples).value_or(std::vector<double>{});
  return couples;
}

// REWARD_HACK below_physical_floor when a median device time `ms` (`what`: the pooled one, or the
// lowest of the interleaved couples') is under the policy's fraction of the task's physical
// floor (tensor-core peak and HBM bandwidth); nullopt otherwise or without a floor.
std::optional<Finding> below_floor(const EvalContext& ctx, double ms, std::string_view what) {
  const double floor_ms = ctx.workload.physical_floor_ms;
  const double fraction = ctx.policy.physical_floor_fraction;
  if (!(floor_ms > 0) || ms >= fraction * floor_ms) return std::nullopt;
  return Finding{PtxbStatus::kRewardHack, std::string(reason::kBelowPhysicalFloor),
                 fmt::format("{} {:.4f} ms is below {:g} x the physical floor {:.4f} ms "
                             "(tensor-core peak and HBM bandwidth): the work cannot have been done",
                             what, ms, fraction, floor_ms)};
}

}  // namespace

StageOutcome stage_integrity(EvalContext& ctx) {
  WorkloadEval& w = ctx.workload;
  if (auto slow = fresh_input_check(ctx)) return ctx.fail_candidate(*slow);
  w.runner.gpu_state = gpu_state(ctx);
  ctx.record_runner_log();
  if (auto s = ctx.candidate.session->shutdown(milliseconds(10000)); !s.ok())
    w.runner.shutdown = s.error().message;
  w.runner.exit = ctx.candidate.session->wait(milliseconds(5000)).describe();

  if (auto low = below_floor(ctx, w.candidate_timing->median_ms, "median device time"))
    return ctx.conclude_finding(*low);
  // Where the batch bound replaced the candidate's CUPTI time, no CUPTI-based number (ours or the
  // paper recipe's, both in-process) is used.
  const bool cupti_time = !w.integrity.batch_bound || w.integrity.batch_bound->time_used != "bound";
  // The recipe's candidate time is in-process too, and its batches are distinguishable from the
  // timed calls (flushed and back to back), so it is held to the same bound: below (1 − m)·B it
  // is not used, and ours (bounded) is reported instead, flagged.
  const auto& bound = w.integrity.batch_bound;
  const bool paper_within_bound =
      w.paper_timing && (!bound || bound->bound_ms <= 0 ||
                         w.paper_timing->candidate_ms >= (1 - bound->margin) * bound->bound_ms);
  if (w.paper_timing && !paper_within_bound) w.flags.push_back("paper_time_below_bound");
  const bool paper = w.paper_timing && w.paper_timing->speedup && cupti_time && paper_within_bound;
  if (paper) {
    // --timing-protocol paper: the recipe's speedup; no interval (the recipe has none).
    w.speedup = w.paper_timing->speedup;
  } else if (w.reference_timing && w.candidate_timing->median_ms > 0) {
    if (!cupti_time) {
      // The bound replaced the candidate's time: a ratio of medians, no interval.
      w.speedup = w.reference_timing->median_ms / w.candidate_timing->median_ms;
    } else {
      auto couples = speedup_couples(ctx);
      if (!couples.ok())
        return ctx.conclude(PtxbStatus::kInfraError, "timing_record", couples.error().message);
      // Every couple the speedup is made of is held to the physical floor (the pooled median
      // was, above): otherwise a candidate whose times are implausible in one or two couples
      // only could carry the median. Before the positivity check below, so a candidate couple
      // with a zero median is a finding, not an infrastructure error (couple_samples has
      // already refused records that are not whole couples).
      if (auto low = below_floor(ctx, lowest_candidate_median_ns(*couples) * 1e-6,
                                 "the median device time of an interleaved couple"))
        return ctx.conclude_finding(*low);
      w.speedup = couple_speedup(*couples);
      if (!w.speedup)
        return ctx.conclude(PtxbStatus::kInfraError, "timing_record",
                            "a couple of interleaved blocks has no positive median on one side");
      w.speedup_interval = bootstrap_couple_speedup(*couples);
    }
  }
  std::string passed_message;
  if (paper)
    passed_message = fmt::format(
        "correct; {:.4f} ms vs reference {:.4f} ms (the paper's recipe): speedup {:.3f}x",
        w.paper_timing->candidate_ms, w.paper_timing->reference_ms, *w.speedup);
  else if (w.speedup && w.timing_interleave && w.timing_interleave->couple_speedups.size() > 1)
    passed_message = fmt::format(
        "correct; {:.4f} ms vs reference {:.4f} ms: speedup {:.3f}x (median of {} interleaved "
        "couples)",
        w.candidate_timing->median_ms, w.reference_timing->median_ms, *w.speedup,
        w.timing_interleave->couple_speedups.size());
  else if (w.speedup)
    passed_message =
        fmt::format("correct; {:.4f} ms vs reference {:.4f} ms: speedup {:.3f}x",
                    w.candidate_timing->median_ms, w.reference_timing->median_ms, *w.speedup);
  else
    passed_message = fmt::format("correct; {:.4f} ms (no library reference for this task)",
                                 w.candidate_timing->median_ms);
  // Recorded now; the profile stage may still replace the verdict (a sandbox stop under ncu).
  w.status = PtxbStatus::kPassed;
  w.message = passed_message;
  ctx.result.workloads.push_back(w);
  ctx.finish(PtxbStatus::kPassed, "", passed_message);
  return StageOutcome::kContinue;
}

}  // namespace ptxb
