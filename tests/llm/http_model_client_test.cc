// The model clients against a real loopback HTTP server speaking the OpenAI and Anthropic wire
// formats with scripted answers: normal answers, reasoning fields, malformed JSON, 429 with
// Retry-After, 500s, a stalled connection hitting the timeout, context-window errors, and the
// API key kept out of every error. Waits are recorded by an injected sleeper, not slept.
#include <gtest/gtest.h>

#include <atomic>

#include "../support/http_test_server.h"
#include "llm/http_model_client.h"
#include "llm/http_transport.h"
#include "llm/model_factory.h"

namespace ptxb {
namespace {

using testing::ScriptedHttpServer;
using testing::ScriptedRequest;
using testing::ScriptedResponse;

constexpr const char* kKey = "sk-test-0123456789-SECRET";

ModelConfig config_for(const ScriptedHttpServer& server, const std::string& api) {
  ModelConfig config;
  config.name = "scripted";
  config.api = api;
  config.model = "scripted-model";
  config.base_url = server.base_url() + (api == "anthropic" ? "" : "/v1");
  config.timeout_seconds = 5;
  config.retry.max_attempts = 4;
  config.max_tokens = 1000;
  return config;
}

struct Waits {
  std::vector<double> seconds;
  HttpModelClient::Sleeper sleeper() {
    return [this](double s) { seconds.push_back(s); };
  }
};

const std::vector<ChatMessage> kConversation = {{"system", "You write CUDA."},
                                                {"user", "# Task: gemm\nWrite it."}};

TEST(HttpModelClient, OpenAiAnswerWithReasoningContentAndUsage) {
  ScriptedHttpServer server([](const ScriptedRequest&) {
    return testing::openai_answer("Here:\n```cuda\nvoid run() {}\n```", "I think about tiles.",
                                  "reasoning_content", 1200, 800, 300);
  });
  CurlHttpTransport transport;
  Waits waits;
  ModelConfig config = config_for(server, "openai");
  config.temperature = 0.6;
  config.extra_body = Json{{"chat_template_kwargs", {{"enable_thinking", true}}}};
  HttpModelClient client(config, kKey, transport, waits.sleeper());
  auto reply = client.complete(kConversation);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->content, "Here:\n```cuda\nvoid run() {}\n```");
  EXPECT_EQ(reply->reasoning, "I think about tiles.");
  EXPECT_EQ(reply->usage.prompt, 1200);
  EXPECT_EQ(reply->usage.completion, 800);
  EXPECT_EQ(reply->usage.reasoning, 300);
  EXPECT_EQ(reply->usage.reasoning_source, "reported");
  EXPECT_EQ(reply->attempts, 1);
  EXPECT_TRUE(waits.seconds.empty());

  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/v1/chat/completions");
  EXPECT_EQ(requests[0].headers.at("authorization"), std::string("Bearer ") + kKey);
  const Json body = Json::parse(requests[0].body);
  EXPECT_EQ(body["model"], "scripted-model");
  EXPECT_EQ(body["temperature"], 0.6);
  EXPECT_EQ(body["max_tokens"], 1000);
  EXPECT_EQ(body["chat_template_kwargs"]["enable_thinking"], true);
  EXPECT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_FALSE(body.contains("top_p"));  // unset settings are not sent
}

TEST(HttpModelClient, OpenRouterReasoningFieldIsEstimatedWithoutACount) {
  ScriptedHttpServer server([](const ScriptedRequest&) {
    return testing::openai_answer("answer", std::string(350, 'r'), "reasoning", 10, 20, -1);
  });
  CurlHttpTransport transport;
  HttpModelClient client(config_for(server, "openai"), "", transport);
  auto reply = client.complete(kConversation);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->reasoning.size(), 350u);
  EXPECT_EQ(reply->usage.reasoning, 100);  // 350 bytes / 3.5
  EXPECT_EQ(reply->usage.reasoning_source, "estimated");
  EXPECT_EQ(server.requests()[0].headers.count("authorization"), 0u);  // no key configured
}

TEST(HttpModelClient, AnthropicThinkingBlocksAndHeaders) {
  ScriptedHttpServer server([](const ScriptedRequest&) {
    return testing::anthropic_answer("```cuda\nvoid run() {}\n```", "Let me plan the pipeline.",
                                     5000, 900);
  });
  CurlHttpTransport transport;
  ModelConfig config = config_for(server, "anthropic");
  config.extra_body = Json{{"thinking", {{"type", "enabled"}, {"budget_tokens", 500}}}};
  HttpModelClient client(config, kKey, transport);
  auto reply = client.complete(kConversation);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->content, "```cuda\nvoid run() {}\n```");
  EXPECT_EQ(reply->reasoning, "Let me plan the pipeline.");
  EXPECT_EQ(reply->usage.prompt, 5000);
  EXPECT_EQ(reply->usage.completion, 900);
  EXPECT_EQ(reply->usage.reasoning_source, "estimated");
  EXPECT_EQ(reply->finish_reason, "end_turn");

  const auto request = server.requests().at(0);
  EXPECT_EQ(request.path, "/v1/messages");
  EXPECT_EQ(request.headers.at("x-api-key"), kKey);
  EXPECT_EQ(request.headers.at("anthropic-version"), "2023-06-01");
  const Json body = Json::parse(request.body);
  // System goes top-level, not in messages; issue 21, defect 13: the system prompt and the
  // newest message carry cache breakpoints, so every later turn reads its prefix from the cache.
  EXPECT_EQ(body["system"], Json::parse(R"([{"type": "text", "text": "You write CUDA.",
                                             "cache_control": {"type": "ephemeral"}}])"));
  ASSERT_EQ(body["messages"].size(), 1u);
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["messages"][0]["content"][0]["text"], "# Task: gemm\nWrite it.");
  EXPECT_EQ(body["messages"][0]["content"][0]["cache_control"]["type"], "ephemeral");
  EXPECT_EQ(body["max_tokens"], 1000);
  EXPECT_EQ(body["thinking"]["budget_tokens"], 500);
}

TEST(HttpModelClient, RateLimitHonoursRetryAfter) {
  ScriptedHttpServer server([](const ScriptedRequest& request) {
    if (request.index == 0) {
      ScriptedResponse r = testing::json_response(429, Json{{"error", {{"message", "slow down"}}}});
      r.headers.emplace_back("Retry-After", "7");
      return r;
    }
    return testing::openai_answer("ok");
  });
  CurlHttpTransport transport;
  Waits waits;
  HttpModelClient client(config_for(server, "openai"), kKey, transport, waits.sleeper());
  std::vector<std::string> notices;
  client.set_retry_notice([&](const std::string& line) { notices.push_back(line); });
  auto reply = client.complete(kConversation);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->attempts, 2);
  ASSERT_EQ(waits.seconds.size(), 1u);
  EXPECT_DOUBLE_EQ(waits.seconds[0], 7.0);
  ASSERT_EQ(reply->retries.size(), 1u);
  EXPECT_NE(reply->retries[0].find("rate_limited"), std::string::npos) << reply->retries[0];
  EXPECT_NE(reply->retries[0].find("Retry-After"), std::string::npos);
  EXPECT_EQ(notices.size(), 1u);
  EXPECT_EQ(server.request_count(), 2);
}

TEST(HttpModelClient, RetryAfterAboveTheCapFailsAtOnce) {
  ScriptedHttpServer server([](const ScriptedRequest&) {
    ScriptedResponse r = testing::json_response(429, Json{{"error", {{"message", "quota"}}}});
    r.headers.emplace_back("Retry-After", "86400");
    return r;
  });
  CurlHttpTransport transport;
  Waits waits;
  HttpModelClient client(config_for(server, "openai"), kKey, transport, waits.sleeper());
  auto reply = client.complete(kConversation);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, "rate_limited");
  EXPECT_NE(reply.error().message.find("above the"), std::string::npos) << reply.error().message;
  EXPECT_TRUE(waits.seconds.empty());
  EXPECT_EQ(server.request_count(), 1);
}

TEST(HttpModelClient, ServerErrorsBackOffExponentiallyThenSucceed) {
  ScriptedHttpServer server([](const ScriptedRequest& request) {
    if (request.index < 2) return testing::json_response(500, Json{{"error", "upstream exploded"}});
    return testing::openai_answer("ok");
  });
  CurlHttpTransport transport;
  Waits waits;
  ModelConfig config = config_for(server, "openai");
  config.retry.backoff_base_seconds = 2;
  HttpModelClient client(config, kKey, transport, waits.sleeper());
  auto reply = client.complete(kConversation);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->attempts, 3);
  ASSERT_EQ(waits.seconds.size(), 2u);
  // Equal jitter: the first wait is in [1, 2), the second in [2, 4).
  EXPECT_GE(waits.seconds[0], 1.0);
  EXPECT_LT(waits.seconds[0], 2.0);
  EXPECT_GE(waits.seconds[1], 2.0);
  EXPECT_LT(waits.seconds[1], 4.0);
}

TEST(HttpModelClient, PersistentServerErrorsGiveUpAtTheCap) {
  ScriptedHttpServer server([](const ScriptedRequest&) {
    return testing::json_response(503, Json{{"error", {{"message", "overloaded"}}}});
  });
  CurlHttpTransport transport;
  Waits waits;
  HttpModelClient client(config_for(server, "openai"), kKey, transport, waits.sleeper());
  auto reply = client.complete(kConversation);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, "server");
  EXPECT_NE(reply.error().message.find("gave up after 4 attempts"), std::string::npos)
      << reply.error().message;
  EXPECT_EQ(server.request_count(), 4);
  EXPECT_EQ(waits.seconds.size(), 3u);
}

TEST(HttpModelClient, MalformedJsonIsRetriedThenReported) {
  std::atomic<int> good_after{1};
  ScriptedHttpServer server([&](const ScriptedRequest& request) {
    if (request.index < good_after) {
      ScriptedResponse r;
      r.body = "{\"choices\": [ {\"message\": ";  // cut off mid-document
      return r;
    }
    return testing::openai_answer("recovered");
  });
  CurlHttpTransport transport;
  Waits waits;
  HttpModelClient client(config_for(server, "openai"), kKey, transport, waits.sleeper());
  auto reply = client.complete(kConversation);
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->content, "recovered");
  EXPECT_EQ(reply->attempts, 2);
  EXPECT_NE(reply->retries.at(0).find("bad_response"), std::string::npos);

  good_after = 1000;
  auto broken = client.complete(kConversation);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.error().code, "bad_response");
  EXPECT_NE(broken.error().message.find("not JSON"), std::string::npos) << broken.error().message;
}

TEST(HttpModelClient, StalledConnectionHitsTheTimeout) {
  ScriptedHttpServer server([](const ScriptedRequest& request) {
    ScriptedResponse r = testing::openai_answer("late but fine");
    r.stall = request.index == 0;
    return r;
  });
  CurlHttpTransport transport;
  Waits waits;
  ModelConfig config = config_for(server, "openai");
  config.timeout_seconds = 0.5;
  HttpModelClient client(config, kKey, transport, waits.sleeper());
  const auto start = std::chrono::steady_clock::now();
  auto reply = client.complete(kConversation);
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(reply.ok()) << reply.error().message;
  EXPECT_EQ(reply->attempts, 2);
  EXPECT_NE(reply->retries.at(0).find("[timeout]"), std::string::npos) << reply->retries.at(0);
  EXPECT_LT(elapsed, 5.0);  // the stall was cut at 0.5 s, not waited out

  config.retry.max_attempts = 1;
  ScriptedHttpServer silent([](const ScriptedRequest&) {
    ScriptedResponse r;
    r.stall = true;
    return r;
  });
  config.base_url = silent.base_url() + "/v1";
  HttpModelClient once(config, kKey, transport, waits.sleeper());
  auto timed_out = once.complete(kConversation);
  ASSERT_FALSE(timed_out.ok());
  EXPECT_EQ(timed_out.error().code, "timeout");
}

TEST(HttpModelClient, ContextWindowErrorsAreRecognisedAndNotRetried) {
  const std::vector<std::pair<std::string, ScriptedResponse>> cases = {
      {"openai", testing::json_response(
                     400, Json{{"error",
                                {{"message", "This model's maximum context length is 8192 tokens."},
                                 {"type", "invalid_request_error"},
                                 {"code", "context_length_exceeded"}}}})},
      {"openai",  // vLLM's wording, no structured code
       testing::json_response(400, Json{{"object", "error"},
                                        {"message",
                                         "This model's maximum context length is 32768 tokens. "
                                         "However, you requested 40000 tokens"},
                                        {"code", 400}})},
      {"anthropic",
       testing::json_response(
           400, Json{{"type", "error"},
                     {"error",
                      {{"type", "invalid_request_error"},
                       {"message", "prompt is too long: 210000 tokens > 200000 maximum"}}}})},
      {"anthropic",
       testing::json_response(200, Json{{"type", "message"},
                                        {"content", Json::array()},
                                        {"stop_reason", "model_context_window_exceeded"},
                                        {"usage", {{"input_tokens", 1}, {"output_tokens", 0}}}})},
  };
  for (const auto& [api, response] : cases) {
    ScriptedHttpServer server([response = response](const ScriptedRequest&) { return response; });
    CurlHttpTransport transport;
    Waits waits;
    HttpModelClient client(config_for(server, api), kKey, transport, waits.sleeper());
    auto reply = client.complete(kConversation);
    ASSERT_FALSE(reply.ok()) << api << " " << response.body;
    EXPECT_EQ(reply.error().code, kContextWindowError) << reply.error().message;
    EXPECT_EQ(server.request_count(), 1) << response.body;
    EXPECT_TRUE(waits.seconds.empty());
  }
}

TEST(HttpModelClient, AuthFailureIsFinalAndTheEchoedKeyIsRedacted) {
  ScriptedHttpServer server([](const ScriptedRequest& request) {
    // Some providers echo the key they were given.
    const std::string given =
        request.headers.count("authorization") ? request.headers.at("authorization") : "";
    return testing::json_response(
        401, Json{{"error", {{"message", "Incorrect API key provided: " + given}}}});
  });
  CurlHttpTransport transport;
  Waits waits;
  HttpModelClient client(config_for(server, "openai"), kKey, transport, waits.sleeper());
  auto reply = client.complete(kConversation);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, "auth");
  EXPECT_EQ(reply.error().message.find(kKey), std::string::npos) << reply.error().message;
  EXPECT_NE(reply.error().message.find("[REDACTED]"), std::string::npos);
  EXPECT_EQ(server.request_count(), 1);
}

// Issue 21, defect 12: short keys of local servers ("k", "x", "EMPTY") were replaced inside
// every word; only whole tokens of secret-length keys are redacted.
TEST(RedactKey, WholeTokensOfSecretLengthKeysOnly) {
  EXPECT_EQ(redact_key("Invalid key: EMPTY. Keys: k, x", "EMPTY"),
            "Invalid key: EMPTY. Keys: k, x");
  EXPECT_EQ(redact_key("token k rejected", "k"), "token k rejected");
  EXPECT_EQ(redact_key(std::string("Incorrect API key provided: ") + kKey + ".", kKey),
            "Incorrect API key provided: [REDACTED].");
  EXPECT_EQ(redact_key(std::string("Bearer ") + kKey + "\n" + kKey, kKey),
            "Bearer [REDACTED]\n[REDACTED]");
  // Inside a longer token it is another string, not the key: left alone.
  EXPECT_EQ(redact_key(std::string("x") + kKey + "y", kKey), std::string("x") + kKey + "y");
}

// Issue 21, defect 4: with openai:M@URL the provider's key must not reach URL; the endpoint's
// own (optional) variable is sent instead.
TEST(ModelFactory, CustomEndpointGetsItsOwnKeyNeverTheProviders) {
  ScriptedHttpServer server([](const ScriptedRequest&) { return testing::openai_answer("ok"); });
  CurlHttpTransport transport;
  ::setenv("OPENAI_API_KEY", kKey, 1);
  ::unsetenv(kEndpointKeyEnv);
  auto config = ModelConfig::from_shortcut("openai:m@" + server.base_url() + "/v1");
  ASSERT_TRUE(config.ok());
  auto client = make_model_client(*config, transport, {});
  ASSERT_TRUE(client.ok()) << client.error().message;
  ASSERT_TRUE((*client)->complete(kConversation).ok());
  EXPECT_EQ(server.requests().at(0).headers.count("authorization"), 0u);
  ::setenv(kEndpointKeyEnv, "local-endpoint-key", 1);
  auto keyed = make_model_client(*config, transport, {});
  ASSERT_TRUE(keyed.ok());
  ASSERT_TRUE((*keyed)->complete(kConversation).ok());
  EXPECT_EQ(server.requests().at(1).headers.at("authorization"), "Bearer local-endpoint-key");
  ::unsetenv(kEndpointKeyEnv);
  ::unsetenv("OPENAI_API_KEY");
}

TEST(HttpModelClient, RefusedConnectionIsANetworkError) {
  int port = 0;
  {
    ScriptedHttpServer gone([](const ScriptedRequest&) { return ScriptedResponse{}; });
    port = gone.port();
  }  // closed: nothing listens there now
  ModelConfig config;
  config.name = "nobody";
  config.api = "openai";
  config.model = "m";
  config.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
  config.retry.max_attempts = 2;
  CurlHttpTransport transport;
  Waits waits;
  HttpModelClient client(config, kKey, transport, waits.sleeper());
  auto reply = client.complete(kConversation);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, "network");
  EXPECT_EQ(waits.seconds.size(), 1u);
}

TEST(Backoff, EqualJitterDoublesUpToTheCap) {
  RetryPolicy policy;
  policy.backoff_base_seconds = 2;
  policy.backoff_max_seconds = 10;
  EXPECT_DOUBLE_EQ(backoff_seconds(policy, 1, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(backoff_seconds(policy, 1, 1.0), 2.0);
  EXPECT_DOUBLE_EQ(backoff_seconds(policy, 3, 0.5), 6.0);   // d = 8: 4 + 0.5 * 4
  EXPECT_DOUBLE_EQ(backoff_seconds(policy, 10, 0.0), 5.0);  // capped at 10
}

TEST(RetryAfter, SecondsAndHttpDates) {
  EXPECT_EQ(parse_retry_after("", 0), std::nullopt);
  EXPECT_EQ(parse_retry_after("12", 0), 12.0);
  EXPECT_EQ(parse_retry_after(" 1.5 ", 0), 1.5);
  EXPECT_EQ(parse_retry_after("-3", 0), 0.0);
  EXPECT_EQ(parse_retry_after("soon", 0), std::nullopt);
  // 1994-11-06T08:49:37Z is 784111777.
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111770), 7.0);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", 784111800), 0.0);
}

}  // namespace
}  // namespace ptxb
