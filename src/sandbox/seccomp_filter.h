// The sandbox's seccomp filter (libseccomp), and the names of the system calls it blocks.
//
// A deny-list over a default of "allow": the CUDA driver, CUPTI, Nsight Compute and
// compute-sanitizer make thousands of ordinary calls (ioctl, mmap, futex, ...) whose exact set
// changes with every driver; an allow-list would break on the next driver for no gain, since
// the namespaces, the unprivileged uid and the read-only mounts already take away what those
// calls could reach. What the filter adds is the calls that reach *across* the sandbox or into
// the kernel's rarely used surfaces. Two verdicts:
//   trap   — calls only an attack makes (ptrace, mount, unshare, bpf, non-loopback sockets, ...):
//            the call does not run, the process gets SIGSYS, and the runner's handler
//            (sandbox/blocked_syscall.h) names the call in its log before dying, which the
//            supervisor turns into FORBIDDEN `sandbox_seccomp:<call>`.
//   errno  — calls that libraries may probe and handle (perf_event_open, clone3, clock
//            setters): they fail as they would for any unprivileged process.
// Other architectures' system calls (i386 `int 0x80`) kill the process; x32 calls get the same
// rules as x86-64.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "sandbox/sandbox_policy.h"

namespace ptxb {

// One row of the filter, for docs/integrity.md and the trace.
struct SeccompRule {
  std::string syscall;
  std::string verdict;    // "trap", "errno EPERM", ...
  std::string condition;  // "" = always; "domain != AF_UNIX", "pid != self", ...
  std::string why;
};

// The rules of `profile`, in the order they are added; with `pinned_fd` >= 0 (runner profile
// only) also the rules that keep that descriptor in place (SandboxPolicy::pinned_fd).
std::vector<SeccompRule> seccomp_rules(SeccompProfile profile, int pinned_fd = -1);

// A built but not yet loaded filter. Build it before the sandbox drops its privileges (it
// allocates); load() it last, right before execve: it is inherited across fork and exec and
// can never be removed.
class SeccompFilter {
 public:
  // `self_pid`: the pid the sandboxed program will have (the launcher execs in place), the only
  // pid a runner may signal. `pinned_fd`: as in seccomp_rules.
  static Result<SeccompFilter> build(SeccompProfile profile, pid_t self_pid, int pinned_fd = -1);
  SeccompFilter(SeccompFilter&& other) noexcept;
  SeccompFilter& operator=(SeccompFilter&&) = delete;
  SeccompFilter(const SeccompFilter&) = delete;
  ~SeccompFilter();

  // Sets no_new_privs (if not yet set) and installs the filter on the calling thread.
  Status load();

 private:
  explicit SeccompFilter(void* context) : context_(context) {}
  void* context_ = nullptr;  // scmp_filter_ctx
};

// "ptrace" for the native number (or an x32 one), "syscall 999" when unknown.
std::string syscall_name(long number);

}  // namespace ptxb
