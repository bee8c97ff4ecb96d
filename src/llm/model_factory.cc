#include "llm/model_factory.h"

#include <cstdlib>

#include "llm/replay_model.h"

namespace ptxb {

Result<std::unique_ptr<ModelClient>> make_model_client(const ModelConfig& config,
                                                       HttpTransport& transport,
                                                       HttpModelClient::RetryNotice notice) {
  if (config.is_replay()) {
    std::string dir = config.replay_dir;
    if (dir.empty()) {
      PTXB_ASSIGN_OR_RETURN(dir, default_replay_dir());
    }
    PTXB_ASSIGN_OR_RETURN(auto replay, ReplayModel::load(dir));
    return std::unique_ptr<ModelClient>(std::move(replay));
  }
  std::string key;
  if (!config.api_key_env.empty()) {
    const char* value = std::getenv(config.api_key_env.c_str());
    // A user-named endpoint's key is optional: without it no key is sent.
    const bool optional = config.api_key_env == kEndpointKeyEnv;
    if ((!value || !*value) && optional) value = "";
    if (!value || (!*value && !optional))
      return make_error("config",
                        "model {}: environment variable {} is not set (it must hold the API key; "
                        "keys are read from the environment only)",
                        config.name, config.api_key_env);
    key = value;
  }
  auto client = std::make_unique<HttpModelClient>(config, key, transport);
  if (notice) client->set_retry_notice(std::move(notice));
  return std::unique_ptr<ModelClient>(std::move(client));
}

}  // namespace ptxb
