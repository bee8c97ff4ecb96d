// The reference implementation's timing recipe (REFERENCE-FACTS.md "Evaluation they run per
// turn"), for comparison with published numbers: per trial one input set, 10 warm-up and 50
// timed calls back to back with the L2 flushed before each, the CUPTI span of each call; the
// median of each trial's 50, the mean of the trials' medians; 3 trials for forward tasks and
// GEMM, 1 for backward ones; speedup = reference / candidate. Our default method differs
// (spaced samples, interleaved sides, extension to an RSE target): the recipe's back-to-back
// samples run at the sustained clock.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

inline constexpr int kPaperWarmupCalls = 10;
inline constexpr int kPaperTimedCalls = 50;

// workloads[].paper_timing.
struct PaperTimingRecord {
  int trials = 0;
  std::vector<double> reference_trial_medians_ms, candidate_trial_medians_ms;
  double reference_ms = 0, candidate_ms = 0;  // the means of the trial medians
  std::optional<double> speedup;

  Json to_json() const;
  static Result<PaperTimingRecord> from_json(const Json& json);
};

// The median of one trial's timed calls: `device_ns` holds the warm-up calls first.
Result<double> paper_trial_median_ms(const std::vector<std::uint64_t>& device_ns);

// Mean of the trial medians.
double paper_mean_ms(const std::vector<double>& trial_medians_ms);

}  // namespace ptxb
