#include "service/service_metrics.h"

#include <fmt/format.h>

namespace ptxb::service {
namespace {

// Label values are our own words (states, statuses, worker names, reason classes); escaped
// anyway, as the format requires.
std::string label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// "worker_crashed: gpu0: ..." -> "worker_crashed": reasons carry detail after the first colon.
std::string reason_class(const std::string& reason) {
  return reason.substr(0, reason.find(':'));
}

}  // namespace

void ServiceMetrics::job_submitted() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++submitted_;
}

void ServiceMetrics::job_finished(const std::string& state, const std::string& verdict,
                                  const std::string& reason, double queue_seconds,
                                  double run_seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_[{state, verdict}];
  if (state == "failed") ++failure_reasons_[reason_class(reason)];
  if (queue_seconds >= 0) {
    queue_wait_.seconds += queue_seconds;
    ++queue_wait_.count;
  }
  if (run_seconds >= 0) {
    run_.seconds += run_seconds;
    ++run_.count;
  }
}

void ServiceMetrics::worker_restarted(const std::string& worker, const std::string&) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++restarts_[worker];
}

void ServiceMetrics::canary_ran(const std::string& worker, bool ok) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++canaries_[{worker, ok}];
}

void ServiceMetrics::http_answered(int status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++http_[status];
}

void ServiceMetrics::rejected(const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++rejected_[why];
}

std::string ServiceMetrics::render(const ServiceGauges& gauges) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  auto header = [&](const char* name, const char* type, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  };
  header("ptxbench_queue_depth", "gauge", "Jobs queued, not yet dispatched.");
  out += fmt::format("ptxbench_queue_depth {}\n", gauges.queued);
  header("ptxbench_jobs_running", "gauge", "Jobs running on a worker.");
  out += fmt::format("ptxbench_jobs_running {}\n", gauges.running);
  header("ptxbench_long_polls", "gauge", "Status requests waiting for a change.");
  out += fmt::format("ptxbench_long_polls {}\n", gauges.waiters);
  header("ptxbench_jobs_submitted_total", "counter",
         "Jobs accepted (new, not idempotent repeats).");
  out += fmt::format("ptxbench_jobs_submitted_total {}\n", submitted_);
  header("ptxbench_jobs_finished_total", "counter",
         "Terminal jobs by state and, when done, the evaluation's status.");
  for (const auto& [key, n] : finished_)
    out += fmt::format("ptxbench_jobs_finished_total{{state=\"{}\",status=\"{}\"}} {}\n",
                       label(key.first), label(key.second), n);
  header("ptxbench_jobs_failed_total", "counter", "Failed jobs by reason.");
  for (const auto& [reason, n] : failure_reasons_)
    out += fmt::format("ptxbench_jobs_failed_total{{reason=\"{}\"}} {}\n", label(reason), n);
  header("ptxbench_stage_seconds", "summary", "Time per stage: queue (submit to dispatch), run.");
  out += fmt::format("ptxbench_stage_seconds_sum{{stage=\"queue\"}} {:.6f}\n", queue_wait_.seconds);
  out += fmt::format("ptxbench_stage_seconds_count{{stage=\"queue\"}} {}\n", queue_wait_.count);
  out += fmt::format("ptxbench_stage_seconds_sum{{stage=\"run\"}} {:.6f}\n", run_.seconds);
  out += fmt::format("ptxbench_stage_seconds_count{{stage=\"run\"}} {}\n", run_.count);
  header("ptxbench_worker_up", "gauge", "1 when the worker takes jobs (idle or busy).");
  for (const auto& [worker, state] : gauges.worker_states)
    out += fmt::format("ptxbench_worker_up{{worker=\"{}\",state=\"{}\"}} {}\n", label(worker),
                       label(state), state == "idle" || state == "busy" ? 1 : 0);
  header("ptxbench_worker_restarts_total", "counter", "Worker processes restarted.");
  for (const auto& [worker, n] : restarts_)
    out += fmt::format("ptxbench_worker_restarts_total{{worker=\"{}\"}} {}\n", label(worker), n);
  header("ptxbench_canary_total", "counter", "Calibration canaries by worker and outcome.");
  for (const auto& [key, n] : canaries_)
    out += fmt::format("ptxbench_canary_total{{worker=\"{}\",ok=\"{}\"}} {}\n", label(key.first),
                       key.second ? "true" : "false", n);
  header("ptxbench_http_responses_total", "counter", "HTTP answers by status code.");
  for (const auto& [code, n] : http_)
    out += fmt::format("ptxbench_http_responses_total{{code=\"{}\"}} {}\n", code, n);
  header("ptxbench_rejected_total", "counter", "Requests refused, by reason.");
  for (const auto& [why, n] : rejected_)
    out += fmt::format("ptxbench_rejected_total{{reason=\"{}\"}} {}\n", label(why), n);
  return out;
}

}  // namespace ptxb::service
