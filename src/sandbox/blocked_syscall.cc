#include "sandbox/blocked_syscall.h"

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>

#include "sandbox/seccomp_filter.h"

namespace ptxb {
namespace {

void on_sigsys(int, siginfo_t* info, void*) {
  // Only async-signal-safe calls: format the number by hand, one write(2).
  char line[96];
  std::size_t n = 0;
  for (char c : kBlockedSyscallLine) line[n++] = c;
  long number = info != nullptr ? info->si_syscall : -1;
  char digits[24];
  int count = 0;
  if (number < 0) {
    line[n++] = '-';
    number = -number;
  }
  do {
    digits[count++] = static_cast<char>('0' + number % 10);
    number /= 10;
  } while (number > 0 && count < 20);
  while (count > 0) line[n++] = digits[--count];
  line[n++] = '\n';
  ssize_t ignored = ::write(STDERR_FILENO, line, n);
  (void)ignored;
  // Die of SIGSYS, as without a handler: default action, re-raised (it is blocked while we run,
  // so it is delivered on return).
  struct sigaction restore {};
  restore.sa_handler = SIG_DFL;
  ::sigaction(SIGSYS, &restore, nullptr);
  ::syscall(SYS_tgkill, ::getpid(), ::syscall(SYS_gettid), SIGSYS);
}

}  // namespace

void install_blocked_syscall_reporter() {
  struct sigaction action {};
  action.sa_sigaction = on_sigsys;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGSYS, &action, nullptr);
}

std::optional<long> blocked_syscall_in_log(std::string_view log) {
  const auto at = log.rfind(kBlockedSyscallLine);
  if (at == std::string_view::npos) return std::nullopt;
  std::size_t i = at + kBlockedSyscallLine.size();
  const bool negative = i < log.size() && log[i] == '-';
  if (negative) ++i;
  long value = 0;
  std::size_t digits = 0;
  for (; i < log.size() && log[i] >= '0' && log[i] <= '9' && digits < 12; ++i, ++digits)
    value = value * 10 + (log[i] - '0');
  if (digits == 0) return std::nullopt;
  return negative ? -value : value;
}

std::string sandbox_seccomp_reason(std::string_view log) {
  const auto number = blocked_syscall_in_log(log);
  if (!number) return std::string(kSandboxSeccompReason);
  return std::string(kSandboxSeccompReason) + ":" + syscall_name(*number);
}

}  // namespace ptxb
