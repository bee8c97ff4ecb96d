#include "supervisor/runner_client.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "core/process.h"
#include "core/strings.h"
#include "protocol/frame.h"

namespace ptxb {
namespace {

using Clock = std::chrono::steady_clock;

// The runner's fd for the channel (docs/runner.md): 0–2 are stdio, 3 is the first free one.
constexpr int kChildChannelFd = 3;

// Closes every descriptor ≥ first in the child. close_range(2) (Linux 5.9) when the kernel has
// it, else a bounded loop; only async-signal-safe calls (we are between fork and exec).
void close_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, first, ~0u, 0) == 0) return;
#endif
  long max_fd = ::sysconf(_SC_OPEN_MAX);
  if (max_fd < 0 || max_fd > 65536) max_fd = 65536;
  for (int fd = first; fd < max_fd; ++fd) ::close(fd);
}

int dup_high(int fd) {
  return ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

}  // namespace

std::string RunnerExit::describe() const {
  if (!finished) return "still running (killed)";
  if (term_signal != 0) {
    return fmt::format("killed by signal {} ({}){}", term_signal, signal_name(term_signal),
                       killed_by_us ? " by the supervisor" : "");
  }
  return fmt::format("exit code {}", exit_code);
}

Result<std::unique_ptr<RunnerClient>> RunnerClient::spawn(const RunnerLaunchSpec& spec) {
  std::vector<std::string> args = spec.wrapper_argv;
  args.push_back(spec.runner_path);
  args.insert(args.end(), {"--channel-fd", std::to_string(kChildChannelFd)});
  args.insert(args.end(), spec.extra_args.begin(), spec.extra_args.end());
  auto program = find_executable(args[0]);
  if (!program) return make_error("runner", "cannot execute '{}'", args[0]);
  std::vector<std::string> env = spec.env ? *spec.env : current_environment();

  int sockets[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return make_error("runner", "socketpair: {}", std::strerror(errno));
  }
  int log_pipe[2];
  if (::pipe2(log_pipe, O_CLOEXEC) != 0) {
    ::close(sockets[0]);
    ::close(sockets[1]);
    return make_error("runner", "pipe: {}", std::strerror(errno));
  }
  // Move the child's ends above 3 first, so the dup2 calls in the child cannot clobber them.
  int child_channel = dup_high(sockets[1]);
  int child_log = dup_high(log_pipe[1]);
  int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ::close(sockets[1]);
  ::close(log_pipe[1]);
  if (child_channel < 0 || child_log < 0 || dev_null < 0) {
    for (int fd : {child_channel, child_log, dev_null, sockets[0], log_pipe[0]}) {
      if (fd >= 0) ::close(fd);
    }
    return make_error("runner", "preparing descriptors: {}", std::strerror(errno));
  }

  // Everything the child needs is built before fork (only async-signal-safe calls after it).
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {child_channel, child_log, dev_null, sockets[0], log_pipe[0]}) ::close(fd);
    return make_error("runner", "fork: {}", std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::signal(SIGPIPE, SIG_DFL);
    if (::dup2(dev_null, 0) < 0 || ::dup2(child_log, 1) < 0 || ::dup2(child_log, 2) < 0 ||
        ::dup2(child_channel, kChildChannelFd) < 0) {
      ::_exit(126);
    }
    close_from(kChildChannelFd + 1);  // "no inherited descriptors except its channel" (§3.3)
    if (cwd != nullptr && ::chdir(cwd) != 0) ::_exit(126);
    ::execve(program->c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(child_channel);
  ::close(child_log);
  ::close(dev_null);

  std::unique_ptr<RunnerClient> client(new RunnerClient());
  client->channel_fd_ = sockets[0];
  client->pid_ = pid;
  int log_fd = log_pipe[0];
  std::size_t cap = spec.log_cap_bytes;
  client->log_thread_ =
      std::thread([raw = client.get(), log_fd, cap] { raw->drain_log(log_fd, cap); });
  return client;
}

std::unique_ptr<RunnerClient> RunnerClient::attach(int fd) {
  std::unique_ptr<RunnerClient> client(new RunnerClient());
  client->channel_fd_ = fd;
  return client;
}

RunnerClient::~RunnerClient() {
  if (pid_ > 0 && !exit_) {
    kill();
    wait(std::chrono::milliseconds(5000));
  }
  if (channel_fd_ >= 0) ::close(channel_fd_);
  if (log_thread_.joinable()) log_thread_.join();
}

void RunnerClient::drain_log(int fd, std::size_t cap) {
  // After the runner is reaped, what is still to come is its last buffered output: read until
  // the pipe is quiet for kQuiet or kGrace has passed, whichever is first.
  constexpr auto kQuiet = std::chrono::milliseconds(200);
  constexpr auto kGrace = std::chrono::milliseconds(1000);
  std::optional<Clock::time_point> reaped_at;
  auto last_data = Clock::now();
  char chunk[4096];
  while (true) {
    if (!reaped_at && reaped_.load()) reaped_at = Clock::now();
    if (reaped_at) {
      const auto now = Clock::now();
      if (now - *reaped_at >= kGrace || now - std::max(last_data, *reaped_at) >= kQuiet) break;
    }
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, 50);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    if (ready == 0) continue;
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF once the runner and all its children closed the pipe
    last_data = Clock::now();
    std::lock_guard<std::mutex> lock(log_mutex_);
    std::size_t keep = log_.size() < cap ? std::min<std::size_t>(cap - log_.size(), n) : 0;
    log_.append(chunk, keep);
    log_dropped_ += static_cast<std::size_t>(n) - keep;
  }
  ::close(fd);
}

std::string RunnerClient::log() const {
  std::lock_guard<std::mutex> lock(log_mutex_);
  if (log_dropped_ == 0) return log_;
  return log_ + fmt::format("\n[... {} more bytes of runner output dropped]\n", log_dropped_);
}

Result<Json> RunnerClient::request(const std::string& type, Json body,
                                   std::chrono::milliseconds timeout) {
  if (channel_fd_ < 0) return make_error("runner", "channel closed");
  const std::uint64_t seq = next_seq_++;
  const Json message = make_request(type, seq, std::move(body));
  PTXB_RETURN_IF_ERROR(write_frame(channel_fd_, encode_message(message)));
  FrameReadOptions options;
  // One deadline for the whole reply: the first byte and the rest share `timeout`.
  options.first_byte_timeout = std::max(timeout, std::chrono::milliseconds(1));
  options.frame_timeout = options.first_byte_timeout;
  auto payload = read_frame(channel_fd_, options);
  if (!payload.ok()) return payload.error().with_context(fmt::format("runner: {} #{}", type, seq));
  auto reply = parse_json(*payload, "runner reply");
  if (!reply.ok()) return reply.error();
  PTXB_RETURN_IF_ERROR(check_reply(*reply, type, seq));
  return std::move(reply).value();
}

Result<HelloReply> RunnerClient::hello(std::chrono::milliseconds timeout) {
  PTXB_ASSIGN_OR_RETURN(Json reply, request(kMsgHello, Json::object(), timeout));
  return hello_reply_from_json(reply);
}

Result<LoadReply> RunnerClient::load(const LoadRequest& load_request,
                                     std::chrono::milliseconds timeout) {
  PTXB_ASSIGN_OR_RETURN(Json reply, request(kMsgLoad, to_json(load_request), timeout));
  return load_reply_from_json(reply);
}

Result<BindReply> RunnerClient::bind(const BindRequest& bind_request,
                                     std::chrono::milliseconds timeout) {
  PTXB_ASSIGN_OR_RETURN(Json reply, request(kMsgBind, to_json(bind_request), timeout));
  return bind_reply_from_json(reply);
}

Result<CallReply> RunnerClient::call(const CallRequest& call_request,
                                     std::chrono::milliseconds timeout, CallBracket* bracket) {
  const auto start = Clock::now();
  auto reply = request(kMsgCall, to_json(call_request), timeout);
  const auto end = Clock::now();
  if (bracket != nullptr) {
    bracket->round_trip_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
  }
  if (!reply.ok()) return reply.error();
  return call_reply_from_json(*reply);
}

Result<BatchReply> RunnerClient::batch(const BatchRequest& batch_request,
                                       std::chrono::milliseconds timeout) {
  PTXB_ASSIGN_OR_RETURN(Json reply, request(kMsgBatch, to_json(batch_request), timeout));
  return batch_reply_from_json(reply);
}

Status RunnerClient::shutdown(std::chrono::milliseconds timeout) {
  auto reply = request(kMsgShutdown, Json::object(), timeout);
  if (pid_ > 0) {
    RunnerExit exit = wait(timeout);
    if (!reply.ok()) return reply.error();
    if (!exit.finished || exit.term_signal != 0 || exit.exit_code != 0) {
      return make_error("runner", "runner did not exit cleanly after shutdown: {}",
                        exit.describe());
    }
  }
  if (!reply.ok()) return reply.error();
  return ok_status();
}

void RunnerClient::kill() {
  if (pid_ <= 0 || exit_) return;
  ::kill(-pid_, SIGKILL);  // the whole group: a candidate may have forked
  ::kill(pid_, SIGKILL);
}

RunnerExit RunnerClient::wait(std::chrono::milliseconds timeout) {
  if (exit_) return *exit_;
  RunnerExit exit;
  if (pid_ <= 0) {
    exit.finished = true;
    exit.exit_code = 0;
    return exit;
  }
  const auto deadline = Clock::now() + timeout;
  bool killed = false;
  while (true) {
    int status = 0;
    pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      exit.finished = true;
      if (WIFSIGNALED(status)) exit.term_signal = WTERMSIG(status);
      if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
      exit.killed_by_us = killed;
      break;
    }
    if (done < 0 && errno != EINTR) {  // not our child any more (reaped elsewhere)
      exit.finished = true;
      break;
    }
    if (!killed && Clock::now() >= deadline) {
      kill();
      killed = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(-pid_, SIGKILL);  // leftovers of the candidate in the runner's group
  reaped_ = true;
  exit_ = exit;
  return exit;
}

}  // namespace ptxb
