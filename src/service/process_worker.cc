#include "service/process_worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

extern char** environ;

namespace ptxb::service {
namespace {

// A reply line longer than this is a broken worker, not a result (results are ~100 KB).
constexpr std::size_t kMaxReplyBytes = 64u << 20;

using SteadyClock = std::chrono::steady_clock;

}  // namespace

ProcessWorker::ProcessWorker(std::string name, std::vector<std::string> argv, std::string devices,
                             double start_timeout_seconds)
    : name_(std::move(name)),
      argv_(std::move(argv)),
      devices_(std::move(devices)),
      start_timeout_seconds_(start_timeout_seconds) {}

ProcessWorker::~ProcessWorker() {
  reap();
}

Status ProcessWorker::start() {
  reap();
  int in_pipe[2], out_pipe[2];
  if (::pipe2(in_pipe, O_CLOEXEC) != 0 || ::pipe2(out_pipe, O_CLOEXEC) != 0)
    return make_error("io", "{}: pipe: {}", name_, std::strerror(errno));
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env_strings.emplace_back(*e);
  if (!devices_.empty()) env_strings.push_back("CUDA_VISIBLE_DEVICES=" + devices_);
  std::vector<char*> args, envp;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return make_error("io", "{}: fork: {}", name_, std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    // SIGTERM, not SIGKILL: serve-worker's handler takes the evaluation's processes with it.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);  // the service died before the signal was armed
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(in_pipe[0]);
  ::close(out_pipe[1]);
  {
    std::lock_guard<std::mutex> lock(pid_mutex_);
    pid_ = pid;
  }
  to_worker_ = in_pipe[1];
  from_worker_ = out_pipe[0];
  auto ready = read_line(start_timeout_seconds_);
  if (!ready.ok()) return ready.error().with_context(name_ + ": start");
  auto hello = parse_json(*ready, name_ + ": ready line");
  if (!hello.ok() || !hello->is_object() || hello->value("type", "") != "ready") {
    reap();
    return make_error(kWorkerCrashed, "{}: expected a ready line, got: {}", name_,
                      ready->substr(0, 200));
  }
  return ok_status();
}

Result<std::string> ProcessWorker::read_line(double timeout_seconds) {
  const auto deadline = SteadyClock::now() + std::chrono::duration_cast<SteadyClock::duration>(
                                                 std::chrono::duration<double>(timeout_seconds));
  char chunk[65536];
  while (true) {
    const auto newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(0, newline);
      buffer_.erase(0, newline + 1);
      return line;
    }
    if (buffer_.size() > kMaxReplyBytes) {
      reap();
      return make_error(kWorkerCrashed, "{}: reply over {} bytes", name_, kMaxReplyBytes);
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0) {
      reap();
      return make_error(kWorkerTimeout, "{}: no reply within {} s (killed)", name_,
                        timeout_seconds);
    }
    if (from_worker_ < 0) return make_error(kWorkerCrashed, "{}: not running", name_);
    pollfd p{from_worker_, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 1000)));
    if (ready < 0 && errno != EINTR)
      return make_error(kWorkerCrashed, "{}: poll: {}", name_, std::strerror(errno));
    if (ready <= 0) continue;
    const ssize_t n = ::read(from_worker_, chunk, sizeof chunk);
    if (n > 0) {
      buffer_.append(chunk, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // End of file: the worker died, or kill() ended it.
    std::string how = reap();
    return make_error(kWorkerCrashed, "{}: the worker process {}", name_,
                      how.empty() ? "closed its output" : how);
  }
}

Result<Json> ProcessWorker::exchange(const Json& message, double timeout_seconds) {
  const int fd = to_worker_;
  if (fd < 0) return make_error(kWorkerCrashed, "{}: not running", name_);
  const std::string line = message.dump() + "\n";
  std::size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::write(fd, line.data() + sent, line.size() - sent);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      reap();
      return make_error(kWorkerCrashed, "{}: write to the worker failed: {}", name_,
                        std::strerror(errno));
    }
    sent += static_cast<std::size_t>(n);
  }
  PTXB_ASSIGN_OR_RETURN(std::string reply_line, read_line(timeout_seconds));
  auto reply = parse_json(reply_line, name_ + ": reply");
  if (!reply.ok() || !reply->is_object()) {
    reap();
    return make_error(kWorkerCrashed, "{}: unreadable reply (worker killed): {}", name_,
                      reply_line.substr(0, 200));
  }
  if (reply->value("type", "") == "error")
    return make_error(kWorkerEvalError, "{}", reply->value("message", "evaluator error"));
  return std::move(reply).value();
}

Result<Json> ProcessWorker::evaluate(const EvalRequest& request, double timeout_seconds) {
  PTXB_ASSIGN_OR_RETURN(
      Json reply,
      exchange(Json{{"type", "evaluate"}, {"request", request.to_json()}}, timeout_seconds));
  if (reply.value("type", "") != "result" || !reply.contains("result")) {
    reap();
    return make_error(kWorkerCrashed, "{}: expected a result reply", name_);
  }
  return std::move(reply["result"]);
}

Result<double> ProcessWorker::canary(double timeout_seconds) {
  PTXB_ASSIGN_OR_RETURN(Json reply, exchange(Json{{"type", "canary"}}, timeout_seconds));
  if (reply.value("type", "") != "canary" || !reply.contains("ms") || !reply["ms"].is_number()) {
    reap();
    return make_error(kWorkerCrashed, "{}: expected a canary reply", name_);
  }
  return reply["ms"].get<double>();
}

void ProcessWorker::kill() {
  // Only signals: the descriptors belong to the thread that talks to the worker, which sees
  // end-of-file and reaps (closing them here could race with its poll()).
  std::lock_guard<std::mutex> lock(pid_mutex_);
  if (pid_ > 0) {
    ::kill(-pid_, SIGKILL);  // the group: the evaluation's supervisor and its runners
    ::kill(pid_, SIGKILL);
  }
}

std::string ProcessWorker::reap() {
  std::string how;
  {
    std::lock_guard<std::mutex> lock(pid_mutex_);
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      int status = 0;
      if (::waitpid(pid_, &status, 0) == pid_) {
        if (WIFSIGNALED(status))
          how = "killed by signal " + std::to_string(WTERMSIG(status));
        else if (WIFEXITED(status))
          how = "exited with status " + std::to_string(WEXITSTATUS(status));
      }
      pid_ = -1;
    }
  }
  if (to_worker_ >= 0) ::close(to_worker_);
  if (from_worker_ >= 0) ::close(from_worker_);
  to_worker_ = from_worker_ = -1;
  buffer_.clear();
  return how;
}

}  // namespace ptxb::service
