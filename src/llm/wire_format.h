// The two wire formats a model is spoken to in: OpenAI-compatible Chat Completions (also
// Gemini's OpenAI-compatible endpoint) and the Anthropic Messages API. Pure functions of a config
// and a conversation to a request, and of a response body to a reply, so both are tested on
// canned JSON; the HTTP exchange, retries and error classification are HttpModelClient's.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "llm/model_client.h"
#include "llm/model_config.h"

namespace ptxb {

class WireFormat {
 public:
  virtual ~WireFormat() = default;
  virtual std::string url(const ModelConfig& config) const = 0;
  // Authentication headers for `api_key` (empty: none), plus any the API requires.
  virtual std::vector<std::pair<std::string, std::string>> headers(
      const std::string& api_key) const = 0;
  virtual Json body(const ModelConfig& config, const std::vector<ChatMessage>& messages) const = 0;
  // A 2xx body to a reply. Errors: "bad_response" (not JSON, no answer in it), or the error the
  // body itself reports (some gateways answer 200 with an error object).
  virtual Result<ModelReply> parse(const std::string& body) const = 0;
};

// openai and gemini: OpenAiChatFormat; anthropic: AnthropicMessagesFormat.
std::unique_ptr<WireFormat> make_wire_format(const std::string& api);

// extra_body merged into `body` at the top level: a key set to null removes the field (e.g.
// {"max_tokens": null} with {"max_completion_tokens": 8000} for OpenAI reasoning models).
void merge_extra_body(Json& body, const Json& extra);

// Splits a "<think>...</think>" preamble off an answer (reasoning models served without a
// reasoning parser put their thoughts in the content); returns {answer, thoughts}.
std::pair<std::string, std::string> split_think_block(const std::string& content);

// Fills reasoning tokens from the reasoning text when the API reports no count.
void estimate_reasoning_tokens(ModelReply& reply);

}  // namespace ptxb
