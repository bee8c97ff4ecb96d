#include "llm/model_config.h"

#include <algorithm>
#include <type_traits>

#include "core/strings.h"

namespace ptxb {
namespace {

struct Provider {
  const char* name;
  const char* api;
  const char* base_url;  // "" = the shortcut must give @URL
  const char* key_env;   // "" = no key
};

// Public endpoints of the providers the --model shortcut knows. Gemini is reached through its
// OpenAI-compatible endpoint.
constexpr Provider kProviders[] = {
    {"openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"},
    {"anthropic", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"},
    {"gemini", "gemini", "https://generativelanguage.googleapis.com/v1beta/openai",
     "GEMINI_API_KEY"},
    {"openrouter", "openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"},
    {"together", "openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY"},
    {"vllm", "openai", "", ""},
    {"sglang", "openai", "", ""},
};

const Provider* find_provider(const std::string& name) {
  for (const auto& p : kProviders)
    if (name == p.name) return &p;
  return nullptr;
}

// The Anthropic API requires max_tokens; 32k leaves room for a long kernel plus thinking.
constexpr std::int64_t kAnthropicDefaultMaxTokens = 32000;

void apply_api_defaults(ModelConfig& config, bool base_url_given) {
  if (config.is_replay()) return;
  if (!base_url_given) {
    const Provider* p = find_provider(config.api);
    config.base_url = p->base_url;
    // The provider's public endpoint needs the provider's key.
    if (config.api_key_env.empty()) config.api_key_env = p->key_env;
  }
  if (config.api == "anthropic" && !config.max_tokens)
    config.max_tokens = kAnthropicDefaultMaxTokens;
}

template <typename T>
Status read_number(const Json& json, const std::string& path, const char* key, T& out, double min,
                   double max) {
  if (!json.contains(key) || json[key].is_null()) return ok_status();
  const Json& v = json[key];
  if (!v.is_number()) return make_error("config", "{}.{}: expected a number", path, key);
  if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer())
      return make_error("config", "{}.{}: expected an integer", path, key);
  }
  const double value = v.get<double>();
  if (value < min || value > max)
    return make_error("config", "{}.{}: {} is out of range [{:g}, {:g}]", path, key, v.dump(), min,
                      max);
  out = v.get<T>();
  return ok_status();
}

template <typename T>
Status read_optional_number(const Json& json, const std::string& path, const char* key,
                            std::optional<T>& out, double min, double max) {
  if (!json.contains(key) || json[key].is_null()) return ok_status();
  T value{};
  PTXB_RETURN_IF_ERROR(read_number(json, path, key, value, min, max));
  out = value;
  return ok_status();
}

Status read_string(const Json& json, const std::string& path, const char* key, std::string& out) {
  if (!json.contains(key) || json[key].is_null()) return ok_status();
  if (!json[key].is_string()) return make_error("config", "{}.{}: expected a string", path, key);
  out = json[key].get<std::string>();
  return ok_status();
}

}  // namespace

const std::vector<std::string>& model_api_names() {
  static const std::vector<std::string> names = {"openai", "anthropic", "gemini", "replay"};
  return names;
}

Json RetryPolicy::to_json() const {
  return Json{{"max_attempts", max_attempts},
              {"backoff_base_s", backoff_base_seconds},
              {"backoff_max_s", backoff_max_seconds},
              {"max_retry_after_s", max_retry_after_seconds}};
}

Json ModelConfig::to_json() const {
  Json json = Json::object();
  json["name"] = name;
  json["api"] = api;
  if (is_replay()) {
    json["replay_dir"] = replay_dir;
    return json;
  }
  json["base_url"] = base_url;
  json["model"] = model;
  json["api_key_env"] = api_key_env.empty() ? Json(nullptr) : Json(api_key_env);
  json["temperature"] = temperature ? Json(*temperature) : Json(nullptr);
  json["top_p"] = top_p ? Json(*top_p) : Json(nullptr);
  json["max_tokens"] = max_tokens ? Json(*max_tokens) : Json(nullptr);
  json["extra_body"] = extra_body;
  json["timeout_s"] = timeout_seconds;
  json["connect_timeout_s"] = connect_timeout_seconds;
  json["retry"] = retry.to_json();
  return json;
}

Result<ModelConfig> ModelConfig::from_json(const Json& json, const std::string& path) {
  if (!json.is_object()) return make_error("config", "{}: expected an object", path);
  static const std::vector<std::string> kKnown = {
      "name",      "api",        "base_url",   "model",     "api_key_env",       "temperature",
      "top_p",     "max_tokens", "extra_body", "timeout_s", "connect_timeout_s", "retry",
      "replay_dir"};
  if (json.contains("api_key"))
    return make_error("config",
                      "{}.api_key: API keys are never written in a config; name the environment "
                      "variable that holds it in api_key_env",
                      path);
  for (const auto& [key, value] : json.items())
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end())
      return make_error("config", "{}.{}: unknown field (known: {})", path, key,
                        join(kKnown, ", "));

  ModelConfig config;
  PTXB_RETURN_IF_ERROR(read_string(json, path, "api", config.api));
  if (config.api.empty())
    return make_error("config", "{}.api: missing (one of {})", path, join(model_api_names(), ", "));
  const auto& apis = model_api_names();
  if (std::find(apis.begin(), apis.end(), config.api) == apis.end())
    return make_error("config", "{}.api: \"{}\" is not one of {}", path, config.api,
                      join(apis, ", "));
  PTXB_RETURN_IF_ERROR(read_string(json, path, "name", config.name));
  PTXB_RETURN_IF_ERROR(read_string(json, path, "model", config.model));
  if (config.is_replay()) {
    PTXB_RETURN_IF_ERROR(read_string(json, path, "replay_dir", config.replay_dir));
    config.model = "replay";
    if (config.name.empty()) config.name = "replay";
    return config;
  }
  if (config.model.empty())
    return make_error("config", "{}.model: missing (the id the server knows the model by)", path);
  if (config.name.empty()) config.name = config.model;
  PTXB_RETURN_IF_ERROR(read_string(json, path, "base_url", config.base_url));
  PTXB_RETURN_IF_ERROR(read_string(json, path, "api_key_env", config.api_key_env));
  if (!config.base_url.empty() && !starts_with(config.base_url, "http://") &&
      !starts_with(config.base_url, "https://"))
    return make_error("config", "{}.base_url: \"{}\" is not an http:// or https:// URL", path,
                      config.base_url);
  PTXB_RETURN_IF_ERROR(
      read_optional_number(json, path, "temperature", config.temperature, 0.0, 2.0));
  PTXB_RETURN_IF_ERROR(read_optional_number(json, path, "top_p", config.top_p, 0.0, 1.0));
  PTXB_RETURN_IF_ERROR(read_optional_number(json, path, "max_tokens", config.max_tokens, 1.0, 1e8));
  if (json.contains("extra_body") && !json["extra_body"].is_null()) {
    if (!json["extra_body"].is_object())
      return make_error("config",
                        "{}.extra_body: expected an object (merged into the request body)", path);
    config.extra_body = json["extra_body"];
  }
  PTXB_RETURN_IF_ERROR(
      read_number(json, path, "timeout_s", config.timeout_seconds, 0.001, 86400.0));
  PTXB_RETURN_IF_ERROR(
      read_number(json, path, "connect_timeout_s", config.connect_timeout_seconds, 0.001, 600.0));
  if (json.contains("retry") && !json["retry"].is_null()) {
    const Json& retry = json["retry"];
    const std::string retry_path = path + ".retry";
    if (!retry.is_object()) return make_error("config", "{}: expected an object", retry_path);
    for (const auto& [key, value] : retry.items())
      if (key != "max_attempts" && key != "backoff_base_s" && key != "backoff_max_s" &&
          key != "max_retry_after_s")
        return make_error("config",
                          "{}.{}: unknown field (known: max_attempts, backoff_base_s, "
                          "backoff_max_s, max_retry_after_s)",
                          retry_path, key);
    PTXB_RETURN_IF_ERROR(
        read_number(retry, retry_path, "max_attempts", config.retry.max_attempts, 1, 100));
    PTXB_RETURN_IF_ERROR(read_number(retry, retry_path, "backoff_base_s",
                                     config.retry.backoff_base_seconds, 0.0, 3600.0));
    PTXB_RETURN_IF_ERROR(read_number(retry, retry_path, "backoff_max_s",
                                     config.retry.backoff_max_seconds, 0.0, 3600.0));
    PTXB_RETURN_IF_ERROR(read_number(retry, retry_path, "max_retry_after_s",
                                     config.retry.max_retry_after_seconds, 0.0, 86400.0));
  }
  apply_api_defaults(config, !config.base_url.empty());
  return config;
}

Result<ModelConfig> ModelConfig::from_shortcut(const std::string& spec) {
  ModelConfig config;
  if (spec == "replay" || starts_with(spec, "replay:")) {
    config.api = "replay";
    config.name = "replay";
    config.model = "replay";
    if (spec.size() > 7) config.replay_dir = spec.substr(7);
    return config;
  }
  const std::size_t colon = spec.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
    return make_error("usage",
                      "--model {}: expected replay, PROVIDER:MODEL[@BASE_URL] (providers: openai, "
                      "anthropic, gemini, openrouter, together, vllm, sglang), or the name of a "
                      "model in --config",
                      spec);
  const std::string provider_name = spec.substr(0, colon);
  const Provider* provider = find_provider(provider_name);
  if (!provider)
    return make_error("usage",
                      "--model {}: unknown provider \"{}\" (openai, anthropic, gemini, openrouter, "
                      "together, vllm, sglang)",
                      spec, provider_name);
  std::string model = spec.substr(colon + 1);
  std::string base_url;
  // '@' separates the URL: model ids contain '/' and ':' but not "@http".
  if (const std::size_t at = model.find("@http"); at != std::string::npos) {
    base_url = model.substr(at + 1);
    model = model.substr(0, at);
  }
  if (model.empty()) return make_error("usage", "--model {}: the model id is empty", spec);
  if (base_url.empty() && !*provider->base_url)
    return make_error("usage", "--model {}: {} needs the server's URL: {}:{}@http://HOST:PORT/v1",
                      spec, provider_name, provider_name, model);
  config.api = provider->api;
  config.name = model;
  config.model = model;
  // The same endpoint, typed with or without a trailing slash, is still the provider's.
  auto same_endpoint = [](std::string a, std::string b) {
    while (!a.empty() && a.back() == '/') a.pop_back();
    while (!b.empty() && b.back() == '/') b.pop_back();
    return to_lower(a) == to_lower(b);
  };
  const bool public_endpoint = base_url.empty() || same_endpoint(base_url, provider->base_url);
  config.base_url = base_url.empty() ? provider->base_url : base_url;
  config.api_key_env = public_endpoint && *provider->key_env ? provider->key_env : kEndpointKeyEnv;
  apply_api_defaults(config, true);
  return config;
}

}  // namespace ptxb
