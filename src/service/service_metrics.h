// The service's counters, rendered in the Prometheus text format (GET /v1/metrics): queue depth,
// per-stage times (queue wait, run), throughput (jobs finished), failures by status and reason,
// worker restarts, HTTP answers by status code.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace ptxb::service {

// Gauges read at render time from the service's state.
struct ServiceGauges {
  std::int64_t queued = 0;
  std::int64_t running = 0;
  std::int64_t waiters = 0;
  std::map<std::string, std::string> worker_states;  // worker -> state
};

class ServiceMetrics {
 public:
  void job_submitted();
  // A terminal job: `state` done/failed/cancelled, `verdict` the PtxbStatus when done.
  void job_finished(const std::string& state, const std::string& verdict, const std::string& reason,
                    double queue_seconds, double run_seconds);
  void worker_restarted(const std::string& worker, const std::string& reason);
  void canary_ran(const std::string& worker, bool ok);
  void http_answered(int status);
  void rejected(const std::string& why);  // rate_limited, quota, unauthorized, too_large, ...

  std::string render(const ServiceGauges& gauges) const;

 private:
  struct Sum {
    double seconds = 0;
    std::int64_t count = 0;
  };
  mutable std::mutex mutex_;
  std::int64_t submitted_ = 0;
  std::map<std::pair<std::string, std::string>, std::int64_t> finished_;  // (state, verdict)
  std::map<std::string, std::int64_t> failure_reasons_;                   // failed: reason class
  Sum queue_wait_, run_;
  std::map<std::string, std::int64_t> restarts_;
  std::map<std::pair<std::string, bool>, std::int64_t> canaries_;
  std::map<int, std::int64_t> http_;
  std::map<std::string, std::int64_t> rejected_;
};

}  // namespace ptxb::service
