// ptxbench_sandbox_probe: what the sandbox tests run inside ptxbench-sandbox
// (tests/sandbox/sandbox_exec_test.cc). One action per run; it prints what happened and exits 0
// when the action itself returned, whatever its outcome (a trapped call ends the process with
// SIGSYS instead, which is what the tests look for).
//
//   report                the sandbox report (JSON)
//   socket FAMILY         socket(FAMILY, SOCK_STREAM or SOCK_DGRAM, 0): "ok" or "errno N"
//   write PATH            create and write PATH: "ok" or "errno N"
//   env                   the environment, one entry a line
//   fds                   the open descriptors, one a line
//   spin                  burn CPU forever (RLIMIT_CPU ends it)
//   forkbomb N            fork up to N children that sleep; prints how many forks succeeded
//   ptrace PID            PTRACE_ATTACH to PID
//   kill PID              kill(PID, SIGTERM)
//   bigfile BYTES         write BYTES to scratch/big (RLIMIT_FSIZE ends it with SIGXFSZ)
//   open PATH             open PATH for reading, read 4 bytes: "ok N" or "errno N"
//   reporter ptrace PID   the runner's SIGSYS reporter installed first, then ptrace
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sandbox/blocked_syscall.h"
#include "sandbox/sandbox_report.h"

extern char** environ;

namespace {

int result(int rc) {
  if (rc < 0) {
    std::printf("errno %d\n", errno);
  } else {
    std::printf("ok\n");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IONBF, 0);
  if (argc < 2) return 2;
  std::string action = argv[1];
  const char* arg = argc >= 3 ? argv[2] : "";
  if (action == "reporter") {
    ptxb::install_blocked_syscall_reporter();
    action = arg;
    arg = argc >= 4 ? argv[3] : "";
  }
  if (action == "report") {
    const char* scratch = std::getenv("TMPDIR");
    std::printf("%s\n", ptxb::sandbox_self_report(scratch ? scratch : "").dump().c_str());
    return 0;
  }
  if (action == "socket") {
    const int family = std::atoi(arg);
    return result(::socket(family, family == AF_UNIX ? SOCK_STREAM : SOCK_DGRAM, 0));
  }
  if (action == "write") {
    const int fd = ::open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return result(fd);
    const ssize_t written = ::write(fd, "probe\n", 6);
    ::close(fd);
    return result(written == 6 ? 0 : -1);
  }
  if (action == "open") {
    const int fd = ::open(arg, O_RDONLY);
    if (fd < 0) return result(fd);
    char buffer[4];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    std::printf("ok %zd\n", n);
    return 0;
  }
  if (action == "env") {
    for (char** e = environ; *e; ++e) std::printf("%s\n", *e);
    return 0;
  }
  if (action == "fds") {
    DIR* dir = ::opendir("/proc/self/fd");
    const int own = dir ? ::dirfd(dir) : -1;
    while (dirent* entry = dir ? ::readdir(dir) : nullptr)
      if (entry->d_name[0] != '.' && std::atoi(entry->d_name) != own)
        std::printf("%s\n", entry->d_name);
    if (dir) ::closedir(dir);
    return 0;
  }
  if (action == "spin") {
    volatile unsigned long x = 0;
    for (;;) x = x + 1;
  }
  if (action == "forkbomb") {
    const int wanted = std::atoi(arg);
    int forked = 0;
    for (int i = 0; i < wanted; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::sleep(5);
        ::_exit(0);
      }
      if (pid < 0) break;
      ++forked;
    }
    // The sleeping children die with the test's process group.
    std::printf("forked %d\n", forked);
    return 0;
  }
  if (action == "ptrace")
    return result(static_cast<int>(::ptrace(PTRACE_ATTACH, std::atoi(arg), 0, 0)));
  if (action == "kill") return result(::kill(std::atoi(arg), SIGTERM));
  if (action == "bigfile") {
    const long long bytes = std::atoll(arg);
    const char* scratch = std::getenv("TMPDIR");
    const std::string path = std::string(scratch ? scratch : ".") + "/big";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return result(fd);
    static char block[1 << 16];
    for (long long done = 0; done < bytes; done += sizeof block)
      if (::write(fd, block, sizeof block) < 0) return result(-1);
    return result(0);
  }
  std::fprintf(stderr, "unknown action %s\n", action.c_str());
  return 2;
}
