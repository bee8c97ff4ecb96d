#include "llm/api_error.h"

#include "core/json_io.h"
#include "core/strings.h"
#include "llm/model_client.h"

namespace ptxb {
namespace {

// The API's own words: error.message, a string error, message or detail; else the raw body.
std::string api_message(const std::string& body, std::string& code) {
  try {
    const Json json = Json::parse(body);
    if (json.is_object()) {
      if (json.contains("error")) {
        const Json& error = json["error"];
        if (error.is_string()) return error.get<std::string>();
        if (error.is_object()) {
          if (error.contains("code") && error["code"].is_string())
            code = error["code"].get<std::string>();
          if (error.contains("type") && error["type"].is_string() && code.empty())
            code = error["type"].get<std::string>();
          if (error.contains("message") && error["message"].is_string())
            return error["message"].get<std::string>();
        }
      }
      for (const char* key : {"message", "detail"})
        if (json.contains(key) && json[key].is_string()) return json[key].get<std::string>();
    }
  } catch (const std::exception&) {
  }
  return cap_text(trim(body), 500);
}

}  // namespace

bool mentions_context_window(const std::string& text) {
  const std::string lower = to_lower(text);
  for (const char* phrase :
       {"context_length_exceeded", "maximum context length", "context window", "context length",
        "prompt is too long", "input is too long", "too many input tokens",
        "exceeds the maximum number of tokens", "input token count"})
    if (contains(lower, phrase)) return true;
  return false;
}

Error api_error_from_body(long status, const std::string& body) {
  std::string code;
  const std::string message = api_message(body, code);
  const std::string text = fmt::format("HTTP {}: {}", status, message);
  if ((status == 200 || status == 400 || status == 413 || status == 422) &&
      (code == "context_length_exceeded" || mentions_context_window(message)))
    return Error{text, kContextWindowError};
  if (status == 401 || status == 403) return Error{text, "auth"};
  if (status == 429) return Error{text, "rate_limited"};
  if (status == 408) return Error{text, "timeout"};
  // 200 with an error object: the gateway's upstream failed (OpenRouter does this).
  if (status >= 500 || status == 200) return Error{text, "server"};
  return Error{text, "client"};
}

bool is_retryable_model_error(const Error& error) {
  for (const char* code : {"rate_limited", "server", "timeout", "network", "bad_response"})
    if (error.code == code) return true;
  return false;
}

}  // namespace ptxb
