#include "service/http_api.h"

#include <httplib.h>

#include <cmath>

#include "core/strings.h"
#include "trace/definition.h"
#include "trace/workload.h"

namespace ptxb::service {
namespace {

// With a charset parameter on purpose: cpp-httplib 0.11 compresses "application/json" (and any
// "text/" type) whenever the client accepts it, and it picks Brotli at quality 11 with a 4 MiB
// window: about 10 ms of CPU per response on the 2-core machine, which was most of the service's
// per-job cost (bench/results/service.md). Results are small and travel on loopback or a LAN; a
// deployment that wants compression puts it in the TLS proxy in front.
constexpr const char* kJson = "application/json; charset=utf-8";

// The one mapping of the service's error codes to HTTP (eval_service.h lists them).
int http_status_for(const std::string& code) {
  if (code == "invalid" || code == "unknown_task" || code == "unsupported_operation") return 400;
  if (code == "unauthorized") return 401;
  if (code == "not_found") return 404;
  if (code == "artifact_missing" || code == "not_finished" || code == "no_result") return 409;
  if (code == "too_large") return 413;
  if (code == "quota" || code == "rate_limited") return 429;
  if (code == "unavailable") return 503;
  return 500;
}

void send_json(httplib::Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(body.dump(), kJson);
}

void send_error(httplib::Response& res, const std::string& code, const std::string& message,
                double retry_after_seconds = 0) {
  if (retry_after_seconds > 0)
    res.set_header("Retry-After",
                   std::to_string(static_cast<long>(std::ceil(retry_after_seconds))));
  send_json(res, http_status_for(code),
            Json{{"error", Json{{"code", code}, {"message", message}}}});
}

std::optional<std::int64_t> parse_id(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;
  return std::stoll(text);
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.rfind("127.", 0) == 0;
}

HttpApi::HttpApi(JobService& service, const TaskRegistry& registry, const Clock& clock,
                 HttpOptions options)
    : service_(service),
      registry_(registry),
      options_(std::move(options)),
      limiter_(clock),
      server_(std::make_unique<httplib::Server>()) {
  const int threads = options_.threads;
  server_->new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server_->set_keep_alive_max_count(100000);
  server_->set_keep_alive_timeout(2);
  server_->set_tcp_nodelay(true);
  server_->set_read_timeout(30);
  // httplib refuses bodies over this itself (413); the handlers check the exact limits.
  server_->set_payload_max_length(std::max(options_.max_request_bytes, options_.max_upload_bytes) +
                                  1);
  install_routes();
}

HttpApi::~HttpApi() {
  stop();
}

Result<int> HttpApi::bind() {
  if (options_.port == 0) {
    const int port = server_->bind_to_any_port(options_.host);
    if (port <= 0) return make_error("io", "cannot listen on {}", options_.host);
    return port;
  }
  if (!server_->bind_to_port(options_.host, options_.port))
    return make_error("io", "cannot listen on {}:{} (in use, or not an address of this host)",
                      options_.host, options_.port);
  return options_.port;
}

void HttpApi::serve() {
  server_->listen_after_bind();
}

void HttpApi::stop() {
  if (server_) server_->stop();
}

void HttpApi::install_routes() {
  using httplib::Request;
  using httplib::Response;
  using Handler = std::function<void(const Request&, Response&, const Client&)>;

  // Authentication and the rate limit come first in every route.
  auto guarded = [this](Handler handler) {
    return [this, handler](const Request& req, Response& res) {
      Client client{"anonymous", options_.anonymous_limits};
      if (options_.tokens) {
        const std::string token = bearer_token(req.get_header_value("Authorization"));
        std::optional<Client> found = token.empty() ? std::nullopt : options_.tokens->find(token);
        if (!found) {
          service_.metrics().rejected("unauthorized");
          res.set_header("WWW-Authenticate", "Bearer");
          send_error(res, "unauthorized",
                     token.empty() ? "missing bearer token (Authorization: Bearer TOKEN)"
                                   : "unknown bearer token");
          return;
        }
        client = *found;
      }
      const RateDecision rate = limiter_.admit(client.name, client.limits);
      if (!rate.allowed) {
        service_.metrics().rejected("rate_limited");
        send_error(res, "rate_limited",
                   fmt::format("{} requests per second for {}; retry later",
                               client.limits.rate_per_second, client.name),
                   rate.retry_after_seconds);
        return;
      }
      handler(req, res, client);
    };
  };
  auto reply = [](Response& res, const auto& result, int ok_status = 200) {
    if (result.ok())
      send_json(res, ok_status, result->to_json());
    else
      send_error(res, result.error().code, result.error().message);
  };

  server_->Get("/v1/health", guarded([this](const Request&, Response& res, const Client&) {
                 Json health = service_.health();
                 health["api"] = "v1";
                 send_json(res, 200, health);
               }));
  server_->Get("/v1/metrics", guarded([this](const Request&, Response& res, const Client&) {
                 res.set_content(service_.metrics_text(), "text/plain; version=0.0.4");
               }));
  server_->Get("/v1/tasks", guarded([this](const Request&, Response& res, const Client&) {
                 Json tasks = Json::array();
                 for (const Task* task : registry_.list()) tasks.push_back(task->to_json());
                 send_json(res, 200, Json{{"tasks", tasks}, {"suites", registry_.suites()}});
               }));
  server_->Get(R"(/v1/tasks/([A-Za-z0-9._+-]+))",
               guarded([this](const Request& req, Response& res, const Client&) {
                 auto task = registry_.get(req.matches[1]);
                 if (!task.ok()) return send_error(res, "not_found", task.error().message);
                 send_json(res, 200,
                           Json{{"task", (*task)->to_json()},
                                {"definition", definition_to_json((*task)->definition)},
                                {"workload", workload_to_json((*task)->workload)}});
               }));

  server_->Get(R"(/v1/artifacts/([^/]+))",
               guarded([this](const Request& req, Response& res, const Client&) {
                 const std::string sha = req.matches[1];
                 if (!is_sha256_hex(sha))
                   return send_error(res, "invalid", "artifact names are SHA-256 hex digests");
                 if (!service_.artifacts().has(sha))
                   return send_error(res, "not_found", "no artifact " + sha);
                 send_json(res, 200, Json{{"sha256", sha}});
               }));
  server_->Put(R"(/v1/artifacts/([^/]+))",
               guarded([this](const Request& req, Response& res, const Client&) {
                 if (req.body.size() > options_.max_upload_bytes) {
                   service_.metrics().rejected("too_large");
                   return send_error(res, "too_large",
                                     fmt::format("upload of {} bytes; the limit is {}",
                                                 req.body.size(), options_.max_upload_bytes));
                 }
                 const std::string sha = req.matches[1];
                 auto stored = service_.artifacts().put(sha, req.body);
                 if (!stored.ok())
                   return send_error(res, stored.error().code, stored.error().message);
                 send_json(res, 201, Json{{"sha256", sha}, {"bytes", req.body.size()}});
               }));

  server_->Post("/v1/jobs",
                guarded([this](const Request& req, Response& res, const Client& client) {
                  if (req.body.size() > options_.max_request_bytes) {
                    service_.metrics().rejected("too_large");
                    return send_error(res, "too_large",
                                      fmt::format("request of {} bytes; the limit is {}",
                                                  req.body.size(), options_.max_request_bytes));
                  }
                  auto json = parse_json(req.body, "request body");
                  if (!json.ok()) return send_error(res, "invalid", json.error().message);
                  auto submit = SubmitRequest::from_json(*json);
                  if (!submit.ok())
                    return send_error(res, submit.error().code, submit.error().message);
                  const std::string header_key = req.get_header_value("Idempotency-Key");
                  if (!header_key.empty()) {
                    if (!submit->idempotency_key.empty() && submit->idempotency_key != header_key)
                      return send_error(res, "invalid",
                                        "Idempotency-Key header and idempotency_key field differ");
                    submit->idempotency_key = header_key;
                  }
                  auto outcome = service_.submit(client, *submit);
                  if (!outcome.ok()) {
                    if (outcome.error().code == "quota") {
                      service_.metrics().rejected("quota");
                      return send_error(res, "quota", outcome.error().message, 5);
                    }
                    return send_error(res, outcome.error().code, outcome.error().message);
                  }
                  Json body = outcome->job.to_json();
                  body["created"] = outcome->created;
                  send_json(res, outcome->created ? 202 : 200, body);
                }));
  server_->Get("/v1/jobs", guarded([this](const Request& req, Response& res, const Client& client) {
                 if (req.has_param("idempotency_key")) {
                   auto found =
                       service_.find_by_key(client.name, req.get_param_value("idempotency_key"));
                   if (!found.ok())
                     return send_error(res, found.error().code, found.error().message);
                   Json out = Json::array();
                   if (*found) out.push_back((*found)->to_json());
                   return send_json(res, 200, Json{{"jobs", out}});
                 }
                 JobFilter filter;
                 filter.owner = client.name;
                 if (req.has_param("state")) {
                   filter.state = parse_job_state(req.get_param_value("state"));
                   if (!filter.state)
                     return send_error(res, "invalid",
                                       "state must be queued, running, done, failed or cancelled");
                 }
                 if (req.has_param("after")) {
                   auto after = parse_id(req.get_param_value("after"));
                   if (!after) return send_error(res, "invalid", "after: expected a job id");
                   filter.after_id = *after;
                 }
                 if (req.has_param("limit")) {
                   auto limit = parse_id(req.get_param_value("limit"));
                   if (!limit || *limit < 1 || *limit > 1000)
                     return send_error(res, "invalid", "limit: expected 1 to 1000");
                   filter.limit = static_cast<int>(*limit);
                 }
                 auto jobs = service_.list(filter);
                 if (!jobs.ok()) return send_error(res, jobs.error().code, jobs.error().message);
                 Json out = Json::array();
                 for (const Job& job : *jobs) out.push_back(job.to_json());
                 send_json(res, 200, Json{{"jobs", out}});
               }));
  server_->Get(R"(/v1/jobs/([^/]+))",
               guarded([this, reply](const Request& req, Response& res, const Client& client) {
                 auto id = parse_id(req.matches[1]);
                 if (!id)
                   return send_error(res, "not_found", "no job " + std::string(req.matches[1]));
                 double wait = 0;
                 if (req.has_param("wait")) {
                   try {
                     wait = std::stod(req.get_param_value("wait"));
                   } catch (const std::exception&) {
                     return send_error(res, "invalid", "wait: expected seconds");
                   }
                 }
                 reply(res, service_.wait(client.name, *id, wait));
               }));
  server_->Get(R"(/v1/jobs/([^/]+)/result)",
               guarded([this](const Request& req, Response& res, const Client& client) {
                 auto id = parse_id(req.matches[1]);
                 if (!id) return send_error(res, "not_found", "no job");
                 auto result = service_.result(client.name, *id);
                 if (!result.ok())
                   return send_error(res, result.error().code, result.error().message);
                 res.status = 200;
                 res.set_content(*result, kJson);
               }));
  server_->Post(R"(/v1/jobs/([^/]+)/cancel)",
                guarded([this, reply](const Request& req, Response& res, const Client& client) {
                  auto id = parse_id(req.matches[1]);
                  if (!id) return send_error(res, "not_found", "no job");
                  reply(res, service_.cancel(client.name, *id));
                }));

  // Errors httplib answers itself (no route, a body over its limit) get the same JSON shape.
  server_->set_error_handler([this](const Request&, Response& res) {
    if (res.body.empty()) {
      const std::string code = res.status == 413   ? "too_large"
                               : res.status == 404 ? "not_found"
                               : res.status == 405 ? "not_allowed"
                                                   : "http_" + std::to_string(res.status);
      if (res.status == 413) service_.metrics().rejected("too_large");
      res.set_content(
          Json{{"error", Json{{"code", code}, {"message", fmt::format("HTTP {}", res.status)}}}}
              .dump(),
          kJson);
    }
  });
  server_->set_exception_handler([](const Request&, Response& res, std::exception_ptr error) {
    std::string message = "internal error";
    try {
      if (error) std::rethrow_exception(error);
    } catch (const std::exception& e) {
      message = e.what();
    } catch (...) {
    }
    send_error(res, "internal", message);
  });
  server_->set_logger([this](const Request&, const Response& res) {
    service_.metrics().http_answered(res.status);
  });
}

}  // namespace ptxb::service
