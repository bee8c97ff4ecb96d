// Per-model settings of an experiment (docs/agent.md "Models").
//
// A model is reached through one of four APIs:
//   openai     OpenAI-compatible Chat Completions: vLLM, SGLang, OpenRouter, Together, OpenAI
//   anthropic  the Anthropic Messages API
//   gemini     Gemini through its OpenAI-compatible endpoint (the openai wire format)
//   replay     the built-in replay model: answers from kernels on disk, no network, no key
// The API key is never part of a config: `api_key_env` names the environment variable that
// holds it, and only the HTTP client reads that variable, when it sends a request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct RetryPolicy {
  // Six attempts with 2 s doubling up to 120 s ride out a few minutes of overload or rate
  // limiting (2+4+8+16+32 s of backoff) before the turn is left for a resumed run.
  int max_attempts = 6;
  double backoff_base_seconds = 2.0;
  double backoff_max_seconds = 120.0;
  // A Retry-After above this is not waited for: the attempt fails at once (a provider asking
  // for an hour is a quota, not congestion).
  double max_retry_after_seconds = 600.0;

  Json to_json() const;
};

// The key variable of an endpoint the user names with --model PROVIDER:MODEL@URL, when URL is
// not the provider's public endpoint (and of vllm/sglang servers): a provider's own key
// (OPENAI_API_KEY, ...) is never sent to a host the user did not pair it with. Optional: unset
// means no key is sent (local servers usually take none, or any word).
inline constexpr const char* kEndpointKeyEnv = "PTXBENCH_ENDPOINT_API_KEY";

struct ModelConfig {
  std::string name;         // how runs and reports call the model; unique within an experiment
  std::string api;          // openai | anthropic | gemini | replay
  std::string base_url;     // e.g. http://localhost:8000/v1 (openai), https://api.anthropic.com
  std::string model;        // the id sent to the server; for replay, "replay"
  std::string api_key_env;  // "" = send no key (local servers)
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> max_tokens;
  // Merged into the request body last, so it can set anything the API takes: reasoning effort,
  // Anthropic `thinking`, `max_completion_tokens` for OpenAI reasoning models, vLLM's
  // `chat_template_kwargs`. Recorded in plan.json: put no secrets here.
  Json extra_body = Json::object();
  double timeout_seconds = 1800;  // one request; long reasoning answers take many minutes
  double connect_timeout_seconds = 30;
  RetryPolicy retry;
  std::string replay_dir;  // replay only: folder with replay.json (default: solutions/)

  bool is_replay() const { return api == "replay"; }
  // Everything above; safe to write anywhere (it holds the variable's name, never the key).
  Json to_json() const;
  // `path` names the object in errors: "$.models[0]". Every problem names its JSON path.
  static Result<ModelConfig> from_json(const Json& json, const std::string& path);
  // A --model shortcut: "replay", "replay:DIR", or PROVIDER:MODEL[@BASE_URL] with PROVIDER one
  // of openai, anthropic, gemini, openrouter, together, vllm, sglang (the last two need @URL).
  // The provider's key variable goes with its public endpoint only; any other URL reads
  // kEndpointKeyEnv.
  static Result<ModelConfig> from_shortcut(const std::string& spec);
};

// The API names from_json accepts.
const std::vector<std::string>& model_api_names();

}  // namespace ptxb
