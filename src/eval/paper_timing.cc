#include "eval/paper_timing.h"

#include <algorithm>
#include <numeric>

#include "core/json_fields.h"
#include "eval/timing_stats.h"

namespace ptxb {

Result<double> paper_trial_median_ms(const std::vector<std::uint64_t>& device_ns) {
  if (device_ns.size() != static_cast<std::size_t>(kPaperWarmupCalls + kPaperTimedCalls))
    return make_error("timing", "paper recipe: {} call times, expected {}", device_ns.size(),
                      kPaperWarmupCalls + kPaperTimedCalls);
  std::vector<double> timed(device_ns.begin() + kPaperWarmupCalls, device_ns.end());
  if (std::any_of(timed.begin(), timed.end(), [](double ns) { return ns <= 0; }))
    return make_error("timing", "paper recipe: a timed call recorded no GPU activity");
  std::sort(timed.begin(), timed.end());
  return percentile_sorted(timed, 0.5) * 1e-6;
}

double paper_mean_ms(const std::vector<double>& trial_medians_ms) {
  if (trial_medians_ms.empty()) return 0;
  return std::accumulate(trial_medians_ms.begin(), trial_medians_ms.end(), 0.0) /
         static_cast<double>(trial_medians_ms.size());
}

Json PaperTimingRecord::to_json() const {
  Json j{{"trials", trials},
         {"reference_trial_medians_ms", reference_trial_medians_ms},
         {"candidate_trial_medians_ms", candidate_trial_medians_ms},
         {"reference_ms", reference_ms},
         {"candidate_ms", candidate_ms}};
  j["speedup"] = speedup ? Json(*speedup) : Json(nullptr);
  return j;
}

Result<PaperTimingRecord> PaperTimingRecord::from_json(const Json& json) {
  PaperTimingRecord p;
  FieldReader r(json);
  r.required("trials", p.trials);
  r.required("reference_trial_medians_ms", p.reference_trial_medians_ms);
  r.required("candidate_trial_medians_ms", p.candidate_trial_medians_ms);
  r.required("reference_ms", p.reference_ms).required("candidate_ms", p.candidate_ms);
  r.optional("speedup", p.speedup);
  PTXB_RETURN_IF_ERROR(r.status());
  return p;
}

}  // namespace ptxb
