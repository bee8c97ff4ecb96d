#include "service/canary.h"

#include <algorithm>
#include <cmath>

namespace ptxb::service {

CanaryVerdict judge_canary(const std::vector<double>& history, double ms,
                           const CanaryPolicy& policy) {
  CanaryVerdict verdict;
  if (static_cast<int>(history.size()) < policy.min_history) return verdict;
  std::vector<double> recent(
      history.end() - std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(history.size()),
                                               policy.history_size),
      history.end());
  std::sort(recent.begin(), recent.end());
  const std::size_t n = recent.size();
  const double median = n % 2 ? recent[n / 2] : 0.5 * (recent[n / 2 - 1] + recent[n / 2]);
  verdict.judged = true;
  verdict.baseline_ms = median;
  verdict.drift = median > 0 ? std::abs(ms / median - 1.0) : 0.0;
  verdict.ok = *verdict.drift <= policy.max_drift;
  return verdict;
}

Json CanaryVerdict::to_json(double ms) const {
  return Json{{"ms", ms},
              {"ok", ok},
              {"judged", judged},
              {"baseline_ms", baseline_ms ? Json(*baseline_ms) : Json(nullptr)},
              {"drift", drift ? Json(*drift) : Json(nullptr)}};
}

}  // namespace ptxb::service
