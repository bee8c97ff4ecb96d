#include "service/upstream_routing.h"

namespace ptxb::service {

BackendLoad BackendLoad::from_health(const Json& health) {
  BackendLoad load;
  load.reachable = true;
  if (health.contains("capacity") && health["capacity"].is_object())
    load.serving = health["capacity"].value("serving", 0);
  if (health.contains("queue") && health["queue"].is_object()) {
    load.queued = health["queue"].value("queued", 0);
    load.running = health["queue"].value("running", 0);
  }
  return load;
}

std::optional<std::size_t> pick_backend(const std::vector<BackendLoad>& loads,
                                        std::size_t* rotate) {
  const std::size_t n = loads.size();
  std::optional<std::size_t> best;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (*rotate + k) % n;
    if (!loads[i].can_take()) continue;
    if (!best || loads[i].free() > loads[*best].free()) best = i;
  }
  if (best) *rotate = (*best + 1) % n;
  return best;
}

}  // namespace ptxb::service
