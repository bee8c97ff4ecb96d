#include "service/service_client.h"

#include <chrono>
#include <thread>

#include "core/fs.h"
#include "core/sha256.h"

namespace ptxb::service {
namespace {

// Back-pressure answers (429, 503) are retried this many times, waiting Retry-After (capped).
constexpr int kBusyRetries = 20;
constexpr double kMaxRetryAfterSeconds = 30;

Error error_from(const HttpResponse& response, const std::string& what) {
  auto body = parse_json(response.body, what);
  if (body.ok() && body->is_object() && body->contains("error") && (*body)["error"].is_object()) {
    const Json& e = (*body)["error"];
    return Error{fmt::format("{}: HTTP {}: {}", what, response.status, e.value("message", "")),
                 e.value("code", "http")};
  }
  return make_error("http", "{}: HTTP {}", what, response.status);
}

}  // namespace

std::string request_key(const EvalRequest& request) {
  return sha256_hex(request.to_json().dump());
}

ServiceClient::ServiceClient(HttpTransport& transport, std::string base_url, std::string token)
    : transport_(transport), base_url_(std::move(base_url)), token_(std::move(token)) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

Result<HttpResponse> ServiceClient::send(const std::string& method, const std::string& path,
                                         const std::string& body, double timeout_seconds,
                                         const std::string& content_type) {
  HttpRequest request;
  request.method = method;
  request.url = base_url_ + path;
  request.body = body;
  request.timeout_seconds = timeout_seconds;
  request.connect_timeout_seconds = 10;
  request.headers.emplace_back("Content-Type", content_type);
  if (!token_.empty()) request.headers.emplace_back("Authorization", "Bearer " + token_);
  for (int attempt = 0;; ++attempt) {
    PTXB_ASSIGN_OR_RETURN(HttpResponse response, transport_.post(request));
    if ((response.status != 429 && response.status != 503) || attempt >= kBusyRetries)
      return response;
    double wait = 1;
    try {
      wait = std::stod(response.header("Retry-After"));
    } catch (const std::exception&) {
    }
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::clamp(wait, 0.05, kMaxRetryAfterSeconds)));
  }
}

Result<Json> ServiceClient::get(const std::string& path, double timeout_seconds) {
  PTXB_ASSIGN_OR_RETURN(HttpResponse response, send("GET", path, "", timeout_seconds));
  if (response.status != 200) return error_from(response, base_url_ + path);
  return parse_json(response.body, base_url_ + path);
}

Result<Json> ServiceClient::submit(const EvalRequest& request, const std::string& idempotency_key) {
  // What the job names by hash: the source, and with the compile split the binary and its PTX.
  std::vector<std::pair<std::string, std::string>> artifacts;  // sha256, bytes
  const std::string sha = sha256_hex(request.source);
  artifacts.emplace_back(sha, request.source);
  Json body{{"operation", std::string(eval_operation_name(request.operation))},
            {"task", request.task},
            {"arch", request.arch},
            {"artifact", Json{{"sha256", sha}, {"name", request.source_name}}},
            {"options", request.options.to_json()}};
  if (request.prebuilt) {
    const PrebuiltFiles& files = *request.prebuilt;
    constexpr std::size_t kMaxBinaryBytes = std::size_t{256} << 20;
    PTXB_ASSIGN_OR_RETURN(std::string shared_object,
                          read_file(files.shared_object_path, kMaxBinaryBytes));
    PTXB_ASSIGN_OR_RETURN(std::string ptx, read_file(files.ptx_path, kMaxBinaryBytes));
    body["prebuilt"] = Json{{"shared_object", sha256_hex(shared_object)},
                            {"ptx", sha256_hex(ptx)},
                            {"nvcc_version", files.nvcc_version}};
    artifacts.emplace_back(body["prebuilt"]["shared_object"], std::move(shared_object));
    artifacts.emplace_back(body["prebuilt"]["ptx"], std::move(ptx));
  }
  if (!idempotency_key.empty()) body["idempotency_key"] = idempotency_key;
  return submit_body(body, artifacts);
}

Result<Json> ServiceClient::post(const std::string& path, double timeout_seconds) {
  PTXB_ASSIGN_OR_RETURN(HttpResponse response, send("POST", path, "", timeout_seconds));
  if (response.status != 200) return error_from(response, base_url_ + path);
  return parse_json(response.body, base_url_ + path);
}

Result<Json> ServiceClient::submit_body(
    const Json& body, const std::vector<std::pair<std::string, std::string>>& artifacts) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    PTXB_ASSIGN_OR_RETURN(HttpResponse response, send("POST", "/v1/jobs", body.dump(), 60));
    if (response.status == 200 || response.status == 202)
      return parse_json(response.body, base_url_ + "/v1/jobs");
    Error error = error_from(response, base_url_ + "/v1/jobs");
    if (error.code != "artifact_missing" || attempt > 0) return error;
    for (const auto& [artifact_sha, bytes] : artifacts) {
      PTXB_ASSIGN_OR_RETURN(HttpResponse held,
                            send("GET", "/v1/artifacts/" + artifact_sha, "", 30));
      if (held.status == 200) continue;
      PTXB_ASSIGN_OR_RETURN(HttpResponse uploaded, send("PUT", "/v1/artifacts/" + artifact_sha,
                                                        bytes, 60, "application/octet-stream"));
      if (uploaded.status != 201) return error_from(uploaded, base_url_ + "/v1/artifacts");
    }
  }
  return make_error("http", "{}: the upload was not accepted", base_url_);
}

Result<Json> ServiceClient::wait(const std::string& job_id, double timeout_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_seconds));
  while (true) {
    const double left =
        std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count();
    const double poll = std::clamp(left, 0.0, 30.0);
    PTXB_ASSIGN_OR_RETURN(Json job,
                          get(fmt::format("/v1/jobs/{}?wait={:.3f}", job_id, poll), poll + 30));
    const std::string state = job.value("state", "");
    if (state == "done" || state == "failed" || state == "cancelled") return job;
    if (left <= 0)
      return make_error("job_timeout", "{}: job {} still {} after {} s", base_url_, job_id, state,
                        timeout_seconds);
  }
}

Result<EvalResult> ServiceClient::result(const std::string& job_id) {
  PTXB_ASSIGN_OR_RETURN(Json json, get("/v1/jobs/" + job_id + "/result", 60));
  return EvalResult::from_json(json);
}

Result<std::optional<Json>> ServiceClient::find(const std::string& key) {
  std::string escaped;
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~')
      escaped += static_cast<char>(c);
    else
      escaped += fmt::format("%{:02X}", c);
  }
  PTXB_ASSIGN_OR_RETURN(Json page, get("/v1/jobs?idempotency_key=" + escaped));
  if (!page.contains("jobs") || !page["jobs"].is_array())
    return make_error("http", "{}/v1/jobs: answer without a jobs list", base_url_);
  if (page["jobs"].empty()) return std::optional<Json>();
  return std::optional<Json>(page["jobs"][0]);
}

Result<EvalResult> ServiceClient::evaluate(const EvalRequest& request,
                                           const std::string& idempotency_key,
                                           double timeout_seconds) {
  PTXB_ASSIGN_OR_RETURN(Json job, submit(request, idempotency_key));
  const std::string id = job.value("id", "");
  PTXB_ASSIGN_OR_RETURN(Json finished, wait(id, timeout_seconds));
  if (finished.value("state", "") != "done")
    return make_error(
        "job_" + finished.value("state", std::string("failed")), "{}: job {} {}: {}", base_url_, id,
        finished.value("state", ""),
        finished["reason"].is_string() ? finished["reason"].get<std::string>() : std::string("-"));
  return result(id);
}

}  // namespace ptxb::service
