#include "core/process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/interrupt.h"
#include "core/strings.h"

extern char** environ;

namespace ptxb {
namespace {

using Clock = std::chrono::steady_clock;

void append_capped(std::string& sink, std::size_t& dropped, const char* data, std::size_t n,
                   std::size_t cap) {
  const std::size_t room = sink.size() < cap ? cap - sink.size() : 0;
  const std::size_t take = n < room ? n : room;
  sink.append(data, take);
  dropped += n - take;
}

}  // namespace

std::string ProcessResult::describe() const {
  if (interrupted) return "stopped: ptxbench was interrupted (process group killed)";
  if (timed_out)
    return fmt::format("timed out after {:.1f} s (process group killed)", wall_ms / 1000.0);
  if (term_signal != 0)
    return fmt::format("killed by signal {} ({})", term_signal, signal_name(term_signal));
  return fmt::format("exit code {}", exit_code);
}

std::optional<std::string> find_executable(const std::string& name) {
  auto executable = [](const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           ::access(path.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return name;
    return std::nullopt;
  }
  const char* path_env = std::getenv("PATH");
  for (const auto& dir : split(path_env ? path_env : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (executable(candidate)) return candidate;
  }
  return std::nullopt;
}

std::vector<std::string> current_environment() {
  std::vector<std::string> env;
  for (char** entry = environ; entry && *entry; ++entry) env.emplace_back(*entry);
  return env;
}

Result<ProcessResult> SystemProcessRunner::run(const ProcessSpec& spec) {
  if (spec.argv.empty()) return make_error("process", "empty command line");
  auto program = find_executable(spec.argv[0]);
  if (!program) return make_error("process", "{}: executable not found", spec.argv[0]);

  // Everything the child needs is prepared before fork: between fork and exec only
  // async-signal-safe calls are allowed in a multi-threaded parent.
  std::vector<char*> argv;
  for (const auto& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_storage = spec.env ? *spec.env : current_environment();
  std::vector<char*> envp;
  for (const auto& entry : env_storage) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0 ||
      ::pipe2(in_pipe, O_CLOEXEC) != 0)
    return make_error("process", "pipe2 failed: {}", std::strerror(errno));

  const auto start = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) return make_error("process", "fork failed: {}", std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in_pipe[0], 0);
    ::dup2(out_pipe[1], 1);
    ::dup2(err_pipe[1], 2);
    if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) _exit(126);
    ::execve(program->c_str(), argv.data(), envp.data());
    _exit(127);
  }
  ::setpgid(pid, pid);  // also in the parent, so the group exists before we might kill it
  if (spec.on_start) spec.on_start(pid);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  ::close(in_pipe[0]);

  // Feed stdin (small payloads; ignore EPIPE if the child does not read it).
  {
    struct sigaction ignore {
    }, previous{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ignore, &previous);
    std::size_t written = 0;
    while (written < spec.stdin_data.size()) {
      ssize_t n =
          ::write(in_pipe[1], spec.stdin_data.data() + written, spec.stdin_data.size() - written);
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    ::sigaction(SIGPIPE, &previous, nullptr);
    ::close(in_pipe[1]);
  }

  ProcessResult result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  bool open[2] = {true, true};
  bool exited = false;
  int wait_status = 0;
  char buffer[65536];
  const bool has_deadline = spec.timeout.count() > 0;
  const auto deadline = start + spec.timeout;

  while (open[0] || open[1] || !exited) {
    // Ctrl-C reaches only our process group; the child's (nvcc and its cicc, ptxas) is ended
    // here, at most one poll period (50 ms) later.
    if (interrupted()) {
      ::kill(-pid, SIGKILL);
      result.interrupted = true;
      break;
    }
    int timeout_ms = 50;
    if (has_deadline) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) {
        ::kill(-pid, SIGKILL);
        result.timed_out = true;
        break;
      }
      if (left < timeout_ms) timeout_ms = static_cast<int>(left);
    }
    if (open[0] || open[1]) {
      pollfd active[2];
      int map[2];
      int count = 0;
      for (int i = 0; i < 2; ++i)
        if (open[i]) {
          active[count] = fds[i];
          map[count++] = i;
        }
      int ready = ::poll(active, static_cast<nfds_t>(count), timeout_ms);
      if (ready > 0) {
        for (int k = 0; k < count; ++k) {
          if (!(active[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          const int i = map[k];
          ssize_t n = ::read(fds[i].fd, buffer, sizeof(buffer));
          if (n > 0) {
            if (i == 0)
              append_capped(result.stdout_text, result.stdout_dropped_bytes, buffer, n,
                            spec.output_cap_bytes);
            else
              append_capped(result.stderr_text, result.stderr_dropped_bytes, buffer, n,
                            spec.output_cap_bytes);
          } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
            open[i] = false;
          }
        }
      }
    } else {
      ::usleep(static_cast<useconds_t>(timeout_ms) * 200);
    }
    if (!exited) {
      pid_t done = ::waitpid(pid, &wait_status, WNOHANG);
      if (done == pid) {
        exited = true;
        // Descendants that outlive the child would keep our pipes open forever: end the group.
        ::kill(-pid, SIGKILL);
      }
    }
  }
  if (!exited) ::waitpid(pid, &wait_status, 0);
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  result.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!result.timed_out && !result.interrupted) {
    if (WIFSIGNALED(wait_status)) {
      result.term_signal = WTERMSIG(wait_status);
    } else if (WIFEXITED(wait_status)) {
      result.exit_code = WEXITSTATUS(wait_status);
      if (result.exit_code == 127 && result.stderr_text.empty())
        result.stderr_text = "exec failed for " + *program;
    }
  }
  return result;
}

}  // namespace ptxb
