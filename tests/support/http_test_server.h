// A scripted HTTP/1.1 server on 127.0.0.1 for the model-client and runner tests: every request
// is recorded and answered by a handler, which can delay, stall (hold the connection without
// answering, until the client goes away or the server stops), drop the connection, or answer
// any status with any headers (429 + Retry-After, 500, malformed JSON). POSIX sockets, one
// thread per connection, "Connection: close" on every answer. Loopback only, bounded waits.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/json_io.h"

namespace ptxb::testing {

struct ScriptedRequest {
  int index = 0;  // 0-based arrival order
  std::string method;
  std::string path;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
};

struct ScriptedResponse {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  int delay_ms = 0;    // wait before answering
  bool stall = false;  // never answer (at most 120 s)
  bool drop = false;   // close the connection without answering
};

class ScriptedHttpServer {
 public:
  using Handler = std::function<ScriptedResponse(const ScriptedRequest&)>;

  explicit ScriptedHttpServer(Handler handler);
  ~ScriptedHttpServer();
  ScriptedHttpServer(const ScriptedHttpServer&) = delete;
  ScriptedHttpServer& operator=(const ScriptedHttpServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int request_count() const;
  std::vector<ScriptedRequest> requests() const;
  // True once at least `count` requests have arrived; false after `timeout`.
  bool wait_for_requests(int count, std::chrono::milliseconds timeout) const;
  void stop();

 private:
  void accept_loop();
  void serve(int fd);

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  mutable std::condition_variable arrived_;
  std::vector<ScriptedRequest> requests_;
  std::vector<std::thread> connections_;
};

// Wire-format answers for scripted handlers.
ScriptedResponse json_response(int status, const Json& body);
// An OpenAI Chat Completions answer; `reasoning_field` "" omits it ("reasoning_content" or
// "reasoning" to add `reasoning` there).
ScriptedResponse openai_answer(const std::string& content, const std::string& reasoning = "",
                               const std::string& reasoning_field = "reasoning_content",
                               int prompt_tokens = 100, int completion_tokens = 50,
                               int reasoning_tokens = -1);
// An Anthropic Messages answer with an optional thinking block first.
ScriptedResponse anthropic_answer(const std::string& text, const std::string& thinking = "",
                                  int input_tokens = 100, int output_tokens = 50);

// Number of assistant messages in an OpenAI/Anthropic request body: the turn a request is for
// is that + 1.
int assistant_messages_in(const std::string& request_body);

}  // namespace ptxb::testing
