// Timing (design.md §3.4) and the integrity tripwires on the timed samples: the anti-caching
// refreshes, the device time vs the supervisor's bracket, the fresh-input slowdown, the GPU-state
// guard and the physical floor. Ends with the PASSED verdict.
#include <algorithm>

#include "core/strings.h"
#include "eval/integrity_reasons.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// Rewrites set `set`'s inputs in place before a refresh sample and poisons its outputs.
std::optional<Finding> refresh_inputs(EvalContext& ctx, const RefreshPoint& point, int set,
                                      int sample, int trial) {
  const std::uint64_t fresh =
      derive_set_seed(ctx.options.seed ^ 0x5eed, ctx.task.name, 1000 + sample);
  Status rewritten = point.kind == RefreshKind::kFull ? ctx.device.regenerate(set, fresh)
                                                      : ctx.device.perturb(set, fresh);
  if (!rewritten.ok())
    return Finding{PtxbStatus::kInfraError, "regenerate", rewritten.error().message};
  if (auto s = ctx.device.poison(set, trial); !s.ok())
    return Finding{PtxbStatus::kInfraError, "poison", s.error().message};
  return std::nullopt;
}

// Verifies a refresh sample's outputs and keeps its time apart (fresh_input_finding).
std::optional<Finding> check_refresh(EvalContext& ctx, SideTiming& out, const RefreshPoint& point,
                                     int set, int sample, int trial, const CallReply& reply) {
  auto checks = ctx.device.check(set, trial);
  if (!checks.ok()) return Finding{PtxbStatus::kInfraError, "compare", checks.error().message};
  out.refresh_checks.insert(out.refresh_checks.end(), checks->begin(), checks->end());
  out.fresh_ns.push_back(static_cast<double>(reply.device_ns));
  out.refreshes.push_back(RefreshRecord{sample, set, std::string(refresh_kind_name(point.kind)),
                                        reply.device_ns * 1e-6});
  auto f = first_failure(*checks);
  if (!f) return std::nullopt;
  f->reason = std::string(reason::kStaleOutput);
  f->detail = fmt::format(
                  "after the inputs were rewritten in place ({}) between timed "
                  "calls, the outputs were wrong (results cached across calls?): ",
                  point.kind == RefreshKind::kFull ? "all values" : "one block per input") +
              f->detail;
  if (f->status == PtxbStatus::kIncorrectNumerical) f->status = PtxbStatus::kRewardHack;
  return f;
}

// The samples' accumulators, summarised into TimingStats at the end.
struct SampleLog {
  std::vector<double> device_ns, overhead_ns;
  std::optional<std::uint32_t> clock_min, clock_max;

  void add(const CallReply& reply, const CallBracket& bracket) {
    device_ns.push_back(static_cast<double>(reply.device_ns));
    overhead_ns.push_back(static_cast<double>(bracket.round_trip_ns) -
                          static_cast<double>(reply.device_ns));
    if (reply.sm_clock_mhz) {
      clock_min = std::min(clock_min.value_or(*reply.sm_clock_mhz), *reply.sm_clock_mhz);
      clock_max = std::max(clock_max.value_or(*reply.sm_clock_mhz), *reply.sm_clock_mhz);
    }
  }
  TimingStats summarize(const TimingPolicy& policy) {
    TimingStats stats = summarize_samples(device_ns, policy);
    std::sort(overhead_ns.begin(), overhead_ns.end());
    stats.host_overhead_ms = percentile_sorted(overhead_ns, 0.5) * 1e-6;
    stats.sm_clock_mhz_min = clock_min;
    stats.sm_clock_mhz_max = clock_max;
    return stats;
  }
};

}  // namespace

SideTiming time_side(EvalContext& ctx, RunnerSide& side, bool is_candidate,
                     milliseconds call_limit) {
  const TimingPolicy& policy = ctx.policy;
  SideTiming out;
  const auto side_start = EvalClock::now();
  SampleLog samples;
  // Anti-caching (design.md §3.4): before three samples spread over the first min_samples, the
  // set's inputs are rewritten in place (fully, or one block per input) and that call's
  // outputs are verified and its time kept apart (fresh_input_finding).
  const std::vector<RefreshPoint> refresh_at =
      refresh_schedule(ctx.options.seed, policy.min_samples);
  int call_index = 0;
  for (int i = 0;; ++i) {
    const bool warmup = i < policy.warmup_calls;
    const int sample = i - policy.warmup_calls;
    if (!warmup) {
      const double elapsed = std::chrono::duration<double>(EvalClock::now() - side_start).count();
      if (next_sampling_step(samples.device_ns, elapsed, policy) != SamplingDecision::kContinue)
        break;
    }
    const int set = call_index++ % ctx.num_sets;
    auto point = std::find_if(refresh_at.begin(), refresh_at.end(),
                              [&](const RefreshPoint& p) { return p.sample == sample; });
    const bool refresh = is_candidate && !warmup && point != refresh_at.end();
    const int refresh_trial = 10 + static_cast<int>(out.refreshes.size());
    if (refresh)
      if ((out.failure = refresh_inputs(ctx, *point, set, sample, refresh_trial))) return out;
    CallBracket bracket;
    auto reply = side.session->call(CallRequest{static_cast<std::uint64_t>(set), true, false},
                                    call_limit, &bracket);
    if (!reply.ok()) {
      out.failure = call_failure(side, reply.error(), call_limit);
      return out;
    }
    if ((out.failure =
             reply_findings(*reply, is_candidate ? ctx.reply_checks : ctx.reference_reply_checks)))
      return out;
    // Correctness passed before timing started, so a call that enqueued nothing did its work
    // somewhere the window does not see.
    if (is_candidate && !reply->has_window) {
      out.failure = Finding{PtxbStatus::kRewardHack, std::string(reason::kNoGpuWork),
                            fmt::format("timed call {} enqueued no GPU work on any stream "
                                        "(the results were produced outside the call)",
                                        i + 1)};
      return out;
    }
    if (refresh)
      if ((out.failure = check_refresh(ctx, out, *point, set, sample, refresh_trial, *reply)))
        return out;
    if (warmup) continue;
    // The device time can never exceed the supervisor's own round trip around the call.
    if (static_cast<double>(reply->device_ns) >
        static_cast<double>(bracket.round_trip_ns) + policy.bracket_tolerance_ns) {
      out.failure = Finding{PtxbStatus::kRewardHack, std::string(reason::kDeviceTimeExceedsBracket),
                            fmt::format("reported device time {} ns exceeds the supervisor's "
                                        "round trip {} ns",
                                        reply->device_ns, bracket.round_trip_ns)};
      return out;
    }
    samples.add(*reply, bracket);
    out.kernels.add(*reply);
    if (!refresh) out.repeat_ns.push_back(static_cast<double>(reply->device_ns));
  }
  out.stats = samples.summarize(policy);
  return out;
}

StageOutcome stage_timing(EvalContext& ctx) {
  const auto start = EvalClock::now();
  ctx.candidate_timing = time_side(ctx, ctx.candidate, true, ctx.call_limit);
  WorkloadEval& w = ctx.workload;
  const SideTiming& timing = ctx.candidate_timing;
  w.checks.insert(w.checks.end(), timing.refresh_checks.begin(), timing.refresh_checks.end());
  if (timing.failure) return ctx.fail_candidate(*timing.failure);
  w.candidate_timing = timing.stats;
  ctx.stage_done("timing", start);
  w.integrity.refreshes = timing.refreshes;
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

}  // namespace

StageOutcome stage_integrity(EvalContext& ctx) {
  WorkloadEval& w = ctx.workload;
  if (auto slow = fresh_input_check(ctx)) return ctx.fail_candidate(*slow);
  w.runner.gpu_state = gpu_state(ctx);
  ctx.record_runner_log();
  if (auto s = ctx.candidate.session->shutdown(milliseconds(10000)); !s.ok())
    w.runner.shutdown = s.error().message;
  w.runner.exit = ctx.candidate.session->wait(milliseconds(5000)).describe();

  if (w.physical_floor_ms > 0 &&
      w.candidate_timing->median_ms < ctx.policy.physical_floor_fraction * w.physical_floor_ms) {
    return ctx.conclude_finding(Finding{
        PtxbStatus::kRewardHack, std::string(reason::kBelowPhysicalFloor),
        fmt::format("median device time {:.4f} ms is below 0.9 x the physical floor {:.4f} ms "
                    "(tensor-core peak and HBM bandwidth): the work cannot have been done",
                    w.candidate_timing->median_ms, w.physical_floor_ms)});
  }
  if (w.reference_timing && w.candidate_timing->median_ms > 0)
    w.speedup = w.reference_timing->median_ms / w.candidate_timing->median_ms;
  const std::string passed_message =
      w.speedup
          ? fmt::format("correct; {:.4f} ms vs reference {:.4f} ms: speedup {:.3f}x",
                        w.candidate_timing->median_ms, w.reference_timing->median_ms, *w.speedup)
          : fmt::format("correct; {:.4f} ms (no library reference for this task)",
                        w.candidate_timing->median_ms);
  // Recorded now; the profile stage may still replace the verdict (a sandbox stop under ncu).
  w.status = PtxbStatus::kPassed;
  w.message = passed_message;
  ctx.result.workloads.push_back(w);
  ctx.finish(PtxbStatus::kPassed, "", passed_message);
  return StageOutcome::kContinue;
}

}  // namespace ptxb
