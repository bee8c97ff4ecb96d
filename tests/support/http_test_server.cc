#include "http_test_server.h"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "core/strings.h"

namespace ptxb::testing {
namespace {

bool send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads one request (headers, then Content-Length bytes of body). False on EOF or error.
bool read_request(int fd, ScriptedRequest& request) {
  std::string data;
  char buffer[65536];
  std::size_t header_end = std::string::npos;
  bool continued = false;
  std::size_t content_length = 0;
  for (;;) {
    if (header_end == std::string::npos) {
      header_end = data.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        const std::vector<std::string> lines = split(data.substr(0, header_end), '\n');
        const std::vector<std::string> first = split(trim(lines.at(0)), ' ');
        request.method = first.size() > 0 ? first[0] : "";
        request.path = first.size() > 1 ? first[1] : "";
        for (std::size_t i = 1; i < lines.size(); ++i) {
          const std::size_t colon = lines[i].find(':');
          if (colon == std::string::npos) continue;
          request.headers[to_lower(trim(lines[i].substr(0, colon)))] =
              trim(lines[i].substr(colon + 1));
        }
        if (request.headers.count("content-length"))
          content_length = std::stoul(request.headers["content-length"]);
        if (to_lower(request.headers["expect"]) == "100-continue" && !continued) {
          continued = true;
          if (!send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n")) return false;
        }
      }
    }
    if (header_end != std::string::npos && data.size() >= header_end + 4 + content_length) {
      request.body = data.substr(header_end + 4, content_length);
      return true;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) return false;  // a client silent for 10 s: give up
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    data.append(buffer, static_cast<std::size_t>(n));
  }
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

ScriptedHttpServer::ScriptedHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only
  address.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
    return;
  }
  socklen_t length = sizeof address;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

ScriptedHttpServer::~ScriptedHttpServer() {
  stop();
}

void ScriptedHttpServer::stop() {
  if (stopping_.exchange(true)) return;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> connections;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connections.swap(connections_);
  }
  for (auto& t : connections) t.join();
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void ScriptedHttpServer::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.emplace_back([this, fd] { serve(fd); });
  }
}

void ScriptedHttpServer::serve(int fd) {
  ScriptedRequest request;
  if (!read_request(fd, request)) {
    ::close(fd);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    request.index = static_cast<int>(requests_.size());
    requests_.push_back(request);
  }
  arrived_.notify_all();
  const ScriptedResponse response = handler_(request);
  // Waits end early when the server stops or the client hangs up (a killed runner).
  auto wait = [&](int ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!stopping_ && std::chrono::steady_clock::now() < until) {
      pollfd p{fd, POLLIN | POLLRDHUP, 0};
      if (::poll(&p, 1, 20) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) return false;
    }
    return !stopping_;
  };
  if (response.stall) {
    wait(120000);
    ::close(fd);
    return;
  }
  if (response.delay_ms > 0 && !wait(response.delay_ms)) {
    ::close(fd);
    return;
  }
  if (!response.drop) {
    std::string text =
        fmt::format("HTTP/1.1 {} {}\r\nContent-Length: {}\r\nConnection: close\r\n",
                    response.status, reason_phrase(response.status), response.body.size());
    bool has_type = false;
    for (const auto& [name, value] : response.headers) {
      text += name + ": " + value + "\r\n";
      has_type |= to_lower(name) == "content-type";
    }
    if (!has_type) text += "Content-Type: application/json\r\n";
    text += "\r\n" + response.body;
    send_all(fd, text);
  }
  ::shutdown(fd, SHUT_WR);
  ::close(fd);
}

int ScriptedHttpServer::request_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int>(requests_.size());
}

std::vector<ScriptedRequest> ScriptedHttpServer::requests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_;
}

bool ScriptedHttpServer::wait_for_requests(int count, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> lock(mutex_);
  return arrived_.wait_for(lock, timeout,
                           [&] { return static_cast<int>(requests_.size()) >= count; });
}

ScriptedResponse json_response(int status, const Json& body) {
  ScriptedResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

ScriptedResponse openai_answer(const std::string& content, const std::string& reasoning,
                               const std::string& reasoning_field, int prompt_tokens,
                               int completion_tokens, int reasoning_tokens) {
  Json message{{"role", "assistant"}, {"content", content}};
  if (!reasoning.empty() && !reasoning_field.empty()) message[reasoning_field] = reasoning;
  Json usage{{"prompt_tokens", prompt_tokens},
             {"completion_tokens", completion_tokens},
             {"total_tokens", prompt_tokens + completion_tokens}};
  if (reasoning_tokens >= 0)
    usage["completion_tokens_details"] = {{"reasoning_tokens", reasoning_tokens}};
  return json_response(
      200,
      Json{{"id", "chatcmpl-test"},
           {"object", "chat.completion"},
           {"model", "scripted"},
           {"choices",
            Json::array({Json{{"index", 0}, {"message", message}, {"finish_reason", "stop"}}})},
           {"usage", usage}});
}

ScriptedResponse anthropic_answer(const std::string& text, const std::string& thinking,
                                  int input_tokens, int output_tokens) {
  Json content = Json::array();
  if (!thinking.empty())
    content.push_back(Json{{"type", "thinking"}, {"thinking", thinking}, {"signature", "sig"}});
  content.push_back(Json{{"type", "text"}, {"text", text}});
  return json_response(
      200, Json{{"id", "msg_test"},
                {"type", "message"},
                {"role", "assistant"},
                {"model", "scripted"},
                {"content", content},
                {"stop_reason", "end_turn"},
                {"usage", {{"input_tokens", input_tokens}, {"output_tokens", output_tokens}}}});
}

int assistant_messages_in(const std::string& request_body) {
  int count = 0;
  try {
    const Json body = Json::parse(request_body);
    for (const auto& m : body.value("messages", Json::array()))
      if (m.value("role", "") == "assistant") ++count;
  } catch (const std::exception&) {
  }
  return count;
}

}  // namespace ptxb::testing
