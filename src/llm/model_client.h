// What the agent asks of a model, whatever serves it: a conversation in, one reply out.
//
// The reply carries the visible answer, the reasoning the API exposes (OpenAI-compatible
// `reasoning_content`/`reasoning`, Anthropic thinking blocks) and token usage with reasoning
// tokens. Failures are Errors whose `code` tells the agent what to do:
//   "context_window"  the conversation no longer fits the model: the trajectory ends there;
//   anything else     ("rate_limited", "server", "network", "timeout", "bad_response", "auth",
//                     "client", "config"): the call failed after the client's own retries; the
//                     turn was cut off and a resumed run redoes it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

inline constexpr const char* kContextWindowError = "context_window";

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
};

struct ModelUsage {
  std::int64_t prompt = 0;      // input tokens, cached ones included
  std::int64_t completion = 0;  // output tokens, reasoning included
  std::int64_t reasoning = 0;   // the reasoning part of `completion`
  // How `reasoning` was obtained: "reported" by the API, "estimated" from the reasoning text
  // (bytes / 3.5, packs/token_estimate.h) when the API gives no count, or "none".
  std::string reasoning_source = "none";

  Json to_json() const;
};

struct ModelReply {
  std::string content;    // the visible answer
  std::string reasoning;  // exposed reasoning, "" if none
  ModelUsage usage;
  std::string finish_reason;  // as the API says it: "stop", "length", "end_turn", "max_tokens"
  std::string response_id;
  std::string served_model;          // the model id the server reports
  int attempts = 1;                  // HTTP requests made for this reply, retries included
  std::vector<std::string> retries;  // one line per failed attempt (secrets redacted)
  double wall_s = 0;                 // first request to last byte, waits included

  Json to_json() const;  // content and reasoning excluded (the trajectory holds them)
};

class ModelClient {
 public:
  virtual ~ModelClient() = default;
  // Thread-safe: the runner calls one client from several trajectories at once.
  virtual Result<ModelReply> complete(const std::vector<ChatMessage>& messages) = 0;
};

}  // namespace ptxb
