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

double median_in_place(std::vector<double>& values) {
  std::sort(values.begin(), values.end());
  return percentile_sorted(values, 0.5);
}

bool usable(const std::vector<CoupleSamples>& couples) {
  if (couples.empty()) return false;
  for (const CoupleSamples& c : couples)
    if (c.reference_ns.empty() || c.candidate_ns.empty()) return false;
  return true;
}

}  // namespace

std::optional<std::vector<double>> couple_ratios(const std::vector<CoupleSamples>& couples) {
  if (!usable(couples)) return std::nullopt;
  std::vector<double> ratios, scratch;
  for (const CoupleSamples& c : couples) {
    scratch = c.reference_ns;
    const double reference = median_in_place(scratch);
    scratch = c.candidate_ns;
    const double candidate = median_in_place(scratch);
    if (!(reference > 0) || !(candidate > 0)) return std::nullopt;
    ratios.push_back(reference / candidate);
  }
  return ratios;
}

std::optional<double> couple_speedup(const std::vector<CoupleSamples>& couples) {
  auto ratios = couple_ratios(couples);
  if (!ratios) return std::nullopt;
  return median_in_place(*ratios);
}

double lowest_candidate_median_ns(const std::vector<CoupleSamples>& couples) {
  std::optional<double> lowest;
  std::vector<double> scratch;
  for (const CoupleSamples& c : couples) {
    scratch = c.candidate_ns;
    const double median = scratch.empty() ? 0.0 : median_in_place(scratch);
    lowest = std::min(lowest.value_or(median), median);
  }
  return lowest.value_or(0.0);
}

std::optional<SpeedupInterval> bootstrap_couple_speedup(const std::vector<CoupleSamples>& couples,
                                                        int resamples, std::uint64_t seed) {
  if (!couple_ratios(couples) || resamples <= 0) return std::nullopt;
  std::mt19937_64 generator(seed);
  std::vector<double> speedups, ratios, scratch;
  speedups.reserve(static_cast<std::size_t>(resamples));
  for (int b = 0; b < resamples; ++b) {
    ratios.clear();
    for (const CoupleSamples& c : couples) {
      const double reference = resampled_median(c.reference_ns, generator, scratch);
      const double candidate = resampled_median(c.candidate_ns, generator, scratch);
      if (!(reference > 0) || !(candidate > 0)) return std::nullopt;
      ratios.push_back(reference / candidate);
    }
    speedups.push_back(median_in_place(ratios));
  }
  std::sort(speedups.begin(), speedups.end());
  SpeedupInterval interval;
  interval.low = percentile_sorted(speedups, 0.025);
  interval.high = percentile_sorted(speedups, 0.975);
  interval.resamples = resamples;
  interval.seed = seed;
  return interval;
}

std::optional<SpeedupInterval> bootstrap_speedup(const std::vector<double>& reference_ns,
                                                 const std::vector<double>& candidate_ns,
                                                 int resamples, std::uint64_t seed) {
  return bootstrap_couple_speedup({CoupleSamples{reference_ns, candidate_ns}}, resamples, seed);
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
