#include "eval/timing_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/json_fields.h"

namespace ptxb {

Json TimingPolicy::to_json() const {
  Json j{{"warmup_calls", warmup_calls},
         {"min_samples", min_samples},
         {"target_rse", target_rse},
         {"max_samples", max_samples},
         {"min_samples_slow", min_samples_slow},
         {"budget_seconds", budget_seconds},
         {"call_limit_floor_seconds", call_limit_floor_seconds},
         {"call_limit_reference_multiple", call_limit_reference_multiple},
         {"bracket_tolerance_ns", bracket_tolerance_ns},
         {"physical_floor_fraction", physical_floor_fraction},
         {"fresh_input_slowdown_limit", fresh_input_slowdown_limit},
         {"revalidation_speedup", revalidation_speedup},
         {"revalidation_trials", revalidation_trials}};
  // Sequential timing writes the policy as it was before interleaving existed, so documents of
  // either age read back the same (from_json: no "interleave" means sequential).
  if (paper) j["paper"] = true;
  if (interleave) {
    j["interleave"] = true;
    j["block_samples"] = block_samples;
    j["drift_limit"] = drift_limit;
    j["drift_retries"] = drift_retries;
  }
  return j;
}

Result<TimingPolicy> TimingPolicy::from_json(const Json& json) {
  // A policy may name only what it changes: every field is optional, defaulting to the
  // member initialisers above.
  TimingPolicy p;
  FieldReader r(json);
  r.optional("warmup_calls", p.warmup_calls).optional("min_samples", p.min_samples);
  r.optional("target_rse", p.target_rse).optional("max_samples", p.max_samples);
  r.optional("min_samples_slow", p.min_samples_slow).optional("budget_seconds", p.budget_seconds);
  r.optional("call_limit_floor_seconds", p.call_limit_floor_seconds);
  r.optional("call_limit_reference_multiple", p.call_limit_reference_multiple);
  r.optional("bracket_tolerance_ns", p.bracket_tolerance_ns);
  r.optional("physical_floor_fraction", p.physical_floor_fraction);
  r.optional("fresh_input_slowdown_limit", p.fresh_input_slowdown_limit);
  r.optional("revalidation_speedup", p.revalidation_speedup);
  r.optional("revalidation_trials", p.revalidation_trials);
  // Absent in documents written before interleaved timing existed, whose timing was sequential.
  p.interleave = false;
  r.optional("interleave", p.interleave).optional("block_samples", p.block_samples);
  r.optional("drift_limit", p.drift_limit).optional("paper", p.paper);
  r.optional("drift_retries", p.drift_retries);
  PTXB_RETURN_IF_ERROR(r.status());
  if (p.block_samples < 1) return make_error("validation", "timing: block_samples must be >= 1");
  if (!(p.drift_limit > 0)) return make_error("validation", "timing: drift_limit must be > 0");
  if (p.drift_retries < 0 || p.drift_retries > 5)
    return make_error("validation", "timing: drift_retries must be 0-5");
  return p;
}

Json TimingStats::to_json() const {
  Json j{{"samples", samples},
         {"median_ms", median_ms},
         {"mean_ms", mean_ms},
         {"min_ms", min_ms},
         {"max_ms", max_ms},
         {"p25_ms", p25_ms},
         {"p75_ms", p75_ms},
         {"iqr_ms", iqr_ms},
         {"stdev_ms", stdev_ms},
         {"rse", rse},
         {"converged", converged},
         {"reduced_samples", reduced_samples},
         {"host_overhead_ms", host_overhead_ms}};
  j["sm_clock_mhz_min"] = sm_clock_mhz_min ? Json(*sm_clock_mhz_min) : Json(nullptr);
  j["sm_clock_mhz_max"] = sm_clock_mhz_max ? Json(*sm_clock_mhz_max) : Json(nullptr);
  return j;
}

Result<TimingStats> TimingStats::from_json(const Json& json) {
  TimingStats s;
  FieldReader r(json);
  r.required("samples", s.samples).required("median_ms", s.median_ms);
  // The spread statistics are NaN for degenerate sample sets, and JSON writes NaN as null:
  // optional, 0 when null.
  r.optional("mean_ms", s.mean_ms).optional("min_ms", s.min_ms).optional("max_ms", s.max_ms);
  r.optional("p25_ms", s.p25_ms).optional("p75_ms", s.p75_ms).optional("iqr_ms", s.iqr_ms);
  r.optional("stdev_ms", s.stdev_ms).optional("rse", s.rse);
  r.required("converged", s.converged).required("reduced_samples", s.reduced_samples);
  r.optional("host_overhead_ms", s.host_overhead_ms);
  // null when the runner read no SM clock.
  r.optional("sm_clock_mhz_min", s.sm_clock_mhz_min)
      .optional("sm_clock_mhz_max", s.sm_clock_mhz_max);
  PTXB_RETURN_IF_ERROR(r.status());
  return s;
}

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const std::size_t upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

double relative_standard_error(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const double n = static_cast<double>(values.size());
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / n;
  if (mean <= 0.0) return 0.0;
  double squares = 0.0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double stdev = std::sqrt(squares / (n - 1.0));
  return stdev / std::sqrt(n) / mean;
}

TimingStats summarize_samples(const std::vector<double>& device_ns, const TimingPolicy& policy) {
  TimingStats s;
  if (device_ns.empty()) return s;
  std::vector<double> ms;
  ms.reserve(device_ns.size());
  for (double ns : device_ns) ms.push_back(ns * 1e-6);
  std::sort(ms.begin(), ms.end());
  const double n = static_cast<double>(ms.size());
  s.samples = static_cast<int>(ms.size());
  s.median_ms = percentile_sorted(ms, 0.5);
  s.min_ms = ms.front();
  s.max_ms = ms.back();
  s.p25_ms = percentile_sorted(ms, 0.25);
  s.p75_ms = percentile_sorted(ms, 0.75);
  s.iqr_ms = s.p75_ms - s.p25_ms;
  s.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / n;
  double squares = 0.0;
  for (double v : ms) squares += (v - s.mean_ms) * (v - s.mean_ms);
  s.stdev_ms = ms.size() > 1 ? std::sqrt(squares / (n - 1.0)) : 0.0;
  s.rse = relative_standard_error(ms);
  s.reduced_samples = s.samples < policy.min_samples;
  s.converged = !s.reduced_samples && s.rse <= policy.target_rse;
  return s;
}

SamplingDecision next_sampling_step(const std::vector<double>& device_ns, double elapsed_seconds,
                                    const TimingPolicy& policy) {
  const int n = static_cast<int>(device_ns.size());
  if (n >= policy.max_samples) return SamplingDecision::kStopCap;
  // The budget may cut below min_samples, never below the slow-kernel minimum.
  if (elapsed_seconds >= policy.budget_seconds && n >= policy.min_samples_slow)
    return SamplingDecision::kStopBudget;
  if (n < policy.min_samples) return SamplingDecision::kContinue;
  if (relative_standard_error(device_ns) <= policy.target_rse)
    return SamplingDecision::kStopConverged;
  return SamplingDecision::kContinue;
}

}  // namespace ptxb
