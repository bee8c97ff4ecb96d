#include "llm/wire_format.h"

#include <tuple>

#include "core/strings.h"
#include "llm/api_error.h"
#include "packs/token_estimate.h"

namespace ptxb {
namespace {

Result<Json> parse_body(const std::string& body) {
  try {
    return Json::parse(body);
  } catch (const std::exception& e) {
    return make_error("bad_response", "the answer is not JSON ({}): {}", e.what(),
                      cap_text(body, 300));
  }
}

// Servers send null for fields they do not fill; Json::value() would throw on those.
std::string string_field(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
  return object[key].get<std::string>();
}

std::int64_t int_field(const Json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object[key].is_number_integer()) return 0;
  return object[key].get<std::int64_t>();
}

// Text of an OpenAI message content: a string, null, or an array of parts.
std::string content_text(const Json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array())
    for (const auto& part : content)
      if (part.is_object() && string_field(part, "type") == "text")
        text += string_field(part, "text");
  return text;
}

class OpenAiChatFormat final : public WireFormat {
 public:
  std::string url(const ModelConfig& config) const override {
    std::string base = config.base_url;
    while (ends_with(base, "/")) base.pop_back();
    return base + "/chat/completions";
  }

  std::vector<std::pair<std::string, std::string>> headers(const std::string& key) const override {
    std::vector<std::pair<std::string, std::string>> out = {{"Content-Type", "application/json"}};
    if (!key.empty()) out.emplace_back("Authorization", "Bearer " + key);
    return out;
  }

  Json body(const ModelConfig& config, const std::vector<ChatMessage>& messages) const override {
    Json body = Json::object();
    body["model"] = config.model;
    Json list = Json::array();
    for (const auto& m : messages) list.push_back(Json{{"role", m.role}, {"content", m.content}});
    body["messages"] = list;
    if (config.temperature) body["temperature"] = *config.temperature;
    if (config.top_p) body["top_p"] = *config.top_p;
    if (config.max_tokens) body["max_tokens"] = *config.max_tokens;
    merge_extra_body(body, config.extra_body);
    return body;
  }

  Result<ModelReply> parse(const std::string& text) const override {
    PTXB_ASSIGN_OR_RETURN(Json json, parse_body(text));
    if (!json.is_object()) return make_error("bad_response", "the answer is not a JSON object");
    if (json.contains("error") && !json["error"].is_null()) return api_error_from_body(200, text);
    if (!json.contains("choices") || !json["choices"].is_array() || json["choices"].empty())
      return make_error("bad_response", "the answer has no choices: {}", cap_text(text, 300));
    const Json& choice = json["choices"][0];
    if (!choice.is_object() || !choice.contains("message") || !choice["message"].is_object())
      return make_error("bad_response", "choices[0] has no message: {}", cap_text(text, 300));
    const Json& message = choice["message"];
    ModelReply reply;
    reply.content = content_text(message.contains("content") ? message["content"] : Json(nullptr));
    // vLLM, SGLang and DeepSeek say reasoning_content; OpenRouter (and newer vLLM) reasoning.
    for (const char* key : {"reasoning_content", "reasoning"})
      if (message.contains(key) && message[key].is_string() && reply.reasoning.empty())
        reply.reasoning = message[key].get<std::string>();
    if (reply.reasoning.empty())
      std::tie(reply.content, reply.reasoning) = split_think_block(reply.content);
    if (choice.contains("finish_reason") && choice["finish_reason"].is_string())
      reply.finish_reason = choice["finish_reason"].get<std::string>();
    reply.response_id = string_field(json, "id");
    reply.served_model = string_field(json, "model");
    const Json usage = json.contains("usage") ? json["usage"] : Json::object();
    reply.usage.prompt = int_field(usage, "prompt_tokens");
    reply.usage.completion = int_field(usage, "completion_tokens");
    const Json details = usage.is_object() && usage.contains("completion_tokens_details")
                             ? usage["completion_tokens_details"]
                             : Json::object();
    const std::int64_t total = int_field(usage, "total_tokens");
    if (details.is_object() && details.contains("reasoning_tokens") &&
        details["reasoning_tokens"].is_number_integer()) {
      reply.usage.reasoning = details["reasoning_tokens"].get<std::int64_t>();
      reply.usage.reasoning_source = "reported";
    } else if (total > reply.usage.prompt + reply.usage.completion && reply.usage.prompt > 0) {
      // Gemini's OpenAI endpoint counts thoughts in total_tokens only.
      reply.usage.reasoning = total - reply.usage.prompt - reply.usage.completion;
      reply.usage.completion += reply.usage.reasoning;
      reply.usage.reasoning_source = "reported_total";
    }
    estimate_reasoning_tokens(reply);
    return reply;
  }
};

class AnthropicMessagesFormat final : public WireFormat {
 public:
  std::string url(const ModelConfig& config) const override {
    std::string base = config.base_url;
    while (ends_with(base, "/")) base.pop_back();
    return base + (ends_with(base, "/v1") ? "/messages" : "/v1/messages");
  }

  std::vector<std::pair<std::string, std::string>> headers(const std::string& key) const override {
    std::vector<std::pair<std::string, std::string>> out = {{"Content-Type", "application/json"},
                                                            {"anthropic-version", "2023-06-01"}};
    if (!key.empty()) out.emplace_back("x-api-key", key);
    return out;
  }

  Json body(const ModelConfig& config, const std::vector<ChatMessage>& messages) const override {
    Json body = Json::object();
    body["model"] = config.model;
    body["max_tokens"] = config.max_tokens.value_or(32000);
    std::string system;
    Json list = Json::array();
    for (const auto& m : messages) {
      if (m.role == "system") {
        system += (system.empty() ? "" : "\n\n") + m.content;
        continue;
      }
      list.push_back(Json{{"role", m.role}, {"content", m.content}});
    }
    // Prompt caching (Anthropic "prompt caching": up to 4 cache_control breakpoints; a prefix
    // below the model's minimum, 1024-4096 tokens, is simply not cached). The ~100 KB system
    // prompt is resent every turn, and each turn resends the whole conversation: one breakpoint
    // after the system prompt and one on the newest message make every later turn read the
    // unchanged prefix from the cache (billed at a tenth of the input price) instead of paying
    // for it again. The usage's cache_creation/cache_read tokens count in `prompt` (parse).
    const Json ephemeral = Json{{"type", "ephemeral"}};
    if (!system.empty())
      body["system"] =
          Json::array({Json{{"type", "text"}, {"text", system}, {"cache_control", ephemeral}}});
    if (!list.empty()) {
      Json& last = list.back();
      last["content"] = Json::array({Json{{"type", "text"},
                                          {"text", last["content"].get<std::string>()},
                                          {"cache_control", ephemeral}}});
    }
    body["messages"] = list;
    if (config.temperature) body["temperature"] = *config.temperature;
    if (config.top_p) body["top_p"] = *config.top_p;
    merge_extra_body(body, config.extra_body);
    return body;
  }

  Result<ModelReply> parse(const std::string& text) const override {
    PTXB_ASSIGN_OR_RETURN(Json json, parse_body(text));
    if (!json.is_object()) return make_error("bad_response", "the answer is not a JSON object");
    if (string_field(json, "type") == "error" ||
        (json.contains("error") && !json["error"].is_null()))
      return api_error_from_body(200, text);
    if (!json.contains("content") || !json["content"].is_array())
      return make_error("bad_response", "the answer has no content array: {}", cap_text(text, 300));
    ModelReply reply;
    for (const auto& block : json["content"]) {
      const std::string type = string_field(block, "type");
      if (type == "text") reply.content += string_field(block, "text");
      if (type == "thinking")
        reply.reasoning +=
            (reply.reasoning.empty() ? "" : "\n\n") + string_field(block, "thinking");
      if (type == "redacted_thinking")
        reply.reasoning +=
            (reply.reasoning.empty() ? "" : "\n\n") + std::string("[redacted thinking]");
    }
    if (json.contains("stop_reason") && json["stop_reason"].is_string())
      reply.finish_reason = json["stop_reason"].get<std::string>();
    if (reply.finish_reason == "model_context_window_exceeded")
      return make_error(kContextWindowError,
                        "the model stopped: its context window is full (stop_reason "
                        "model_context_window_exceeded)");
    reply.response_id = string_field(json, "id");
    reply.served_model = string_field(json, "model");
    const Json usage = json.contains("usage") ? json["usage"] : Json::object();
    reply.usage.prompt = int_field(usage, "input_tokens") +
                         int_field(usage, "cache_creation_input_tokens") +
                         int_field(usage, "cache_read_input_tokens");
    // output_tokens includes thinking; the API gives no separate count, so it is estimated.
    reply.usage.completion = int_field(usage, "output_tokens");
    estimate_reasoning_tokens(reply);
    return reply;
  }
};

}  // namespace

std::unique_ptr<WireFormat> make_wire_format(const std::string& api) {
  if (api == "anthropic") return std::make_unique<AnthropicMessagesFormat>();
  return std::make_unique<OpenAiChatFormat>();
}

void merge_extra_body(Json& body, const Json& extra) {
  if (!extra.is_object()) return;
  for (const auto& [key, value] : extra.items()) {
    if (value.is_null())
      body.erase(key);
    else
      body[key] = value;
  }
}

std::pair<std::string, std::string> split_think_block(const std::string& content) {
  const std::size_t close = content.rfind("</think>");
  if (close == std::string::npos) return {content, ""};
  // With or without the opening tag: Qwen3-style templates put "<think>" in the prompt.
  std::size_t open = content.find("<think>");
  const std::string before = trim(content.substr(0, open == std::string::npos ? 0 : open));
  if (open == std::string::npos || open > close || !before.empty()) open = std::string::npos;
  const std::size_t thoughts_start = open == std::string::npos ? 0 : open + 7;
  std::string thoughts = trim(content.substr(thoughts_start, close - thoughts_start));
  std::string answer = content.substr(close + 8);
  while (!answer.empty() && (answer.front() == '\n' || answer.front() == ' ')) answer.erase(0, 1);
  return {answer, thoughts};
}

void estimate_reasoning_tokens(ModelReply& reply) {
  if (reply.usage.reasoning_source != "none" || reply.reasoning.empty()) return;
  reply.usage.reasoning = static_cast<std::int64_t>(approx_tokens(reply.reasoning));
  reply.usage.reasoning_source = "estimated";
}

}  // namespace ptxb
