// A model behind an HTTP API (OpenAI-compatible, Anthropic, Gemini), with the retry policy:
// exponential backoff with jitter on 429 (honouring Retry-After), 5xx, 408, timeouts, network
// errors and malformed answers, up to RetryPolicy::max_attempts; never on 401/403, other 4xx or a
// full context window. The API key lives only in this object and in request headers; every error
// message leaving it has the key replaced by "[REDACTED]" (servers sometimes echo it).
#pragma once

#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>

#include "llm/http_transport.h"
#include "llm/model_client.h"
#include "llm/model_config.h"
#include "llm/wire_format.h"

namespace ptxb {

class HttpModelClient final : public ModelClient {
 public:
  using Sleeper = std::function<void(double seconds)>;
  using RetryNotice = std::function<void(const std::string& line)>;

  // `sleeper` defaults to a real sleep (tests record the waits instead).
  HttpModelClient(ModelConfig config, std::string api_key, HttpTransport& transport,
                  Sleeper sleeper = {});
  Result<ModelReply> complete(const std::vector<ChatMessage>& messages) override;
  // Called (from the calling thread) before each wait, with a redacted one-line reason.
  void set_retry_notice(RetryNotice notice) { notice_ = std::move(notice); }

 private:
  std::string redact(std::string text) const;
  double jitter();

  ModelConfig config_;
  std::string api_key_;
  HttpTransport& transport_;
  Sleeper sleeper_;
  RetryNotice notice_;
  std::unique_ptr<WireFormat> format_;
  std::mutex random_mutex_;
  std::mt19937_64 random_;
};

// Wait before the next attempt after `failures` failed ones (1-based): an equal-jitter
// exponential backoff, d = min(max, base·2^(failures-1)), wait = d/2 + unit·d/2 with unit in
// [0, 1), so retries of many trajectories spread out instead of arriving together.
double backoff_seconds(const RetryPolicy& policy, int failures, double unit);

// A Retry-After value: delta-seconds or an HTTP-date (relative to `now`); nullopt if absent or
// unreadable. Never negative.
std::optional<double> parse_retry_after(const std::string& value, std::time_t now);

// Keys shorter than this are not secrets worth hiding ("k", "x", "EMPTY" for local vLLM/SGLang
// servers) and replacing them would mangle ordinary words; real API keys are 30+ characters.
inline constexpr std::size_t kMinRedactedKeyLength = 12;

// `text` with every whole-token occurrence of `key` replaced by "[REDACTED]": one not inside a
// longer run of key characters (letters, digits, '-', '_'), so "key" never redacts
// "keyboard". Keys shorter than kMinRedactedKeyLength leave `text` as it is.
std::string redact_key(std::string text, const std::string& key);

}  // namespace ptxb
