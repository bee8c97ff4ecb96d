#include "llm/http_model_client.h"

#include <cctype>
#include <chrono>
#include <cmath>
#include <string_view>
#include <thread>

#include "core/interrupt.h"
#include "core/strings.h"
#include "llm/api_error.h"

namespace ptxb {

HttpModelClient::HttpModelClient(ModelConfig config, std::string api_key, HttpTransport& transport,
                                 Sleeper sleeper)
    : config_(std::move(config)),
      api_key_(std::move(api_key)),
      transport_(transport),
      sleeper_(std::move(sleeper)),
      format_(make_wire_format(config_.api)),
      random_(std::random_device{}()) {
  if (!sleeper_)
    sleeper_ = [](double seconds) {
      // In slices, so that Ctrl-C ends a backoff of minutes at once (core/interrupt.h).
      const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
      while (!interrupted() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    };
}

namespace {

bool is_key_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

}  // namespace

std::string redact_key(std::string text, const std::string& key) {
  if (key.size() < kMinRedactedKeyLength) return text;
  static constexpr std::string_view kMark = "[REDACTED]";
  std::size_t from = 0;
  while ((from = text.find(key, from)) != std::string::npos) {
    const std::size_t end = from + key.size();
    const bool starts_token = from == 0 || !is_key_character(text[from - 1]);
    const bool ends_token = end == text.size() || !is_key_character(text[end]);
    if (starts_token && ends_token) {
      text.replace(from, key.size(), kMark);
      from += kMark.size();
    } else {
      ++from;
    }
  }
  return text;
}

std::string HttpModelClient::redact(std::string text) const {
  return redact_key(std::move(text), api_key_);
}

double HttpModelClient::jitter() {
  std::lock_guard<std::mutex> lock(random_mutex_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(random_);
}

Result<ModelReply> HttpModelClient::complete(const std::vector<ChatMessage>& messages) {
  const auto start = std::chrono::steady_clock::now();
  HttpRequest request;
  request.url = format_->url(config_);
  request.headers = format_->headers(api_key_);
  request.body = format_->body(config_, messages).dump();
  request.timeout_seconds = config_.timeout_seconds;
  request.connect_timeout_seconds = config_.connect_timeout_seconds;

  std::vector<std::string> retries;
  const RetryPolicy& policy = config_.retry;
  for (int attempt = 1;; ++attempt) {
    std::optional<double> retry_after;
    Error failure;
    auto response = transport_.post(request);
    if (!response.ok()) {
      failure = response.error();
    } else if (response->status >= 200 && response->status < 300) {
      auto reply = format_->parse(response->body);
      if (reply.ok()) {
        reply->attempts = attempt;
        reply->retries = retries;
        reply->wall_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return reply;
      }
      failure = reply.error();
    } else {
      failure = api_error_from_body(response->status, response->body);
      retry_after = parse_retry_after(response->header("retry-after"), std::time(nullptr));
    }
    failure.message = redact(failure.message);
    auto give_up = [&](const std::string& why) {
      return Error{fmt::format("model {}: {}{}", config_.name, failure.message, why), failure.code};
    };
    if (interrupted()) {
      failure.code = "interrupted";
      return give_up(" (ptxbench was interrupted)");
    }
    if (!is_retryable_model_error(failure)) return give_up("");
    if (attempt >= policy.max_attempts)
      return give_up(fmt::format(" (gave up after {} attempts)", attempt));
    if (retry_after && *retry_after > policy.max_retry_after_seconds)
      return give_up(fmt::format(" (Retry-After {:g} s is above the {:g} s cap)", *retry_after,
                                 policy.max_retry_after_seconds));
    const double wait = retry_after ? *retry_after : backoff_seconds(policy, attempt, jitter());
    std::string line = fmt::format("attempt {}: {} [{}]; retrying in {:.1f} s{}", attempt,
                                   cap_text(failure.message, 400), failure.code, wait,
                                   retry_after ? " (Retry-After)" : "");
    retries.push_back(line);
    if (notice_) notice_(fmt::format("model {}: {}", config_.name, line));
    sleeper_(wait);
  }
}

double backoff_seconds(const RetryPolicy& policy, int failures, double unit) {
  const double exponent = std::min(failures - 1, 30);
  const double ceiling =
      std::min(policy.backoff_max_seconds, policy.backoff_base_seconds * std::pow(2.0, exponent));
  return ceiling / 2 + unit * ceiling / 2;
}

std::optional<double> parse_retry_after(const std::string& value, std::time_t now) {
  const std::string text = trim(value);
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double seconds = std::stod(text, &used);
    if (used == text.size() && std::isfinite(seconds)) return std::max(0.0, seconds);
  } catch (const std::exception&) {
  }
  std::tm when{};  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  const char* end = strptime(text.c_str(), "%a, %d %b %Y %H:%M:%S GMT", &when);
  if (!end || *end != '\0') return std::nullopt;
  return std::max(0.0, std::difftime(timegm(&when), now));
}

}  // namespace ptxb
