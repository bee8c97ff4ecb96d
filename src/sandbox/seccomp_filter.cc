#include "sandbox/seccomp_filter.h"

#include <errno.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

namespace ptxb {
namespace {

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

enum class Verdict { kTrap, kErrno };

struct Row {
  const char* syscall;
  Verdict verdict;
  int error;  // for kErrno
  const char* why;
};

// Unconditional rows, both profiles. Each reaches outside the sandbox or into kernel surface a
// GPU kernel's host code never needs.
constexpr Row kAlways[] = {
    {"ptrace", Verdict::kTrap, 0, "tracing another process"},
    {"process_vm_readv", Verdict::kTrap, 0, "reading another process's memory"},
    {"process_vm_writev", Verdict::kTrap, 0, "writing another process's memory"},
    {"kcmp", Verdict::kTrap, 0, "inspecting another process's resources"},
    {"pidfd_getfd", Verdict::kTrap, 0, "stealing another process's descriptors"},
    {"mount", Verdict::kTrap, 0, "changing the filesystem view"},
    {"umount2", Verdict::kTrap, 0, "changing the filesystem view"},
    {"pivot_root", Verdict::kTrap, 0, "changing the filesystem view"},
    {"chroot", Verdict::kTrap, 0, "changing the filesystem view"},
    {"move_mount", Verdict::kTrap, 0, "changing the filesystem view"},
    {"open_tree", Verdict::kTrap, 0, "changing the filesystem view"},
    {"fsopen", Verdict::kTrap, 0, "changing the filesystem view"},
    {"fsconfig", Verdict::kTrap, 0, "changing the filesystem view"},
    {"fsmount", Verdict::kTrap, 0, "changing the filesystem view"},
    {"fspick", Verdict::kTrap, 0, "changing the filesystem view"},
    {"mount_setattr", Verdict::kTrap, 0, "making a read-only mount writable"},
    {"unshare", Verdict::kTrap, 0, "new namespaces (and the capabilities a user namespace grants)"},
    {"setns", Verdict::kTrap, 0, "joining another namespace"},
    {"bpf", Verdict::kTrap, 0, "kernel attack surface"},
    {"userfaultfd", Verdict::kTrap, 0, "kernel exploitation primitive"},
    {"io_uring_setup", Verdict::kTrap, 0, "io_uring operations bypass seccomp"},
    {"io_uring_enter", Verdict::kTrap, 0, "io_uring operations bypass seccomp"},
    {"io_uring_register", Verdict::kTrap, 0, "io_uring operations bypass seccomp"},
    {"add_key", Verdict::kTrap, 0, "kernel keyrings (credentials of other sessions)"},
    {"request_key", Verdict::kTrap, 0, "kernel keyrings (credentials of other sessions)"},
    {"keyctl", Verdict::kTrap, 0, "kernel keyrings (credentials of other sessions)"},
    {"open_by_handle_at", Verdict::kTrap, 0, "opening files by handle, around path checks"},
    {"kexec_load", Verdict::kTrap, 0, "replacing the kernel"},
    {"kexec_file_load", Verdict::kTrap, 0, "replacing the kernel"},
    {"init_module", Verdict::kTrap, 0, "loading kernel modules"},
    {"finit_module", Verdict::kTrap, 0, "loading kernel modules"},
    {"delete_module", Verdict::kTrap, 0, "unloading kernel modules"},
    {"reboot", Verdict::kTrap, 0, "rebooting the machine"},
    {"swapon", Verdict::kTrap, 0, "machine configuration"},
    {"swapoff", Verdict::kTrap, 0, "machine configuration"},
    {"iopl", Verdict::kTrap, 0, "raw I/O ports"},
    {"ioperm", Verdict::kTrap, 0, "raw I/O ports"},
    {"sethostname", Verdict::kTrap, 0, "machine configuration"},
    {"setdomainname", Verdict::kTrap, 0, "machine configuration"},
    {"uselib", Verdict::kTrap, 0, "obsolete library loading"},
    {"acct", Verdict::kErrno, EPERM, "process accounting (needs privileges anyway)"},
    {"quotactl", Verdict::kErrno, EPERM, "disk quotas (needs privileges anyway)"},
    {"settimeofday", Verdict::kErrno, EPERM, "setting the clock (needs privileges anyway)"},
    {"clock_settime", Verdict::kErrno, EPERM, "setting the clock (needs privileges anyway)"},
    {"clock_adjtime", Verdict::kErrno, EPERM, "adjusting the clock; reads fail too"},
    {"adjtimex", Verdict::kErrno, EPERM, "adjusting the clock; reads fail too"},
    {"syslog", Verdict::kErrno, EPERM, "the kernel log"},
    {"perf_event_open", Verdict::kErrno, EACCES,
     "CPU performance counters (as with perf_event_paranoid; GPU counters go through the driver)"},
    // glibc (2.34+) tries clone3 first and falls back to clone on ENOSYS; clone3's flags live
    // in memory seccomp cannot read, clone's in a register the rules below check.
    {"clone3", Verdict::kErrno, ENOSYS, "its namespace flags cannot be inspected; clone is used"},
};

constexpr std::uint64_t kNamespaceFlags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS,
                                             CLONE_NEWIPC, CLONE_NEWUSER,   CLONE_NEWPID,
                                             CLONE_NEWNET, CLONE_NEWTIME};

// System calls that deliver a signal (or a handle to deliver one) to the pid in argument 0.
constexpr const char* kSignalCalls[] = {
    "kill", "tkill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open"};

// Socket families the profiler profile allows (the network namespace holds only loopback):
// Nsight Compute and compute-sanitizer reach their injected target over 127.0.0.1.
constexpr int kProfilerSocketFamilies[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};

std::uint32_t action_of(const Row& row) {
  return row.verdict == Verdict::kTrap ? SCMP_ACT_TRAP : SCMP_ACT_ERRNO(row.error);
}

std::string verdict_text(const Row& row) {
  if (row.verdict == Verdict::kTrap) return "trap";
  return std::string("errno ") + (row.error == EPERM    ? "EPERM"
                                  : row.error == EACCES ? "EACCES"
                                  : row.error == ENOSYS ? "ENOSYS"
                                                        : std::to_string(row.error));
}

Error seccomp_error(const std::string& what, int rc) {
  return make_error("sandbox", "seccomp: {}: {}", what, std::strerror(-rc));
}

}  // namespace

std::vector<SeccompRule> seccomp_rules(SeccompProfile profile, int pinned_fd) {
  std::vector<SeccompRule> rules;
  for (const auto& row : kAlways) rules.push_back({row.syscall, verdict_text(row), "", row.why});
  rules.push_back({"clone", "trap", "flags contain CLONE_NEW*", "new namespaces"});
  if (profile == SeccompProfile::kRunner || profile == SeccompProfile::kCompiler) {
    rules.push_back({"socket", "trap", "domain != AF_UNIX",
                     "no network at all (the namespace has none either)"});
    // Compilers are trusted programs fed untrusted input, and several processes: nvcc and the
    // g++ driver signal the children they start, so signals are not restricted there.
    if (profile == SeccompProfile::kRunner)
      for (const char* call : kSignalCalls)
        rules.push_back({call, "trap", "pid != self", "signalling another process"});
  } else {
    rules.push_back({"socket", "trap", "domain not AF_UNIX/AF_INET/AF_INET6/AF_NETLINK",
                     "raw and packet sockets; IP stays inside the namespace's loopback"});
  }
  if (pinned_fd >= 0) {
    const std::string fd = std::to_string(pinned_fd);
    const char* why = "replacing the runner's channel (a relay between runner and supervisor)";
    rules.push_back({"dup2", "trap", "newfd == " + fd, why});
    rules.push_back({"dup3", "trap", "newfd == " + fd, why});
    rules.push_back({"close", "trap", "fd == " + fd, why});
    rules.push_back({"close_range", "trap", "first <= " + fd + " <= last", why});
  }
  return rules;
}

Result<SeccompFilter> SeccompFilter::build(SeccompProfile profile, pid_t self_pid, int pinned_fd) {
  scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return make_error("sandbox", "seccomp_init failed");
  SeccompFilter filter(ctx);
  // Another architecture's calls (i386 int 0x80) kill outright; x32 gets the same rules.
  int rc = ::seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc != 0) return seccomp_error("bad-arch action", rc);
  rc = ::seccomp_arch_add(ctx, SCMP_ARCH_X32);
  if (rc != 0 && rc != -EEXIST) return seccomp_error("x32 architecture", rc);

  auto add = [&](std::uint32_t action, const char* name, unsigned count,
                 const scmp_arg_cmp* args) -> Status {
    const int nr = ::seccomp_syscall_resolve_name(name);
    // A call this libseccomp does not know cannot be made by name either; nothing to block.
    if (nr == __NR_SCMP_ERROR) return ok_status();
    const int added = ::seccomp_rule_add_array(ctx, action, nr, count, args);
    if (added != 0) return seccomp_error(std::string("rule for ") + name, added);
    return ok_status();
  };
  for (const auto& row : kAlways)
    PTXB_RETURN_IF_ERROR(add(action_of(row), row.syscall, 0, nullptr));
  for (std::uint64_t flag : kNamespaceFlags) {
    const scmp_arg_cmp has_flag = SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag);
    PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "clone", 1, &has_flag));
  }
  if (profile == SeccompProfile::kRunner || profile == SeccompProfile::kCompiler) {
    // Compared on all 64 bits: a pid or family with garbage in the upper half (which the kernel
    // would truncate) is "not equal" and trapped, never let through.
    const scmp_arg_cmp not_unix = SCMP_A0(SCMP_CMP_NE, AF_UNIX);
    PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "socket", 1, &not_unix));
    const scmp_arg_cmp not_self = SCMP_A0(SCMP_CMP_NE, static_cast<std::uint64_t>(self_pid));
    if (profile == SeccompProfile::kRunner)
      for (const char* call : kSignalCalls)
        PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, call, 1, &not_self));
  } else {
    // libseccomp takes one comparison per argument and rule, so "not in the allowed set" is
    // one rule per other family below AF_MAX plus one for everything above.
    for (int family = 0; family < AF_MAX; ++family) {
      bool allowed = false;
      for (int ok : kProfilerSocketFamilies) allowed = allowed || ok == family;
      if (allowed) continue;
      const scmp_arg_cmp is_family = SCMP_A0(SCMP_CMP_EQ, static_cast<std::uint64_t>(family));
      PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "socket", 1, &is_family));
    }
    const scmp_arg_cmp beyond = SCMP_A0(SCMP_CMP_GE, static_cast<std::uint64_t>(AF_MAX));
    PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "socket", 1, &beyond));
  }
  if (pinned_fd >= 0) {
    // Descriptors are ints: the kernel reads the low 32 bits, so compare only those (a value
    // with garbage above them still names the pinned descriptor and is trapped).
    const auto fd = static_cast<std::uint64_t>(pinned_fd);
    const scmp_arg_cmp onto_fd = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, fd);
    PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "dup2", 1, &onto_fd));
    PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "dup3", 1, &onto_fd));
    const scmp_arg_cmp is_fd = SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, fd);
    PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "close", 1, &is_fd));
    // close_range(first, last, flags) takes unsigned ints; 64-bit comparisons on values the
    // kernel truncates could be dodged with high bits, so the range rule looks at them too:
    // any first/last with high bits set is trapped outright.
    const scmp_arg_cmp covers[] = {SCMP_A0(SCMP_CMP_LE, fd), SCMP_A1(SCMP_CMP_GE, fd)};
    PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "close_range", 2, covers));
    const scmp_arg_cmp first_high = SCMP_A0(SCMP_CMP_GT, 0xffffffffull);
    PTXB_RETURN_IF_ERROR(add(SCMP_ACT_TRAP, "close_range", 1, &first_high));
  }
  return filter;
}

SeccompFilter::SeccompFilter(SeccompFilter&& other) noexcept : context_(other.context_) {
  other.context_ = nullptr;
}

SeccompFilter::~SeccompFilter() {
  if (context_ != nullptr) ::seccomp_release(static_cast<scmp_filter_ctx>(context_));
}

Status SeccompFilter::load() {
  const int rc = ::seccomp_load(static_cast<scmp_filter_ctx>(context_));
  if (rc != 0) return seccomp_error("load", rc);
  return ok_status();
}

std::string syscall_name(long number) {
  constexpr long kX32Bit = 0x40000000;
  const std::uint32_t arch = number & kX32Bit ? SCMP_ARCH_X32 : SCMP_ARCH_NATIVE;
  char* name = ::seccomp_syscall_resolve_num_arch(arch, static_cast<int>(number));
  if (name == nullptr) return "syscall " + std::to_string(number);
  std::string out = name;
  std::free(name);
  return out;
}

}  // namespace ptxb
