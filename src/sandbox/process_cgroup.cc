#include "sandbox/process_cgroup.h"

#include "core/fs.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/strings.h"

namespace ptxb {
namespace {

Error errno_error(const std::string& what) {
  return make_error("cgroup", "{}: {}", what, std::strerror(errno));
}

class RealCgroupFs final : public CgroupFs {
 public:
  bool exists(const std::string& path) const override {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
  }
  bool writable(const std::string& path) const override {
    return ::access(path.c_str(), W_OK) == 0;
  }
  Status make_dir(const std::string& path) override {
    if (::mkdir(path.c_str(), 0755) != 0) return errno_error("mkdir " + path);
    return ok_status();
  }
  Status remove_dir(const std::string& path) override {
    if (::rmdir(path.c_str()) != 0) return errno_error("rmdir " + path);
    return ok_status();
  }
  Result<std::string> read(const std::string& path) const override {
    std::ifstream in(path);
    if (!in) return errno_error("open " + path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // One write(2) per value: cgroup files take one value per write and report a refusal there.
  Status write(const std::string& path, const std::string& text) override {
    return write_kernel_file(path, text, "cgroup");
  }

  void pause(std::chrono::milliseconds duration) override { std::this_thread::sleep_for(duration); }
  Status kill_process(std::int64_t pid) override {
    if (::kill(static_cast<pid_t>(pid), SIGKILL) != 0 && errno != ESRCH)
      return errno_error(fmt::format("kill({}, SIGKILL)", pid));
    return ok_status();
  }
};

// How often an emptying group is polled. A killed process leaves the group when the kernel has
// torn it down (GPU processes can take tens of milliseconds to release the device).
constexpr std::chrono::milliseconds kPollInterval{5};

// "0::/some/path" of /proc/self/cgroup: the cgroup v2 line. Empty when absent (v1 only).
std::string unified_path(const std::string& self_cgroup) {
  for (const auto& line : split(self_cgroup, '\n'))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

bool has_word(const std::string& text, const std::string& word) {
  std::istringstream words(text);
  std::string w;
  while (words >> w)
    if (w == word) return true;
  return false;
}

}  // namespace

CgroupFs& real_cgroup_fs() {
  static RealCgroupFs fs;
  return fs;
}

Json CgroupSupport::describe() const {
  if (!usable)
    return Json{{"mechanism", "process_group"},
                {"why", why_not},
                {"guarantee",
                 "the runner's process group is killed on timeout and after exit and the runner "
                 "dies with the supervisor; a process that left the group (setsid) and outlived "
                 "the per-call census is not guaranteed to end"}};
  return Json{{"mechanism", "cgroup_v2"},
              {"base", base},
              {"pids_max", has_pids},
              {"guarantee",
               "every sandboxed process tree runs in its own cgroup, which it cannot leave; at "
               "the end the supervisor counts and kills everything left in it and removes it"}};
}

CgroupSupport probe_cgroup_support(CgroupFs& fs, const std::string& mount,
                                   const std::string& self_cgroup) {
  CgroupSupport support;
  if (!fs.exists(mount + "/cgroup.controllers")) {
    support.why_not = mount + " is not a cgroup v2 root (no cgroup.controllers)";
    return support;
  }
  const std::string relative = unified_path(self_cgroup);
  if (relative.empty() || relative[0] != '/') {
    support.why_not = "no cgroup v2 entry (0::) in /proc/self/cgroup";
    return support;
  }
  support.base = relative == "/" ? mount : mount + relative;
  if (!fs.exists(support.base) || !fs.writable(support.base)) {
    support.why_not = support.base + " is not writable here (not root, or mounted read-only)";
    return support;
  }
  support.usable = true;
  const std::string subtree = support.base + "/cgroup.subtree_control";
  auto enabled = fs.read(subtree);
  if (enabled.ok() && has_word(*enabled, "pids")) {
    support.has_pids = true;
  } else if (enabled.ok()) {
    auto controllers = fs.read(support.base + "/cgroup.controllers");
    support.has_pids =
        controllers.ok() && has_word(*controllers, "pids") && fs.write(subtree, "+pids").ok();
  }
  return support;
}

Result<ProcessCgroup> ProcessCgroup::create(CgroupFs& fs, const CgroupSupport& support,
                                            const std::string& name, std::uint64_t max_tasks) {
  if (!support.usable) return make_error("cgroup", "cgroup v2 not usable: {}", support.why_not);
  if (name.empty() || name.find('/') != std::string::npos || name[0] == '.')
    return make_error("cgroup", "bad cgroup name '{}'", name);
  const std::string path = support.base + "/" + name;
  PTXB_RETURN_IF_ERROR(fs.make_dir(path));
  ProcessCgroup group(&fs, path, fs.exists(path + "/cgroup.kill"));
  if (support.has_pids && max_tasks > 0) {
    Status limited = fs.write(path + "/pids.max", std::to_string(max_tasks));
    if (!limited.ok()) {
      (void)fs.remove_dir(path);
      return limited.error();
    }
  }
  return group;
}

Result<std::vector<std::int64_t>> ProcessCgroup::processes() const {
  PTXB_ASSIGN_OR_RETURN(std::string text, fs_->read(path_ + "/cgroup.procs"));
  std::vector<std::int64_t> pids;
  std::istringstream in(text);
  std::int64_t pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

Status ProcessCgroup::kill_frozen(const std::vector<std::int64_t>& pids) {
  // Without cgroup.kill: a frozen group cannot fork between our reading and our killing; SIGKILL
  // is delivered to frozen tasks, and thawing lets them die.
  PTXB_RETURN_IF_ERROR(fs_->write(path_ + "/cgroup.freeze", "1"));
  for (std::int64_t pid : pids) PTXB_RETURN_IF_ERROR(fs_->kill_process(pid));
  PTXB_ASSIGN_OR_RETURN(std::vector<std::int64_t> late, processes());  // forked before the freeze
  for (std::int64_t pid : late) PTXB_RETURN_IF_ERROR(fs_->kill_process(pid));
  return fs_->write(path_ + "/cgroup.freeze", "0");
}

Result<std::size_t> ProcessCgroup::kill_all(std::chrono::milliseconds wait) {
  PTXB_ASSIGN_OR_RETURN(std::vector<std::int64_t> pids, processes());
  if (pids.empty()) return std::size_t{0};
  if (has_kill_) {
    PTXB_RETURN_IF_ERROR(fs_->write(path_ + "/cgroup.kill", "1"));
  } else {
    PTXB_RETURN_IF_ERROR(kill_frozen(pids));
  }
  for (auto waited = std::chrono::milliseconds(0);; waited += kPollInterval) {
    PTXB_ASSIGN_OR_RETURN(std::vector<std::int64_t> left, processes());
    if (left.empty()) break;
    if (waited >= wait)
      return make_error("cgroup", "{}: {} process(es) still there {} ms after the kill", path_,
                        left.size(), wait.count());
    fs_->pause(kPollInterval);
  }
  return pids.size();
}

Status ProcessCgroup::remove() {
  return fs_->remove_dir(path_);
}

Status set_group_frozen(CgroupFs& fs, const std::string& group_dir, bool frozen,
                        std::chrono::milliseconds wait) {
  PTXB_RETURN_IF_ERROR(fs.write(group_dir + "/cgroup.freeze", frozen ? "1" : "0"));
  const std::string want = frozen ? "frozen 1" : "frozen 0";
  for (auto waited = std::chrono::milliseconds(0);; waited += std::chrono::milliseconds(1)) {
    PTXB_ASSIGN_OR_RETURN(std::string events, fs.read(group_dir + "/cgroup.events"));
    if (events.find(want) != std::string::npos) return ok_status();
    if (waited >= wait)
      return make_error("cgroup", "{}: not {} {} ms after the request", group_dir,
                        frozen ? "frozen" : "thawed", wait.count());
    fs.pause(std::chrono::milliseconds(1));
  }
}

Status join_cgroup(CgroupFs& fs, const std::string& cgroup_dir, std::int64_t pid) {
  return fs.write(cgroup_dir + "/cgroup.procs", std::to_string(pid));
}

}  // namespace ptxb
