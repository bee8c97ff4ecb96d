// The speedup's 95 % interval: a percentile bootstrap over the two sides' timed samples
// (reference median / candidate median), with a fixed number of resamples and a fixed seed so
// that the same samples always give the same interval (it is in the trace, the feedback and the
// report, and a rerun of the summary must not move it).
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

// nullopt when either side has no sample or a median is not positive.
std::optional<SpeedupInterval> bootstrap_speedup(const std::vector<double>& reference_ns,
                                                 const std::vector<double>& candidate_ns,
                                                 int resamples = kBootstrapResamples,
                                                 std::uint64_t seed = kBootstrapSeed);

}  // namespace ptxb
