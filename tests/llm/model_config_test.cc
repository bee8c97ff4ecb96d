// Model settings: parsing with JSON-path errors, --model shortcuts, no key ever in a config; the
// wire formats' pure parts (extra_body merge, <think> split, error classification).
#include <gtest/gtest.h>

#include "llm/api_error.h"
#include "llm/model_config.h"
#include "llm/wire_format.h"

namespace ptxb {
namespace {

TEST(ModelConfig, ParsesEveryFieldAndAppliesApiDefaults) {
  auto config = ModelConfig::from_json(Json::parse(R"({
      "name": "qwen", "api": "openai", "base_url": "http://localhost:8000/v1",
      "model": "Qwen/Qwen3-32B", "temperature": 0.6, "top_p": 0.95, "max_tokens": 32768,
      "extra_body": {"chat_template_kwargs": {"enable_thinking": true}}, "timeout_s": 900,
      "retry": {"max_attempts": 3, "backoff_base_s": 1}})"),
                                       "$.models[0]");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->name, "qwen");
  EXPECT_EQ(config->api_key_env, "");  // own server: no key unless named
  EXPECT_EQ(config->temperature, 0.6);
  EXPECT_EQ(config->max_tokens, 32768);
  EXPECT_EQ(config->retry.max_attempts, 3);
  EXPECT_EQ(config->retry.backoff_base_seconds, 1.0);

  auto anthropic =
      ModelConfig::from_json(Json::parse(R"({"api": "anthropic", "model": "claude-x"})"), "$");
  ASSERT_TRUE(anthropic.ok());
  EXPECT_EQ(anthropic->name, "claude-x");
  EXPECT_EQ(anthropic->base_url, "https://api.anthropic.com");
  EXPECT_EQ(anthropic->api_key_env, "ANTHROPIC_API_KEY");
  EXPECT_EQ(anthropic->max_tokens, 32000);  // the Messages API requires one

  auto gemini =
      ModelConfig::from_json(Json::parse(R"({"api": "gemini", "model": "gemini-3-pro"})"), "$");
  ASSERT_TRUE(gemini.ok());
  EXPECT_NE(gemini->base_url.find("/v1beta/openai"), std::string::npos);
  EXPECT_EQ(gemini->api_key_env, "GEMINI_API_KEY");
}

TEST(ModelConfig, ErrorsNameTheJsonPath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"api": "openai"})", "$.models[2].model: missing"},
      {R"({"api": "cohere", "model": "m"})",
       "$.models[2].api: \"cohere\" is not one of openai, anthropic, gemini, replay"},
      {R"({"api": "openai", "model": "m", "temprature": 1})",
       "$.models[2].temprature: unknown field"},
      {R"({"api": "openai", "model": "m", "temperature": 3})",
       "$.models[2].temperature: 3 is out of range"},
      {R"({"api": "openai", "model": "m", "max_tokens": 1.5})",
       "$.models[2].max_tokens: expected an integer"},
      {R"({"api": "openai", "model": "m", "extra_body": []})",
       "$.models[2].extra_body: expected an object"},
      {R"({"api": "openai", "model": "m", "base_url": "localhost:8000"})", "$.models[2].base_url"},
      {R"({"api": "openai", "model": "m", "retry": {"tries": 3}})",
       "$.models[2].retry.tries: unknown field"},
  };
  for (const auto& [text, expected] : cases) {
    auto config = ModelConfig::from_json(Json::parse(text), "$.models[2]");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_NE(config.error().message.find(expected), std::string::npos) << config.error().message;
  }
}

TEST(ModelConfig, AKeyInTheConfigIsRefused) {
  auto config = ModelConfig::from_json(
      Json::parse(R"({"api": "openai", "model": "m", "api_key": "sk-x"})"), "$.models[0]");
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.error().message.find("$.models[0].api_key: API keys are never written"),
            std::string::npos)
      << config.error().message;
}

TEST(ModelConfig, ShortcutsNameProviderModelAndUrl) {
  auto replay = ModelConfig::from_shortcut("replay");
  ASSERT_TRUE(replay.ok());
  EXPECT_TRUE(replay->is_replay());
  EXPECT_EQ(replay->to_json(),
            Json::parse(R"({"name": "replay", "api": "replay", "replay_dir": ""})"));

  auto openrouter = ModelConfig::from_shortcut("openrouter:anthropic/claude-opus");
  ASSERT_TRUE(openrouter.ok());
  EXPECT_EQ(openrouter->api, "openai");
  EXPECT_EQ(openrouter->model, "anthropic/claude-opus");
  EXPECT_EQ(openrouter->base_url, "https://openrouter.ai/api/v1");
  EXPECT_EQ(openrouter->api_key_env, "OPENROUTER_API_KEY");

  auto vllm = ModelConfig::from_shortcut("vllm:Qwen/Qwen3-32B@http://10.0.0.1:8000/v1");
  ASSERT_TRUE(vllm.ok());
  EXPECT_EQ(vllm->model, "Qwen/Qwen3-32B");
  EXPECT_EQ(vllm->base_url, "http://10.0.0.1:8000/v1");
  EXPECT_EQ(vllm->api_key_env, kEndpointKeyEnv);  // optional, never a provider's key

  EXPECT_FALSE(ModelConfig::from_shortcut("vllm:Qwen").ok());  // needs @URL
}

// Issue 21, defect 4: OPENAI_API_KEY went to any URL given with openai:M@URL.
TEST(ModelConfig, ProviderKeyGoesOnlyToTheProvidersEndpoint) {
  auto custom = ModelConfig::from_shortcut("openai:gpt-5@http://evil.example:8000/v1");
  ASSERT_TRUE(custom.ok());
  EXPECT_EQ(custom->base_url, "http://evil.example:8000/v1");
  EXPECT_EQ(custom->api_key_env, "PTXBENCH_ENDPOINT_API_KEY");
  auto anthropic = ModelConfig::from_shortcut("anthropic:claude-x@https://proxy.example");
  ASSERT_TRUE(anthropic.ok());
  EXPECT_EQ(anthropic->api_key_env, "PTXBENCH_ENDPOINT_API_KEY");
  // The public endpoint typed out, with a trailing slash, is still the provider's.
  auto same = ModelConfig::from_shortcut("openai:gpt-5@https://api.openai.com/v1/");
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->api_key_env, "OPENAI_API_KEY");
  auto plain = ModelConfig::from_shortcut("openai:gpt-5");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->api_key_env, "OPENAI_API_KEY");
  EXPECT_FALSE(ModelConfig::from_shortcut("gpt-5").ok());
  EXPECT_FALSE(ModelConfig::from_shortcut("mistral:large").ok());
}

TEST(WireFormat, ExtraBodyOverridesAndNullRemoves) {
  ModelConfig config;
  config.api = "openai";
  config.model = "o-model";
  config.max_tokens = 4096;
  config.extra_body =
      Json{{"max_tokens", nullptr}, {"max_completion_tokens", 8000}, {"reasoning_effort", "high"}};
  const Json body = make_wire_format("openai")->body(config, {{"user", "hi"}});
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_EQ(body["max_completion_tokens"], 8000);
  EXPECT_EQ(body["reasoning_effort"], "high");
}

TEST(WireFormat, OpenAiUsageVariants) {
  auto format = make_wire_format("openai");
  // Gemini's OpenAI endpoint: thoughts only in total_tokens.
  auto gemini = format->parse(R"({"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],
      "usage":{"prompt_tokens":100,"completion_tokens":40,"total_tokens":400}})");
  ASSERT_TRUE(gemini.ok());
  EXPECT_EQ(gemini->usage.reasoning, 260);
  EXPECT_EQ(gemini->usage.completion, 300);
  EXPECT_EQ(gemini->usage.reasoning_source, "reported_total");
  // Content as parts; null content.
  auto parts = format->parse(
      R"({"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]})");
  ASSERT_TRUE(parts.ok());
  EXPECT_EQ(parts->content, "ab");
  auto empty = format->parse(
      R"({"choices":[{"message":{"content":null,"reasoning_content":"only thoughts"}}]})");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->content, "");
  EXPECT_EQ(empty->reasoning, "only thoughts");
  // No choices; an error object with status 200 (gateways do this).
  EXPECT_EQ(format->parse(R"({"choices":[]})").error().code, "bad_response");
  EXPECT_EQ(format->parse(R"({"error":{"message":"upstream failed","code":502}})").error().code,
            "server");
}

TEST(WireFormat, ThinkBlocksSplitOffTheAnswer) {
  EXPECT_EQ(split_think_block("<think>plan</think>\n\nanswer"),
            (std::pair<std::string, std::string>{"answer", "plan"}));
  // Qwen3 templates put <think> in the prompt: only the closing tag is in the content.
  EXPECT_EQ(split_think_block("plan\n</think>\nanswer"),
            (std::pair<std::string, std::string>{"answer", "plan"}));
  EXPECT_EQ(split_think_block("no thoughts"),
            (std::pair<std::string, std::string>{"no thoughts", ""}));
}

TEST(ApiError, ClassifiesStatusesAndContextWindowWording) {
  EXPECT_EQ(api_error_from_body(401, R"({"error":{"message":"bad key"}})").code, "auth");
  EXPECT_EQ(api_error_from_body(429, "slow").code, "rate_limited");
  EXPECT_EQ(
      api_error_from_body(
          529, R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})")
          .code,
      "server");
  EXPECT_EQ(api_error_from_body(404, R"({"error":{"message":"model not found"}})").code, "client");
  EXPECT_EQ(
      api_error_from_body(400, R"({"error":{"message":"bad","code":"context_length_exceeded"}})")
          .code,
      kContextWindowError);
  EXPECT_EQ(
      api_error_from_body(
          400,
          R"({"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}})")
          .code,
      kContextWindowError);
  EXPECT_EQ(
      api_error_from_body(400, R"({"error":{"message":"temperature must be at most 1"}})").code,
      "client");
  const Error e = api_error_from_body(500, "<html>gateway</html>");
  EXPECT_EQ(e.code, "server");
  EXPECT_NE(e.message.find("HTTP 500: <html>gateway</html>"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
