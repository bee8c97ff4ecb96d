#include "llm/http_transport.h"

#include <curl/curl.h>

#include <cmath>
#include <memory>
#include <mutex>

#include "core/interrupt.h"
#include "core/strings.h"

namespace ptxb {
namespace {

struct Transfer {
  HttpResponse response;
  bool over_cap = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  if (transfer->response.body.size() + bytes > kMaxHttpResponseBytes) {
    transfer->over_cap = true;
    return 0;  // aborts the transfer (CURLE_WRITE_ERROR)
  }
  transfer->response.body.append(data, bytes);
  return bytes;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* transfer = static_cast<Transfer*>(user);
  const std::size_t bytes = size * count;
  const std::string line(data, bytes);
  // A new status line (after a redirect or "100 Continue") starts a new header block.
  if (starts_with(line, "HTTP/")) {
    transfer->response.headers.clear();
    return bytes;
  }
  const std::size_t colon = line.find(':');
  if (colon != std::string::npos)
    transfer->response.headers[to_lower(trim(line.substr(0, colon)))] =
        trim(line.substr(colon + 1));
  return bytes;
}

int on_progress(void*, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return interrupted() ? 1 : 0;
}

long to_ms(double seconds) {
  return static_cast<long>(std::ceil(seconds * 1000.0));
}

}  // namespace

CurlHttpTransport::CurlHttpTransport() {
  // curl_global_init is not thread-safe; do it once, before any worker thread issues a request.
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Result<HttpResponse> CurlHttpTransport::post(const HttpRequest& request) {
  // One handle per thread, reset for every request: its connection cache keeps the connection
  // to a host open between requests (HTTP keep-alive), so a client that talks to one service
  // pays the TCP set-up once instead of per request (bench/results/service.md).
  thread_local std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(nullptr,
                                                                        &curl_easy_cleanup);
  if (!curl) curl.reset(curl_easy_init());
  if (!curl) return make_error("network", "libcurl could not create a handle");
  curl_easy_reset(curl.get());
  curl_slist* raw_headers = nullptr;
  for (const auto& [name, value] : request.headers)
    raw_headers = curl_slist_append(raw_headers, (name + ": " + value).c_str());
  // No "Expect: 100-continue" round trip for large prompts: the body goes out at once.
  raw_headers = curl_slist_append(raw_headers, "Expect:");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(raw_headers,
                                                                      &curl_slist_free_all);
  Transfer transfer;
  char error_buffer[CURL_ERROR_SIZE] = {0};
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  if (request.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (request.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
    if (request.method != "POST")
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());  // PUT
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, to_ms(request.timeout_seconds));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, to_ms(request.connect_timeout_seconds));
  // Worker threads: no SIGALRM-based DNS timeouts.
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl can decode
  // Redirects would re-send the API key to another host; a model endpoint never needs them.
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  // Ctrl-C (core/interrupt.h): libcurl calls this about once a second and aborts the transfer
  // when it returns non-zero, so an interrupted run does not wait out a long answer.
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);

  const CURLcode code = curl_easy_perform(h);
  if (code == CURLE_ABORTED_BY_CALLBACK)
    return make_error("interrupted", "POST {}: stopped, ptxbench was interrupted", request.url);
  if (transfer.over_cap)
    return make_error("network", "POST {}: response larger than {} bytes", request.url,
                      kMaxHttpResponseBytes);
  if (code != CURLE_OK) {
    const std::string detail = error_buffer[0] ? error_buffer : curl_easy_strerror(code);
    if (code == CURLE_OPERATION_TIMEDOUT)
      return make_error("timeout", "POST {}: no complete answer within {:g} s ({})", request.url,
                        request.timeout_seconds, detail);
    return make_error("network", "POST {}: {}", request.url, detail);
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &transfer.response.status);
  return std::move(transfer.response);
}

}  // namespace ptxb
