// Classifies a failed model call into the codes of llm/model_client.h, from the HTTP status and
// the error object the API sent. The context-window case is recognised from the providers'
// structured code where one exists (OpenAI "context_length_exceeded") and otherwise from the
// wording that OpenAI, vLLM, SGLang, Anthropic, Gemini and OpenRouter use for it.
#pragma once

#include <string>

#include "core/result.h"

namespace ptxb {

// "auth" (401, 403), "rate_limited" (429), "timeout" (408), "server" (5xx, 529),
// "context_window" (a 400/413/422, or a 200 error object, that says the prompt is too long),
// "client" (any other 4xx). The message names the status and the API's own message.
Error api_error_from_body(long status, const std::string& body);

// Whether another attempt may succeed: rate_limited, server, timeout, network, bad_response.
bool is_retryable_model_error(const Error& error);

bool mentions_context_window(const std::string& text);

}  // namespace ptxb
