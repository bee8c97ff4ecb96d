#include "eval/speedup_interval.h"

#include <algorithm>
#include <random>

#include "core/json_fields.h"
#include "eval/timing_stats.h"

namespace ptxb {
namespace {

// The median of one resample (with replacement) of `values`; `scratch` is reused.
double resampled_median(const std::vector<double>& values, std::mt19937_64& generator,
                        std::vector<double>& scratch) {
  scratch.resize(values.size());
  for (auto& x : scratch) x = values[generator() % values.size()];
  std::sort(scratch.begin(), scratch.end());
  return percentile_sorted(scratch, 0.5);
}

}  // namespace

std::optional<SpeedupInterval> bootstrap_speedup(const std::vector<double>& reference_ns,
                                                 const std::vector<double>& candidate_ns,
                                                 int resamples, std::uint64_t seed) {
  if (reference_ns.empty() || candidate_ns.empty() || resamples <= 0) return std::nullopt;
  std::mt19937_64 generator(seed);
  std::vector<double> ratios, scratch;
  ratios.reserve(static_cast<std::size_t>(resamples));
  for (int b = 0; b < resamples; ++b) {
    const double reference = resampled_median(reference_ns, generator, scratch);
    const double candidate = resampled_median(candidate_ns, generator, scratch);
    if (reference <= 0 || candidate <= 0) return std::nullopt;
    ratios.push_back(reference / candidate);
  }
  std::sort(ratios.begin(), ratios.end());
  SpeedupInterval interval;
  interval.low = percentile_sorted(ratios, 0.025);
  interval.high = percentile_sorted(ratios, 0.975);
  interval.resamples = resamples;
  interval.seed = seed;
  return interval;
}

Json SpeedupInterval::to_json() const {
  return Json{
      {"low", low}, {"high", high}, {"level", level}, {"resamples", resamples}, {"seed", seed}};
}

Result<SpeedupInterval> SpeedupInterval::from_json(const Json& json) {
  SpeedupInterval v;
  FieldReader r(json);
  r.required("low", v.low).required("high", v.high).required("level", v.level);
  r.required("resamples", v.resamples).required("seed", v.seed);
  PTXB_RETURN_IF_ERROR(r.status());
  return v;
}

}  // namespace ptxb
