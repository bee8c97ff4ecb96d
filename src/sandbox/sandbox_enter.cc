#include "sandbox/sandbox_enter.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "core/fs.h"
#include "core/process.h"
#include "core/strings.h"
#include "sandbox/process_cgroup.h"
#include "sandbox/seccomp_filter.h"

namespace ptxb {
namespace {

// mount_setattr(2) (Linux 5.12): glibc 2.36's <sys/mount.h> and <linux/mount.h> cannot both be
// included, so the few names needed are spelled here.
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
constexpr unsigned kAtRecursive = 0x8000;          // AT_RECURSIVE
constexpr std::uint64_t kMountAttrReadOnly = 0x1;  // MOUNT_ATTR_RDONLY
struct MountAttr {
  std::uint64_t attr_set;
  std::uint64_t attr_clr;
  std::uint64_t propagation;
  std::uint64_t userns_fd;
};

Error errno_error(const std::string& step) {
  return make_error("sandbox", "{}: {}", step, std::strerror(errno));
}

#define PTXB_SANDBOX_CHECK(call, step)         \
  do {                                         \
    if ((call) != 0) return errno_error(step); \
  } while (0)

Status set_read_only(const char* path, bool recursive, bool read_only) {
  MountAttr attr{};
  (read_only ? attr.attr_set : attr.attr_clr) = kMountAttrReadOnly;
  if (::syscall(SYS_mount_setattr, AT_FDCWD, path, recursive ? kAtRecursive : 0u, &attr,
                sizeof attr) != 0)
    return errno_error(fmt::format("mount_setattr {} {}{}", path,
                                   read_only ? "read-only" : "writable",
                                   errno == ENOSYS ? " (needs Linux 5.12 or later)" : ""));
  return ok_status();
}

Status mount_tmpfs(const std::string& path, std::uint64_t bytes, const char* mode, uid_t uid,
                   gid_t gid) {
  const std::string options = fmt::format("size={},mode={},uid={},gid={}", bytes, mode, uid, gid);
  if (::mount("tmpfs", path.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0)
    return errno_error("mount tmpfs on " + path);
  return ok_status();
}

// The network namespace starts with `lo` down; profilers connect to their target over it.
Status loopback_up() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_error("socket for lo");
  ifreq request{};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  int rc = ::ioctl(fd, SIOCGIFFLAGS, &request);
  if (rc == 0) {
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP | IFF_RUNNING);
    rc = ::ioctl(fd, SIOCSIFFLAGS, &request);
  }
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (rc != 0) return errno_error("bring lo up");
  return ok_status();
}

int last_capability() {
  auto text = read_proc_file("/proc/sys/kernel/cap_last_cap", 64);
  if (!text.ok()) return 63;
  return std::atoi(text->c_str());
}

// Empties the bounding set (needs CAP_SETPCAP: before the uid changes, or inside our own user
// namespace) so that no later execve can gain a capability back.
Status drop_bounding_set() {
  const int last = last_capability();
  for (int cap = 0; cap <= last; ++cap)
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      return errno_error(fmt::format("drop capability {} from the bounding set", cap));
  return ok_status();
}

// Empties the effective, permitted, inheritable and ambient sets, and checks that they are.
Status clear_capabilities() {
  PTXB_SANDBOX_CHECK(::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0),
                     "clear ambient capabilities");
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
  PTXB_SANDBOX_CHECK(::syscall(SYS_capset, &header, data), "capset (clear all)");
  // Verify rather than trust: any capability left is a setup failure.
  PTXB_SANDBOX_CHECK(::syscall(SYS_capget, &header, data), "capget");
  for (const auto& d : data)
    if (d.effective != 0 || d.permitted != 0 || d.inheritable != 0)
      return make_error("sandbox", "capabilities remain after dropping them");
  return ok_status();
}

Status set_limit(int resource, rlim_t soft, rlim_t hard, const char* name) {
  const rlimit limit{soft, hard};
  if (::setrlimit(resource, &limit) != 0) return errno_error(std::string("setrlimit ") + name);
  return ok_status();
}

// Closes every descriptor that is not in `keep` (close_range over the gaps).
Status close_other_descriptors(std::vector<int> keep) {
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  unsigned next = 0;
  auto close_gap = [](unsigned first, unsigned last) -> Status {
    if (first > last) return ok_status();
    if (::syscall(SYS_close_range, first, last, 0) == 0) return ok_status();
    if (errno != ENOSYS) return errno_error("close_range");
    const long max_fd = std::min<long>(::sysconf(_SC_OPEN_MAX), 1 << 20);
    for (long fd = first; fd <= std::min<long>(last, max_fd); ++fd) ::close(static_cast<int>(fd));
    return ok_status();
  };
  for (int fd : keep) {
    if (static_cast<unsigned>(fd) > next) PTXB_RETURN_IF_ERROR(close_gap(next, fd - 1));
    // A kept descriptor must survive the exec.
    const int flags = ::fcntl(fd, F_GETFD);
    if (flags < 0) return errno_error(fmt::format("descriptor {} to keep is not open", fd));
    if (::fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) != 0) return errno_error("fcntl F_SETFD");
    next = static_cast<unsigned>(fd) + 1;
  }
  return close_gap(next, ~0u);
}

// mkdir -p below `root` (inside the view being built). EEXIST is fine: the path may already be
// visible through an earlier bind, which is read-only by then, so nothing is created on the host.
Status make_view_directories(const std::string& root, const std::string& path) {
  std::string at = root;
  for (const auto& part : split(path, '/')) {
    if (part.empty()) continue;
    at += "/" + part;
    if (::mkdir(at.c_str(), 0755) != 0 && errno != EEXIST) return errno_error("view: mkdir " + at);
  }
  return ok_status();
}

bool covered_by(const std::string& path, const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs)
    if (path == dir || starts_with(path, dir == "/" ? dir : dir + "/")) return true;
  return false;
}

// The compile view (SandboxPolicy::view): a fresh tmpfs root holding only the allowed host paths,
// then pivot_root into it. Host paths are opened (O_PATH) before anything is mounted, so a view
// root mounted over /tmp cannot hide a staging dir that lives under the host's /tmp.
Status build_view(const SandboxPolicy& policy, uid_t uid, gid_t gid) {
  struct Entry {
    std::string path;
    std::string link;  // non-empty: recreate as this symlink
    int fd = -1;
    bool directory = false;
    bool writable = false;
  };
  std::vector<Entry> entries;
  auto add = [&](const std::string& path, bool writable) -> Status {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return ok_status();  // not on this host: skip
    Entry entry{path, "", -1, S_ISDIR(info.st_mode), writable};
    if (S_ISLNK(info.st_mode) && !writable) {
      char target[4096];
      const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
      if (n < 0) return errno_error("view: readlink " + path);
      entry.link.assign(target, static_cast<std::size_t>(n));
    } else {
      entry.fd = ::open(path.c_str(), O_PATH | O_CLOEXEC);
      if (entry.fd < 0) return errno_error("view: open " + path);
      if (::fstat(entry.fd, &info) != 0) return errno_error("view: stat " + path);
      entry.directory = S_ISDIR(info.st_mode);
    }
    entries.push_back(std::move(entry));
    return ok_status();
  };
  for (const auto& path : policy.view_read_only) PTXB_RETURN_IF_ERROR(add(path, false));
  // The devices compilers open; /dev/zero, /dev/full, ttys and the GPU's are absent on purpose.
  for (const char* device : {"/dev/null", "/dev/urandom", "/dev/random"})
    PTXB_RETURN_IF_ERROR(add(device, false));
  PTXB_RETURN_IF_ERROR(add(policy.scratch_dir, true));
  // Parents before children; a path already inside a bound directory is visible through it.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.path.size() < b.path.size(); });

  const std::string root = "/tmp";
  if (!is_directory(root)) return make_error("sandbox", "view: no /tmp to build the view on");
  PTXB_RETURN_IF_ERROR(mount_tmpfs(root, 16ull << 20, "0755", 0, 0));
  // The private /tmp first: a scratch dir under the host's /tmp is then bound on top of it.
  PTXB_RETURN_IF_ERROR(make_view_directories(root, "/tmp"));
  PTXB_RETURN_IF_ERROR(mount_tmpfs(root + "/tmp", policy.tmp_bytes, "1777", uid, gid));
  std::vector<std::string> bound_dirs;
  for (const auto& entry : entries) {
    if (!entry.writable && covered_by(entry.path, bound_dirs)) continue;
    const std::string target = root + entry.path;
    const auto slash = entry.path.rfind('/');
    PTXB_RETURN_IF_ERROR(make_view_directories(root, entry.path.substr(0, slash)));
    if (!entry.link.empty()) {
      if (::symlink(entry.link.c_str(), target.c_str()) != 0 && errno != EEXIST)
        return errno_error("view: symlink " + target);
      continue;
    }
    if (entry.directory) {
      if (::mkdir(target.c_str(), 0755) != 0 && errno != EEXIST)
        return errno_error("view: mkdir " + target);
    } else {
      const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
      if (fd < 0 && errno != EEXIST && errno != EROFS) return errno_error("view: create " + target);
      if (fd >= 0) ::close(fd);
    }
    const std::string source = fmt::format("/proc/self/fd/{}", entry.fd);
    if (::mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0)
      return errno_error("view: bind " + entry.path);
    ::close(entry.fd);
    // Read-only at once: a later mkdir below it then fails instead of writing to the host.
    PTXB_RETURN_IF_ERROR(set_read_only(target.c_str(), /*recursive=*/true, !entry.writable));
    if (entry.directory) bound_dirs.push_back(entry.path);
  }
  if (policy.view_proc && ::geteuid() == 0) {
    PTXB_RETURN_IF_ERROR(make_view_directories(root, "/proc"));
    if (::mount("proc", (root + "/proc").c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
                "hidepid=invisible,subset=pid") != 0)
      return errno_error("view: mount /proc (hidepid=invisible,subset=pid; Linux 5.8 or later)");
  }

  // Into the view: the old root is stacked on the new one and detached at once.
  PTXB_SANDBOX_CHECK(::chdir(root.c_str()), "view: chdir");
  PTXB_SANDBOX_CHECK(::syscall(SYS_pivot_root, ".", "."), "view: pivot_root");
  PTXB_SANDBOX_CHECK(::umount2(".", MNT_DETACH), "view: detach the old root");
  PTXB_SANDBOX_CHECK(::chdir("/"), "view: chdir /");
  PTXB_RETURN_IF_ERROR(set_read_only("/", /*recursive=*/false, /*read_only=*/true));
  return ok_status();
}

// The runner and profiler profiles: the host's tree, all of it read-only, with tmpfs scratch,
// /tmp and /dev/shm and the hidden libraries covered.
Status mount_host_view(const SandboxPolicy& policy, const std::string& program, uid_t uid,
                       gid_t gid) {
  if (policy.scratch_tmpfs) {
    PTXB_RETURN_IF_ERROR(mount_tmpfs(policy.scratch_dir, policy.scratch_bytes, "0700", uid, gid));
  } else if (::mount(policy.scratch_dir.c_str(), policy.scratch_dir.c_str(), nullptr, MS_BIND,
                     nullptr) != 0) {
    // A scratch on disk (the debug stage's core dumps, read after the sandbox ends) becomes a
    // mount of its own, so that it alone is made writable again below: mount_setattr acts on
    // whole mounts only.
    return errno_error("bind-mount the scratch " + policy.scratch_dir);
  }
  // A private /tmp would hide a scratch directory or a program that lives under the host's.
  const bool private_tmp = policy.private_tmp && is_directory("/tmp") &&
                           !starts_with(canonical_path(policy.scratch_dir), "/tmp/") &&
                           !starts_with(canonical_path(program), "/tmp/");
  if (private_tmp) PTXB_RETURN_IF_ERROR(mount_tmpfs("/tmp", policy.tmp_bytes, "1777", uid, gid));
  const bool have_dev_shm = is_directory("/dev/shm");
  if (policy.private_dev_shm && have_dev_shm)
    PTXB_RETURN_IF_ERROR(mount_tmpfs("/dev/shm", policy.dev_shm_bytes, "1777", uid, gid));
  for (const auto& path : policy.hidden_files) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) continue;  // nothing there to hide
    if (::mount("/dev/null", path.c_str(), nullptr, MS_BIND, nullptr) != 0)
      return errno_error("hide " + path);
  }
  PTXB_RETURN_IF_ERROR(set_read_only("/", /*recursive=*/true, /*read_only=*/true));
  PTXB_RETURN_IF_ERROR(set_read_only(policy.scratch_dir.c_str(), false, false));
  // /proc stays writable: the CUDA driver writes to its own process's files there (with /proc
  // read-only, context creation fails with cudaErrorOperatingSystem; seen on the H200). procfs
  // checks every write itself: an unprivileged uid can write only its own processes' files.
  if (is_directory("/proc/self")) PTXB_RETURN_IF_ERROR(set_read_only("/proc", false, false));
  if (have_dev_shm) PTXB_RETURN_IF_ERROR(set_read_only("/dev/shm", false, false));
  if (private_tmp) PTXB_RETURN_IF_ERROR(set_read_only("/tmp", false, false));
  return ok_status();
}

Status enter(const SandboxPolicy& policy, const std::string& program, SeccompFilter& filter) {
  const bool root = ::geteuid() == 0;
  const uid_t outer_uid = ::getuid();
  const gid_t outer_gid = ::getgid();
  const pid_t parent = ::getppid();
  if (!is_directory(policy.scratch_dir))
    return make_error("sandbox", "scratch directory {} does not exist", policy.scratch_dir);

  // --- cgroup: first, while still privileged; every process this one becomes or starts stays
  // in it (process_cgroup.h) ---
  if (!policy.cgroup_dir.empty()) {
    Status joined = join_cgroup(real_cgroup_fs(), policy.cgroup_dir, ::getpid());
    if (!joined.ok()) return make_error("sandbox", "join cgroup: {}", joined.error().message);
  }

  // --- namespaces ---
  int flags = CLONE_NEWNS;
  if (policy.network_namespace) flags |= CLONE_NEWNET;
  if (policy.ipc_namespace) flags |= CLONE_NEWIPC;
  if (!root) flags |= CLONE_NEWUSER;  // created first: it owns the others
  if (::unshare(flags) != 0)
    return errno_error(fmt::format("unshare({}) (does the kernel allow namespaces here?)",
                                   root ? "mount, network, IPC" : "user, mount, network, IPC"));
  if (!root) {
    // Only ourselves, mapped to ourselves: an unprivileged uid inside and out.
    PTXB_RETURN_IF_ERROR(write_kernel_file("/proc/self/setgroups", "deny", "sandbox"));
    PTXB_RETURN_IF_ERROR(write_kernel_file(
        "/proc/self/uid_map", fmt::format("{} {} 1", outer_uid, outer_uid), "sandbox"));
    PTXB_RETURN_IF_ERROR(write_kernel_file(
        "/proc/self/gid_map", fmt::format("{} {} 1", outer_gid, outer_gid), "sandbox"));
  }
  const uid_t uid = root ? policy.uid : outer_uid;
  const gid_t gid = root ? policy.gid : outer_gid;

  // --- mounts ---
  // Nothing we mount here may propagate back to the host's mount namespace.
  PTXB_SANDBOX_CHECK(::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr),
                     "make mounts private");
  if (policy.view) {
    PTXB_RETURN_IF_ERROR(build_view(policy, uid, gid));
  } else {
    PTXB_RETURN_IF_ERROR(mount_host_view(policy, program, uid, gid));
  }

  if (policy.network_namespace && policy.loopback_up) PTXB_RETURN_IF_ERROR(loopback_up());

  // --- limits (lowering one needs no privilege; they survive the uid change and the exec),
  // then credentials ---
  if (policy.address_space_bytes > 0)
    PTXB_RETURN_IF_ERROR(
        set_limit(RLIMIT_AS, policy.address_space_bytes, policy.address_space_bytes, "AS"));
  PTXB_RETURN_IF_ERROR(set_limit(RLIMIT_CPU, policy.cpu_seconds, policy.cpu_seconds + 5, "CPU"));
  PTXB_RETURN_IF_ERROR(
      set_limit(RLIMIT_FSIZE, policy.file_size_bytes, policy.file_size_bytes, "FSIZE"));
  PTXB_RETURN_IF_ERROR(
      set_limit(RLIMIT_NPROC, policy.max_processes, policy.max_processes, "NPROC"));
  PTXB_RETURN_IF_ERROR(set_limit(RLIMIT_CORE, 0, 0, "CORE"));
  if (root) {
    if (uid == 0) return make_error("sandbox", "the policy's uid is 0; refusing to run as root");
    PTXB_SANDBOX_CHECK(::setgroups(0, nullptr), "setgroups([])");
    PTXB_SANDBOX_CHECK(::setresgid(gid, gid, gid), fmt::format("setresgid({})", gid));
    PTXB_RETURN_IF_ERROR(drop_bounding_set());
    // Leaving uid 0 empties the permitted and effective sets (no SECBIT_KEEP_CAPS).
    PTXB_SANDBOX_CHECK(::setresuid(uid, uid, uid), fmt::format("setresuid({})", uid));
  } else {
    PTXB_RETURN_IF_ERROR(drop_bounding_set());
  }
  PTXB_RETURN_IF_ERROR(clear_capabilities());
  if (::getuid() == 0 || ::geteuid() == 0)
    return make_error("sandbox", "still uid 0 after dropping privileges");

  // --- process attributes, descriptors, working directory ---
  PTXB_SANDBOX_CHECK(::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs");
  // Die with the supervisor; cleared by the uid change, hence set after it.
  PTXB_SANDBOX_CHECK(::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0), "parent-death signal");
  if (::getppid() != parent) return make_error("sandbox", "the parent exited during set-up");
  const std::string& working_dir =
      policy.working_dir.empty() ? policy.scratch_dir : policy.working_dir;
  if (::chdir(working_dir.c_str()) != 0)
    return errno_error(
        fmt::format("chdir {} as uid {} (every directory above it must be "
                    "searchable by others)",
                    working_dir, uid));
  if (::access(program.c_str(), X_OK) != 0)
    return errno_error(
        fmt::format("{} is not executable as uid {} (every directory above it "
                    "must be searchable by others)",
                    program, uid));
  PTXB_RETURN_IF_ERROR(close_other_descriptors(policy.keep_fds));
  PTXB_RETURN_IF_ERROR(filter.load());
  return ok_status();
}

}  // namespace

Error exec_sandboxed(const SandboxPolicy& policy, const std::vector<std::string>& program_argv,
                     const std::vector<std::string>& environment) {
  if (program_argv.empty()) return make_error("sandbox", "no program to run");
  const auto program = find_executable(program_argv.front());
  if (!program) return make_error("sandbox", "{}: executable not found", program_argv.front());
  std::vector<std::string> env = sandbox_environment(policy, environment);
  // The launcher execs in place: this pid is the program's, the only one a runner may signal.
  auto filter = SeccompFilter::build(policy.seccomp, ::getpid(), policy.pinned_fd);
  if (!filter.ok()) return filter.error();

  if (auto entered = enter(policy, *program, *filter); !entered.ok()) return entered.error();

  std::vector<char*> argv;
  for (const auto& arg : program_argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& entry : env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  ::execve(program->c_str(), argv.data(), envp.data());
  return errno_error("execve " + *program);
}

}  // namespace ptxb
