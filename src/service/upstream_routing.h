// Where the front (`ptxbench serve --upstream`, service/upstream_service.h) sends its next job:
// to the backend with the most free GPU capacity, read from each backend's GET /v1/health.
//
// Free capacity is serving workers minus the backend's queued and running jobs (every client's,
// not only the front's) minus the jobs the front handed it since that reading. A backend takes a
// job while free > -serving: each serving worker has at most one job waiting behind the running
// one. That keeps every GPU busy between two readings of its health, while the fair order and the
// choice of backend stay at the front until a GPU is about to free up (a job that waits in a
// backend's queue can no longer go to a backend that frees up sooner).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/json_io.h"

namespace ptxb::service {

struct BackendLoad {
  bool reachable = false;
  int serving = 0;  // workers idle or busy (not restarting, drained or down)
  int queued = 0, running = 0;
  int handed = 0;  // jobs the front posted there since this reading

  // From a backend's /v1/health answer (reachable = true).
  static BackendLoad from_health(const Json& health);
  int free() const { return serving - queued - running - handed; }
  bool can_take() const { return reachable && serving > 0 && free() > -serving; }
};

// The backend to post the next job to, or nullopt when none can take one now. Ties go to the
// first at or after `*rotate` (which then moves past it), so equal backends share the work.
std::optional<std::size_t> pick_backend(const std::vector<BackendLoad>& loads, std::size_t* rotate);

}  // namespace ptxb::service
