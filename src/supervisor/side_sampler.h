// One side's timing in progress: the candidate's or the reference's runner, its samples and
// calls, by one code path for both sides, used sequentially (time_side, eval_stages.h) and in
// interleaved blocks (stage_interleave.cc).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "eval/timing_stats.h"
#include "supervisor/eval_context.h"

namespace ptxb {

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

// One side's timing in progress: its runner, its samples, the calls made so far. The same code
// path times both sides, sequentially (time_side) or in interleaved blocks.
struct SideSampler {
  EvalContext& ctx;
  RunnerSide& side;
  bool is_candidate;
  std::chrono::milliseconds call_limit;
  SideTiming out;
  SampleLog samples;
  int call_index = 0;
  double seconds = 0;  // wall time spent on this side: its sampling budget

  SamplingDecision decision() const {
    return next_sampling_step(samples.device_ns, seconds, ctx.policy);
  }
  void finish() {
    out.stats = samples.summarize(ctx.policy);
    out.samples_ns = samples.device_ns;
  }

  // One call. Unpredictable verification (design.md §3.4, docs/integrity.md): every timed
  // call's outputs are poisoned with a fresh pattern, so the buffers do not tell a verified call
  // from another; a secret random subset of all timed calls, early and late, is verified after
  // an in-place rewrite of its inputs, with the inputs hashed around it. The reference's calls
  // are poisoned the same way (same supervisor work between calls), never verified. Warm-up
  // calls are not recorded. False on a failure (out.failure).
  bool call(bool warmup);

 private:
  bool fail(Finding f) {
    out.failure = std::move(f);
    return false;
  }
};

}  // namespace ptxb
