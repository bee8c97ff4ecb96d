// Builds the client of a configured model. The one place that reads an API key: from the
// environment variable the config names, at start, so a missing key fails before any turn runs.
#pragma once

#include <memory>

#include "llm/http_model_client.h"
#include "llm/http_transport.h"
#include "llm/model_client.h"
#include "llm/model_config.h"

namespace ptxb {

// replay: a ReplayModel over config.replay_dir (default solutions/); otherwise an
// HttpModelClient on `transport` (which must outlive the client). `notice` receives retry
// lines (secrets redacted).
Result<std::unique_ptr<ModelClient>> make_model_client(const ModelConfig& config,
                                                       HttpTransport& transport,
                                                       HttpModelClient::RetryNotice notice = {});

}  // namespace ptxb
