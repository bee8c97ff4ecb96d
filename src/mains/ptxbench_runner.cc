// ptxbench-runner: the process that runs one untrusted candidate (docs/runner.md).
//
//   ptxbench-runner --channel-fd 3
//       Serves the supervisor's requests on fd 3 (a socketpair end): hello, load, bind, call,
//       shutdown. Spawned by the supervisor inside ptxbench-sandbox (docs/integrity.md).
//   ptxbench-runner --channel-fd 3 --no-cupti
//       The same, under Nsight Compute (the profile stage): ncu owns CUPTI in the process.
//   ptxbench-runner --self-contained --so PATH --params-json FILE
//       One call on inputs the runner allocates itself, for ncu and compute-sanitizer.
//
// stdout/stderr are logs only; the runner never prints a verdict. Exit codes: runner_service.h.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "runner/runner_service.h"
#include "runner/self_contained.h"
#include "sandbox/blocked_syscall.h"

namespace {

constexpr const char* kUsage =
    "usage: ptxbench-runner --channel-fd N [--no-cupti]\n"
    "       ptxbench-runner --self-contained --so PATH --params-json FILE\n";

int usage_error(const std::string& why) {
  std::fprintf(stderr, "ptxbench-runner: %s\n%s", why.c_str(), kUsage);
  return ptxb::kRunnerExitUsage;
}

// Leaves without running the candidate's static destructors or atexit handlers: a candidate
// can make those hang or crash, and nothing after the last reply needs them.
[[noreturn]] void finish(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

}  // namespace

int main(int argc, char** argv) {
  // Before any candidate code exists in the process: a call the sandbox's seccomp filter stops
  // is named in the log (the supervisor reports FORBIDDEN sandbox_seccomp:<call>).
  ptxb::install_blocked_syscall_reporter();
  int channel_fd = -1;
  bool self_contained = false;
  bool cupti = true;
  std::string so_path;
  std::string params_json;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      if (i + 1 >= argc) return nullptr;
      (void)flag;
      return argv[++i];
    };
    if (arg == "--channel-fd") {
      const char* text = value("--channel-fd");
      char* end = nullptr;
      long fd = text != nullptr ? std::strtol(text, &end, 10) : -1;
      if (text == nullptr || *end != '\0' || fd < 0 || fd > 1 << 20)
        return usage_error("--channel-fd needs a descriptor number");
      channel_fd = static_cast<int>(fd);
    } else if (arg == "--no-cupti") {
      cupti = false;
    } else if (arg == "--self-contained") {
      self_contained = true;
    } else if (arg == "--so") {
      const char* text = value("--so");
      if (text == nullptr) return usage_error("--so needs a path");
      so_path = text;
    } else if (arg == "--params-json") {
      const char* text = value("--params-json");
      if (text == nullptr) return usage_error("--params-json needs a path");
      params_json = text;
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      return usage_error("unknown argument '" + arg + "'");
    }
  }

  if (self_contained) {
    if (channel_fd >= 0) return usage_error("--self-contained and --channel-fd exclude each other");
    if (so_path.empty() || params_json.empty())
      return usage_error("--self-contained needs --so and --params-json");
    finish(ptxb::run_self_contained(so_path, params_json));
  }
  if (channel_fd < 0) return usage_error("either --channel-fd or --self-contained is required");
  if (::fcntl(channel_fd, F_GETFD) < 0)
    return usage_error("--channel-fd " + std::to_string(channel_fd) + " is not open");
  // Processes the candidate might spawn must not inherit the channel.
  ::fcntl(channel_fd, F_SETFD, FD_CLOEXEC);
  // Not dumpable: another process of the sandbox's uid (a concurrent evaluation's runner) can
  // neither read nor write this one's memory through /proc/PID/mem, nor ptrace it. (execve
  // resets the flag, so the launcher cannot set it for us. The self-contained mode keeps it:
  // ncu and compute-sanitizer, inside the same sandbox, inspect their target.)
  // Under ncu (--no-cupti) the profiler inspects its target like in the self-contained mode.
  if (cupti) ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // A vanished supervisor is an EPIPE from send(), not a silent death by SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
  ptxb::RunnerService service(channel_fd, cupti);
  finish(service.serve());
}
