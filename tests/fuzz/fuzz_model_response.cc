// Model-API responses as the clients read them: a 2xx body through the OpenAI-compatible and
// the Anthropic wire formats (content parts, reasoning fields, <think> blocks, usage counts),
// an error body with any status through the error classifier, and a Retry-After header.
#include <ctime>

#include "fuzz_input.h"
#include "llm/api_error.h"
#include "llm/http_model_client.h"
#include "llm/wire_format.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [selector, text] = ptxb::fuzz::split_selector(data, size);
  const std::string body(text);
  static const auto openai = ptxb::make_wire_format("openai");
  static const auto anthropic = ptxb::make_wire_format("anthropic");
  switch (selector % 4) {
    case 0:
      (void)openai->parse(body);
      break;
    case 1:
      (void)anthropic->parse(body);
      break;
    case 2: {
      const long status = 400 + static_cast<long>(selector % 200);
      const ptxb::Error error = ptxb::api_error_from_body(status, body);
      (void)ptxb::is_retryable_model_error(error);
      (void)ptxb::redact_key(error.message, "sk-fuzz-0123456789abcdef");
      break;
    }
    default:
      (void)ptxb::parse_retry_after(body, std::time_t{1700000000});
      break;
  }
  return 0;
}
