// What the sandbox of an untrusted process allows (design.md §3.3, docs/integrity.md "Sandbox").
//
// A SandboxPolicy is plain data: the trusted supervisor builds one per process it starts (the
// candidate's runner, the reference runner, a profiler over the runner), and the tiny trusted
// launcher `ptxbench-sandbox --policy-json JSON -- PROGRAM ARGS...` applies it to itself and
// then execs PROGRAM (sandbox/sandbox_enter.h). Profilers are wrapped from outside —
// `ptxbench-sandbox ... -- ncu ... ptxbench-runner --self-contained ...` — so ncu and
// compute-sanitizer run inside the same sandbox as the process they inject into, over the
// namespace's own loopback.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// Exit code of ptxbench-sandbox when it could not set the sandbox up (a line on stderr says
// which step and why). Nothing of the sandboxed program ran.
inline constexpr int kSandboxExitSetupFailed = 121;
// The prefix of that line; a test of both tells a setup failure from a program exiting 121.
inline constexpr const char* kSandboxSetupErrorPrefix = "ptxbench-sandbox: setup failed: ";

// Which seccomp rule set applies (sandbox/seccomp_filter.h has the table).
enum class SeccompProfile {
  kRunner,    // the runner alone: sockets only AF_UNIX, signals only to itself
  kProfiler,  // ncu / compute-sanitizer + the runner they start: also AF_INET/AF_INET6/
              // AF_NETLINK (the namespace has loopback only) and signals among themselves
  kCompiler,  // nvcc and the tools it runs (cicc, ptxas, g++, as, ld), cuobjdump: sockets only
              // AF_UNIX; signals among themselves (nvcc and the g++ driver stop their children)
};

struct SandboxPolicy {
  // The only writable directory: an empty directory the caller created. A private tmpfs of
  // `scratch_bytes` is mounted on it (gone when the sandbox exits; nothing reaches the host
  // disk), and HOME, TMPDIR and CUDA_CACHE_PATH point at it.
  std::string scratch_dir;
  std::uint64_t scratch_bytes = 512ull << 20;
  // false: no tmpfs on scratch_dir; the directory itself (the compile stage's staging dir, whose
  // files must outlive the sandbox) is the writable place. Its size is bounded by file_size_bytes
  // per file only.
  bool scratch_tmpfs = true;
  // Where the program starts ("" = scratch_dir); must be scratch_dir or below it.
  std::string working_dir;
  // The compile view (docs/integrity.md "Compile stage"): instead of the host's tree made
  // read-only, a fresh tmpfs root that holds only `view_read_only` (bind-mounted read-only, at
  // the same paths; a path that is a symlink on the host is recreated as the same symlink),
  // /dev/null and /dev/urandom, a private /tmp and the scratch dir (writable). No /proc, no
  // /sys (see view_proc), no /home, nothing else of
  // the host. The process is chrooted into it (pivot_root).
  bool view = false;
  std::vector<std::string> view_read_only;
  // A /proc in the view that shows only the sandbox uid's processes (hidepid=invisible) and
  // nothing but them (subset=pid): cuobjdump finds nvdisasm through /proc/self/exe. Needs root
  // (without a PID namespace a user namespace may not mount procfs); skipped otherwise.
  bool view_proc = false;
  // Credentials. As root: setgroups([]) + setresgid/setresuid to these, which also empties the
  // capability sets; the bounding set is dropped first. As another user: a user namespace
  // mapping only that user to itself, whose capabilities are dropped after the set-up.
  std::uint32_t uid = 65534;  // nobody
  std::uint32_t gid = 65534;  // nogroup
  // Namespaces. No PID namespace: legacy CUDA IPC handles (cudaIpcOpenMemHandle) cannot be
  // opened across PID namespaces (docs/integrity.md). The network namespace has only `lo`.
  bool network_namespace = true;
  bool loopback_up = true;  // profilers talk to their injected target over loopback
  bool ipc_namespace = true;
  // /tmp: a private, size-capped tmpfs (profilers keep lock and temporary files there), unless
  // the scratch directory or the program lies under /tmp (they would be hidden): then /tmp
  // stays the host's, read-only.
  bool private_tmp = true;
  std::uint64_t tmp_bytes = 256ull << 20;
  // /dev/shm: a private, size-capped tmpfs; or (false) the host's, left writable — for a
  // driver that would need POSIX shared memory with processes outside the sandbox.
  bool private_dev_shm = true;
  std::uint64_t dev_shm_bytes = 64ull << 20;
  // Files made unreadable (an empty file is bind-mounted over each): the cuBLAS/cuDNN/NVRTC/
  // nvJitLink libraries for candidates (design.md §3.3).
  std::vector<std::string> hidden_files;
  SeccompProfile seccomp = SeccompProfile::kRunner;
  // Resource limits (setrlimit). No RLIMIT_AS for CUDA programs: CUDA reserves terabytes of
  // virtual addresses. Compilers reserve little, so the compile profile sets one.
  std::uint64_t address_space_bytes = 0;         // RLIMIT_AS; 0 = unlimited
  std::uint64_t cpu_seconds = 600;               // RLIMIT_CPU soft; hard = soft + 5 (SIGKILL)
  std::uint64_t file_size_bytes = 256ull << 20;  // RLIMIT_FSIZE: SIGXFSZ beyond
  std::uint64_t max_processes = 512;             // RLIMIT_NPROC of the uid (threads count)
  // The cgroup v2 directory the launcher moves itself into before anything else ("" = none):
  // created per process tree by the supervisor, which kills and removes it at the end
  // (sandbox/process_cgroup.h). A failure to join is a setup failure.
  std::string cgroup_dir;
  // Descriptors that survive (0-2 are the stdio the caller set up; the runner's channel is 3).
  std::vector<int> keep_fds = {0, 1, 2};
  // A kept descriptor the program may use but never replace or close (-1 = none; runner profile
  // only): the runner's channel. Its seccomp filter traps dup2/dup3 onto it, close of it and a
  // close_range that covers it, so code loaded into the runner cannot put a relay of its own
  // between the runner and the supervisor (docs/integrity.md "The channel").
  int pinned_fd = -1;
  // Environment: names copied from the launcher's environment when present (a trailing '*'
  // matches a prefix), minus any name that looks like a credential; then `set_env` entries.
  std::vector<std::string> env_allow = default_env_allow();
  std::vector<std::string> set_env;  // KEY=VALUE

  static std::vector<std::string> default_env_allow();

  Json to_json() const;
  static Result<SandboxPolicy> from_json(const Json& json);
};

std::string_view seccomp_profile_name(SeccompProfile profile);

// True for variable names that may hold a secret (KEY, TOKEN, SECRET, PASSWORD, CREDENTIAL,
// PASSWD, AUTH, COOKIE, SESSION, anywhere in the name, any case): never passed, allow-list or
// not.
bool looks_like_credential(std::string_view name);

// The sandboxed program's environment: `environment` (KEY=VALUE entries) filtered by the
// policy's allow-list, then HOME/TMPDIR/CUDA_CACHE_PATH = scratch, then `set_env`.
std::vector<std::string> sandbox_environment(const SandboxPolicy& policy,
                                             const std::vector<std::string>& environment);

// {launcher, "--policy-json", JSON, "--", program_argv...}
std::vector<std::string> sandbox_command(const std::string& launcher_path,
                                         const SandboxPolicy& policy,
                                         const std::vector<std::string>& program_argv);

// Library files a candidate must not be able to load (design.md §3.2/§3.3): every file in
// `dirs` whose name starts with libcublas, libcublasLt, libcudnn, libnvrtc, libnvJitLink,
// libcufft, libcusparse, libcusolver or libcurand. Missing directories are skipped.
std::vector<std::string> forbidden_library_files(const std::vector<std::string>& dirs);

}  // namespace ptxb
