// Naming the system call the sandbox's seccomp filter stopped (sandbox/seccomp_filter.h).
//
// A trapped call raises SIGSYS in the process that made it, with the call's number in the
// signal's siginfo. The runner installs this handler first thing (before any candidate code
// exists in the process); it writes one fixed line to stderr, which the supervisor reads from
// the runner's log, and then dies of SIGSYS as if there were no handler. The call itself never
// ran, whatever the handler does: a candidate that replaces the handler only loses the name in
// the report (reason `sandbox_seccomp` without a call), never the block.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ptxb {

// The verdict reason: "sandbox_seccomp:<call>" (supervisor/eval_sandbox.h, docs/integrity.md).
inline constexpr std::string_view kSandboxSeccompReason = "sandbox_seccomp";

// The line's prefix; the call's number follows ("... 101\n").
inline constexpr std::string_view kBlockedSyscallLine = "ptxbench-sandbox: blocked system call ";

// Installs the SIGSYS handler described above (async-signal-safe inside).
void install_blocked_syscall_reporter();

// The number in the last blocked-call line of `log`, if any.
std::optional<long> blocked_syscall_in_log(std::string_view log);

// "sandbox_seccomp:ptrace" (or "sandbox_seccomp" when the log names no call).
std::string sandbox_seccomp_reason(std::string_view log);

}  // namespace ptxb
