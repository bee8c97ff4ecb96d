// Runs a child process in the background so a test can kill it at a chosen moment (SIGKILL of
// `ptxbench run` mid-evaluation or mid-model-response), with its output in files.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace ptxb::testing {

// fork + exec with `env` (KEY=VALUE) and stdout/stderr redirected to files. Returns the pid.
inline pid_t spawn_process(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const std::string& stdout_path,
                           const std::string& stderr_path) {
  std::vector<char*> args, envp;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ::dup2(out, 1);
    ::dup2(err, 2);
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

// Polls `condition` every 20 ms until it holds (true) or `timeout` passes (false).
inline bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return condition();
}

// Waits for the child: its exit code, 128 + signal if a signal ended it, or -1 if it was still
// running after `timeout` (it is then killed).
inline int wait_for_exit(pid_t pid, std::chrono::milliseconds timeout) {
  int status = 0;
  const bool done = wait_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, timeout);
  if (!done) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace ptxb::testing
