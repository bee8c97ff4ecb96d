// One cgroup v2 per sandboxed process tree: the kernel's answer to "nothing a candidate starts
// survives" (docs/integrity.md "Sandbox", "Teardown").
//
// A process group can be left (setsid), a parent-death signal is per process, a child subreaper
// only sees what is still a descendant; a cgroup cannot be left by an unprivileged process (moving
// needs write access to cgroup.procs of both groups' common ancestor, and the sandbox's /sys is
// read-only besides). So the supervisor creates one group per runner or profiler, the launcher
// moves itself into it before anything untrusted runs (policy `cgroup_dir`; a failure is a
// setup failure, exit 121), and at the end the supervisor counts what is left in it
// (cgroup.procs), kills all of it at once (cgroup.kill, Linux 5.14; else freeze, SIGKILL each,
// thaw) and removes the group. pids.max bounds the group's tasks where the pids controller can be
// enabled (per process tree, unlike RLIMIT_NPROC, which is one budget for the whole uid).
//
// Where cgroup v2 is not usable (a hybrid hierarchy with cgroup2 only at
// /sys/fs/cgroup/unified, a read-only /sys/fs/cgroup, a non-root supervisor), the mechanism is
// the process group: killed on timeout and after exit, plus the runner's parent-death signal and
// subreaper census. That does not guarantee the end of a process that called setsid() and was
// not seen by the per-call census. Which one is active is recorded in environment.sandbox.
//
// The filesystem is behind CgroupFs so that the logic is tested on a fake tree.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// The few file operations the manager needs; paths are absolute.
class CgroupFs {
 public:
  virtual ~CgroupFs() = default;
  virtual bool exists(const std::string& path) const = 0;
  virtual bool writable(const std::string& path) const = 0;  // access(W_OK)
  virtual Status make_dir(const std::string& path) = 0;
  virtual Status remove_dir(const std::string& path) = 0;
  virtual Result<std::string> read(const std::string& path) const = 0;
  virtual Status write(const std::string& path, const std::string& text) = 0;
  virtual void pause(std::chrono::milliseconds duration) = 0;  // between polls
  virtual Status kill_process(std::int64_t pid) = 0;           // SIGKILL (freeze fallback)
};

// The real filesystem and kill(2).
CgroupFs& real_cgroup_fs();

inline constexpr const char* kCgroupMount = "/sys/fs/cgroup";

struct CgroupSupport {
  bool usable = false;
  std::string base;       // the caller's own cgroup directory; our groups go below it
  bool has_pids = false;  // pids.max can be set on a child (controller enabled for children)
  std::string why_not;    // when !usable: which requirement failed
  // environment.sandbox.teardown: mechanism ("cgroup_v2" or "process_group") and guarantee.
  Json describe() const;
};

// Whether cgroup v2 can be used: `mount` is a cgroup2 root (cgroup.controllers there), the
// caller's group (`self_cgroup`: the text of /proc/self/cgroup, line "0::<path>") is writable.
// Tries to enable the pids controller for the caller's children ("+pids" in its
// cgroup.subtree_control; refused, e.g. EBUSY, when the caller's group holds processes and is
// not the root: then pids.max is not set).
CgroupSupport probe_cgroup_support(CgroupFs& fs, const std::string& mount,
                                   const std::string& self_cgroup);

class ProcessCgroup {
 public:
  // mkdir <support.base>/<name>; pids.max = max_tasks when the controller is available.
  static Result<ProcessCgroup> create(CgroupFs& fs, const CgroupSupport& support,
                                      const std::string& name, std::uint64_t max_tasks);
  const std::string& path() const { return path_; }
  // The pids in the group now (cgroup.procs).
  Result<std::vector<std::int64_t>> processes() const;
  // Kills every process in the group and waits (up to `wait`) until it is empty; returns how
  // many processes were in it when the kill began.
  Result<std::size_t> kill_all(std::chrono::milliseconds wait);
  // rmdir (the group must be empty).
  Status remove();

 private:
  ProcessCgroup(CgroupFs* fs, std::string path, bool has_kill)
      : fs_(fs), path_(std::move(path)), has_kill_(has_kill) {}
  Status kill_frozen(const std::vector<std::int64_t>& pids);

  CgroupFs* fs_;
  std::string path_;
  bool has_kill_;
};

// Freezes (`frozen` true) or thaws the group at `group_dir`: writes cgroup.freeze, then polls
// cgroup.events until its "frozen" line agrees (up to `wait`). Frozen tasks do not run at all, on
// any CPU, until thawed; GPU work they already submitted is not theirs to stop (interleaved
// timing: supervisor/stage_interleave.cc).
Status set_group_frozen(CgroupFs& fs, const std::string& group_dir, bool frozen,
                        std::chrono::milliseconds wait);

// The launcher's side: moves the calling process (`pid`) into `cgroup_dir` (its cgroup.procs).
Status join_cgroup(CgroupFs& fs, const std::string& cgroup_dir, std::int64_t pid);

}  // namespace ptxb
