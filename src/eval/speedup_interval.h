// The speedup and its 95 % interval: a percentile bootstrap over the two sides' timed samples,
// with a fixed number of resamples and a fixed seed so that the same samples always give the
// same interval (it is in the trace, the feedback and the report, and a rerun of the summary
// must not move it).
//
// Interleaved timing (eval/interleave.h) measures in couples of blocks (R C C R or C R R C);
// the speedup is the median over couples of (reference median / candidate median within the
// couple), and the bootstrap resamples within each couple. Why per couple rather than one ratio
// of pooled medians: each couple compares the two sides a fraction of a second apart, so a dip
// of the SM clock (the H200's sw_power_cap, 1980 -> 1710 MHz for under a second) that lands on
// one couple's candidate blocks moves that couple's ratio only; pooled, it moved a backward A/A
// evaluation to 0.965 (2026-12-02, seed 3). Sequential timing is one couple of all samples.
//
// Resampling draws indices as `generator() % n` from a std::mt19937_64 (whose sequence the
// standard fixes), not through std::uniform_int_distribution (whose algorithm it does not), so
// the interval is the same with every standard library.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct SpeedupInterval {
  double low = 0;
  double high = 0;
  double level = 0.95;
  int resamples = 0;
  std::uint64_t seed = 0;

  Json to_json() const;
  static Result<SpeedupInterval> from_json(const Json& json);
};

inline constexpr int kBootstrapResamples = 2000;
inline constexpr std::uint64_t kBootstrapSeed = 0x5eedb007;

// One couple of blocks: each side's timed samples in it (device ns).
struct CoupleSamples {
  std::vector<double> reference_ns;
  std::vector<double> candidate_ns;
};

// Reference median / candidate median of each couple, in order; nullopt when there is no
// couple, a side of a couple has no sample, or a median is not positive.
std::optional<std::vector<double>> couple_ratios(const std::vector<CoupleSamples>& couples);

// The median of couple_ratios; nullopt where they are.
std::optional<double> couple_speedup(const std::vector<CoupleSamples>& couples);

// The smallest of the couples' candidate medians (0 without a sample): the physical-floor check
// holds every couple the speedup is made of to the floor, not only the pooled median.
double lowest_candidate_median_ns(const std::vector<CoupleSamples>& couples);

// The interval of couple_speedup: each resample redraws every couple's two sides (with
// replacement, within the couple) and takes the median of the couples' ratios. With one couple
// it is bootstrap_speedup. nullopt where couple_speedup is.
std::optional<SpeedupInterval> bootstrap_couple_speedup(const std::vector<CoupleSamples>& couples,
                                                        int resamples = kBootstrapResamples,
                                                        std::uint64_t seed = kBootstrapSeed);

// One couple of all samples: the ratio of pooled medians. nullopt when either side has no
// sample or a median is not positive.
std::optional<SpeedupInterval> bootstrap_speedup(const std::vector<double>& reference_ns,
                                                 const std::vector<double>& candidate_ns,
                                                 int resamples = kBootstrapResamples,
                                                 std::uint64_t seed = kBootstrapSeed);

}  // namespace ptxb
