// HTTP for the model clients (one POST with a JSON body) and the evaluation service's client
// (GET, PUT, POST): a wall-clock limit and a size cap.
//
// Behind the HttpTransport interface so that the clients' retry and parsing logic is tested
// against scripted servers (tests/support/http_test_server.h) and, where no socket is needed,
// against in-process fakes. CurlHttpTransport is the real one (libcurl, thread-safe: one easy
// handle per request; src/llm/curl_transport.cc, in its own library so that only the CLI links
// libcurl). Request headers may carry an API key: nothing here logs or stores them.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/strings.h"

namespace ptxb {

struct HttpRequest {
  std::string method = "POST";  // POST, PUT (with the body), GET, HEAD (the service client)
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;  // name, value (may be secret)
  std::string body;
  double timeout_seconds = 600;         // the whole exchange, first byte to last
  double connect_timeout_seconds = 30;  // TCP + TLS handshake
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string>
      headers;  // names lower-cased; a repeated header keeps the last
  std::string body;

  // The header's value, or "" (name in any case).
  std::string header(const std::string& name) const {
    auto it = headers.find(to_lower(name));
    return it == headers.end() ? std::string() : it->second;
  }
};

// Transport failures are errors with code "timeout" (the limit was hit, including a server that
// accepted the connection and never answered) or "network" (refused, reset, DNS, TLS, a body
// over the cap). Any HTTP status, 4xx and 5xx included, is a successful exchange.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  virtual Result<HttpResponse> post(const HttpRequest& request) = 0;
};

// A model reply is text; 64 MB means something is wrong with the server, not a long answer.
inline constexpr std::size_t kMaxHttpResponseBytes = 64u << 20;

class CurlHttpTransport final : public HttpTransport {
 public:
  CurlHttpTransport();  // initializes libcurl once per process
  Result<HttpResponse> post(const HttpRequest& request) override;
};

}  // namespace ptxb
