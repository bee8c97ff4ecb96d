#include "service/remote_evaluator.h"

#include <chrono>
#include <limits>
#include <thread>

#include "core/sha256.h"

namespace ptxb::service {

ServiceLoad ServiceLoad::from_health(const Json& health) {
  ServiceLoad load;
  if (!health.is_object()) return load;
  load.reachable = true;
  if (health.contains("capacity") && health["capacity"].is_object())
    load.serving = health["capacity"].value("serving", 0);
  if (health.contains("queue") && health["queue"].is_object()) {
    load.queued = health["queue"].value("queued", 0);
    load.running = health["queue"].value("running", 0);
  }
  return load;
}

int pick_least_loaded(const std::vector<ServiceLoad>& loads, std::size_t rotation) {
  int best = -1;
  double best_backlog = std::numeric_limits<double>::infinity();
  const std::size_t n = loads.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (rotation + k) % n;
    const ServiceLoad& load = loads[i];
    if (!load.reachable || load.serving <= 0) continue;
    // Jobs ahead of a new one per GPU that will work them off.
    const double backlog = static_cast<double>(load.queued + load.running) / load.serving;
    if (backlog < best_backlog) {
      best_backlog = backlog;
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string RemoteEvaluator::idempotency_key(const std::string& prefix, const std::string& turn_key,
                                             const EvalRequest& request) {
  return "turn-" + sha256_hex(prefix + "\n" + turn_key + "\n" + request_key(request));
}

RemoteEvaluator::RemoteEvaluator(HttpTransport& transport, RemoteEvaluatorOptions options,
                                 const Clock& clock)
    : options_(std::move(options)), clock_(clock) {
  for (const auto& url : options_.urls)
    endpoints_.push_back({std::make_unique<ServiceClient>(transport, url, options_.token), 0});
}

bool RemoteEvaluator::is_network(const Error& error) const {
  // The service did not answer (refused, reset, timed out) or answered as a proxy does when the
  // service behind it is gone; anything else is the service's considered answer.
  return error.code == "network" || error.code == "timeout" || error.code == "http" ||
         error.code == "unavailable" || error.code == "internal";
}

std::vector<std::size_t> RemoteEvaluator::candidates() {
  std::lock_guard<std::mutex> lock(mutex_);
  const double now = clock_.now_seconds();
  std::vector<std::size_t> up;
  for (std::size_t i = 0; i < endpoints_.size(); ++i)
    if (endpoints_[i].down_until <= now) up.push_back(i);
  if (up.empty())  // every one failed lately: ask them all again rather than give up
    for (std::size_t i = 0; i < endpoints_.size(); ++i) up.push_back(i);
  return up;
}

void RemoteEvaluator::mark_down(std::size_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  endpoints_[index].down_until = clock_.now_seconds() + options_.down_seconds;
}

int RemoteEvaluator::capacity() {
  int serving = 0;
  for (std::size_t i = 0; i < endpoints_.size(); ++i) {
    auto health = endpoints_[i].client->health();
    if (health.ok())
      serving += ServiceLoad::from_health(*health).serving;
    else
      mark_down(i);
  }
  return serving;
}

Result<EvalResult> RemoteEvaluator::evaluate(const EvalRequest& request) {
  return evaluate_turn(request, "");
}

Result<EvalResult> RemoteEvaluator::evaluate_turn(const EvalRequest& request_in,
                                                  const std::string& turn_key) {
  // The key names the turn as the agent asked for it, before the local compile.
  const std::string key = idempotency_key(options_.key_prefix, turn_key, request_in);
  EvalRequest request = request_in;
  if (options_.prepare) {
    PTXB_ASSIGN_OR_RETURN(std::optional<EvalResult> local, options_.prepare(request));
    if (local) return std::move(*local);
  }
  std::string last_error = "no evaluation service was asked";
  double pause = options_.retry_pause_seconds;
  for (int round = 0; round < options_.max_rounds; ++round) {
    if (round > 0) {
      // Give a restarting service (about a second) or a network blip time before the next round.
      std::this_thread::sleep_for(std::chrono::duration<double>(pause));
      pause = std::min(2 * pause, 10.0);
    }
    // 1. Does a service already hold this turn (submitted before a restart or a lost answer)?
    std::optional<std::size_t> target;
    std::string job_id;
    const std::vector<std::size_t> up = candidates();
    std::vector<ServiceLoad> loads(endpoints_.size());
    for (std::size_t i : up) {
      auto found = endpoints_[i].client->find(key);
      if (!found.ok()) {
        if (!is_network(found.error())) return found.error();
        last_error = found.error().message;
        mark_down(i);
        continue;
      }
      if (*found && !target) {
        target = i;
        job_id = (**found).value("id", "");
      }
      loads[i].reachable = true;
    }
    // 2. If not, the least loaded service gets it.
    if (!target) {
      for (std::size_t i : up) {
        if (!loads[i].reachable) continue;
        auto health = endpoints_[i].client->health();
        if (!health.ok()) {
          last_error = health.error().message;
          mark_down(i);
          loads[i].reachable = false;
          continue;
        }
        loads[i] = ServiceLoad::from_health(*health);
      }
      std::size_t rotation;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        rotation = rotation_++;
      }
      const int chosen = pick_least_loaded(loads, rotation);
      if (chosen < 0) {
        if (last_error.rfind("no reachable", 0) != 0)
          last_error = "no reachable evaluation service has a serving GPU worker (last error: " +
                       last_error + ")";
        continue;
      }
      auto job = endpoints_[static_cast<std::size_t>(chosen)].client->submit(request, key);
      if (!job.ok()) {
        if (!is_network(job.error())) return job.error();
        last_error = job.error().message;
        mark_down(static_cast<std::size_t>(chosen));
        continue;
      }
      target = static_cast<std::size_t>(chosen);
      job_id = job->value("id", "");
    }
    // 3. Wait for it there; a service that goes away hands the turn to the next round.
    ServiceClient& client = *endpoints_[*target].client;
    auto finished = client.wait(job_id, options_.job_timeout_seconds);
    if (!finished.ok()) {
      if (finished.error().code == "job_timeout") return finished.error();  // there, but slow
      last_error = finished.error().message;
      mark_down(*target);
      continue;
    }
    const std::string state = finished->value("state", "");
    if (state != "done")
      return make_error("job_" + state, "{}: job {} {}: {}", client.base_url(), job_id, state,
                        (*finished)["reason"].is_string() ? (*finished)["reason"].get<std::string>()
                                                          : std::string("-"));
    auto result = client.result(job_id);
    if (!result.ok() && is_network(result.error())) {
      last_error = result.error().message;
      mark_down(*target);
      continue;
    }
    return result;
  }
  return make_error("network", "evaluation services unavailable after {} attempts: {}",
                    options_.max_rounds, last_error);
}

}  // namespace ptxb::service
