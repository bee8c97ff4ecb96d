#include "eval/batch_bound.h"

#include <algorithm>
#include <cmath>

#include "core/json_fields.h"

namespace ptxb {

int batch_calls(double overhead_ms, double call_ms, const BatchBoundPolicy& policy) {
  if (call_ms <= 0) return policy.max_calls;
  const double wanted =
      std::min(std::ceil(std::max(0.0, overhead_ms) / (policy.overhead_target * call_ms)),
               std::ceil(policy.max_batch_ms / call_ms));
  return static_cast<int>(std::clamp(wanted, static_cast<double>(policy.min_calls),
                                     static_cast<double>(policy.max_calls)));
}

double bound_per_call_ms(double bracket_ms, double overhead_ms, int calls) {
  if (calls <= 0) return 0;
  return std::max(0.0, (bracket_ms - overhead_ms) / calls);
}

bool write_phase_void(double phase_ms, double calibration_ms, const BatchBoundPolicy& policy) {
  return phase_ms > policy.void_factor * calibration_ms + policy.void_slack_ms;
}

double scaled_bound_ms(double u_ms, std::optional<double> reference_u_ms,
                       std::optional<double> reference_cupti_ms) {
  if (!reference_u_ms || !reference_cupti_ms || *reference_u_ms <= 0) return u_ms;
  return u_ms * std::min(1.0, *reference_cupti_ms / *reference_u_ms);
}

BoundJudgement judge_against_bound(double cupti_ms, double bound_ms,
                                   const BatchBoundPolicy& policy) {
  if (bound_ms <= 0) return BoundJudgement::kCupti;
  if (cupti_ms < policy.hack_fraction * bound_ms) return BoundJudgement::kForged;
  if (cupti_ms < (1.0 - policy.margin) * bound_ms) return BoundJudgement::kBound;
  return BoundJudgement::kCupti;
}

Json BatchBoundRecord::to_json() const {
  Json j{{"calls", calls},
         {"overhead_ms", overhead_ms},
         {"margin", margin},
         {"write_calibration_ms", write_calibration_ms},
         {"u_ms_samples", u_ms_samples},
         {"void_batches", void_batches},
         {"write_check", write_check},
         {"u_ms", u_ms},
         {"bound_ms", bound_ms},
         {"cupti_median_ms", cupti_median_ms},
         {"time_used", time_used},
         {"cost_ms", cost_ms}};
  j["reference_u_ms"] = reference_u_ms ? Json(*reference_u_ms) : Json(nullptr);
  j["reference_cupti_median_ms"] =
      reference_cupti_median_ms ? Json(*reference_cupti_median_ms) : Json(nullptr);
  j["honest_speedup"] = honest_speedup ? Json(*honest_speedup) : Json(nullptr);
  if (!write_check_off.empty()) j["write_check_off"] = write_check_off;
  return j;
}

Result<BatchBoundRecord> BatchBoundRecord::from_json(const Json& json) {
  BatchBoundRecord v;
  FieldReader r(json);
  r.required("calls", v.calls).required("overhead_ms", v.overhead_ms).required("margin", v.margin);
  r.required("write_calibration_ms", v.write_calibration_ms);
  r.required("u_ms_samples", v.u_ms_samples).required("void_batches", v.void_batches);
  r.required("u_ms", v.u_ms).required("bound_ms", v.bound_ms);
  r.required("cupti_median_ms", v.cupti_median_ms);
  r.required("time_used", v.time_used).optional("cost_ms", v.cost_ms);
  r.optional("reference_u_ms", v.reference_u_ms);
  r.optional("reference_cupti_median_ms", v.reference_cupti_median_ms);
  r.optional("honest_speedup", v.honest_speedup);
  r.optional("write_check", v.write_check).optional("write_check_off", v.write_check_off);
  PTXB_RETURN_IF_ERROR(r.status());
  return v;
}

}  // namespace ptxb
