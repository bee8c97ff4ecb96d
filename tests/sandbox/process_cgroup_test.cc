// The cgroup teardown (sandbox/process_cgroup.h) against a fake cgroup tree: which mechanism is
// chosen where, how a group is made, limited, killed and removed. No cgroup is touched.
#include "sandbox/process_cgroup.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

namespace ptxb {
namespace {

// A cgroup v2 tree in memory. Writing "1" to cgroup.kill empties cgroup.procs (after
// `kill_delay_polls` polls, like a kernel tearing processes down); a pid written to
// cgroup.procs is added there.
class FakeCgroupFs final : public CgroupFs {
 public:
  std::set<std::string> dirs;
  std::set<std::string> read_only;
  std::map<std::string, std::string> files;
  std::vector<std::pair<std::string, std::string>> writes;
  std::vector<std::int64_t> killed;
  int kill_delay_polls = 0;
  int pauses = 0;
  bool refuse_subtree = false;

  void add_group(const std::string& dir, bool with_kill = true) {
    dirs.insert(dir);
    files[dir + "/cgroup.procs"] = "";
    files[dir + "/cgroup.freeze"] = "0";
    if (with_kill) files[dir + "/cgroup.kill"] = "";
  }
  bool exists(const std::string& path) const override {
    return dirs.count(path) > 0 || files.count(path) > 0;
  }
  bool writable(const std::string& path) const override { return read_only.count(path) == 0; }
  Status make_dir(const std::string& path) override {
    if (dirs.count(path)) return make_error("cgroup", "mkdir {}: File exists", path);
    add_group(path, has_kill_);  // cgroup.kill exists in every group from Linux 5.14 on
    files[path + "/pids.max"] = "max";
    return ok_status();
  }
  Status remove_dir(const std::string& path) override {
    if (!files[path + "/cgroup.procs"].empty())
      return make_error("cgroup", "rmdir {}: Device or resource busy", path);
    dirs.erase(path);
    for (auto it = files.begin(); it != files.end();)
      it = it->first.rfind(path + "/", 0) == 0 ? files.erase(it) : std::next(it);
    return ok_status();
  }
  Result<std::string> read(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return make_error("cgroup", "open {}: No such file", path);
    return it->second;
  }
  Status write(const std::string& path, const std::string& text) override {
    writes.emplace_back(path, text);
    if (!files.count(path) || read_only.count(path))
      return make_error("cgroup", "open {}: Permission denied", path);
    if (ends_with(path, "/cgroup.subtree_control")) {
      if (refuse_subtree) return make_error("cgroup", "write {}: Device or resource busy", path);
      files[path] += " " + text.substr(1);
    } else if (ends_with(path, "/cgroup.procs")) {
      files[path] += text + "\n";
    } else if (ends_with(path, "/cgroup.kill")) {
      pending_kill_ = path.substr(0, path.size() - 12);
      polls_left_ = kill_delay_polls;
      if (polls_left_ == 0) files[pending_kill_ + "/cgroup.procs"] = "";
    } else {
      files[path] = text;
    }
    return ok_status();
  }
  void pause(std::chrono::milliseconds) override {
    ++pauses;
    if (!pending_kill_.empty() && --polls_left_ <= 0) files[pending_kill_ + "/cgroup.procs"] = "";
  }
  Status kill_process(std::int64_t pid) override {
    killed.push_back(pid);
    // The freeze fallback: a killed pid leaves every group once thawed.
    for (auto& [path, text] : files)
      if (ends_with(path, "/cgroup.procs")) text = remove_pid(text, pid);
    return ok_status();
  }
  void set_kernel_has_kill(bool has) { has_kill_ = has; }

 private:
  static bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  }
  static std::string remove_pid(const std::string& text, std::int64_t pid) {
    std::string out;
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start);
      const std::string line = text.substr(start, end - start);
      if (!line.empty() && line != std::to_string(pid)) out += line + "\n";
      if (end == std::string::npos) break;
      start = end + 1;
    }
    return out;
  }
  bool has_kill_ = true;
  std::string pending_kill_;
  int polls_left_ = 0;
};

// The H200's layout: cgroup2 at /sys/fs/cgroup, the supervisor in the root group, pids
// available to children.
FakeCgroupFs h200_tree() {
  FakeCgroupFs fs;
  fs.dirs.insert("/sys/fs/cgroup");
  fs.files["/sys/fs/cgroup/cgroup.controllers"] = "cpuset cpu io memory hugetlb pids";
  fs.files["/sys/fs/cgroup/cgroup.subtree_control"] = "cpu memory";
  fs.files["/sys/fs/cgroup/cgroup.procs"] = "1\n";
  return fs;
}

TEST(CgroupSupport, UsableOnAWritableV2RootAndEnablesPids) {
  FakeCgroupFs fs = h200_tree();
  CgroupSupport support = probe_cgroup_support(fs, "/sys/fs/cgroup", "0::/\n");
  ASSERT_TRUE(support.usable) << support.why_not;
  EXPECT_EQ(support.base, "/sys/fs/cgroup");
  EXPECT_TRUE(support.has_pids);
  EXPECT_NE(fs.files["/sys/fs/cgroup/cgroup.subtree_control"].find("pids"), std::string::npos);
  EXPECT_EQ(support.describe()["mechanism"], "cgroup_v2");
}

TEST(CgroupSupport, NestedCallerGroupIsTheBaseAndARefusedControllerOnlyDropsPidsMax) {
  FakeCgroupFs fs = h200_tree();
  fs.add_group("/sys/fs/cgroup/system.slice/ptxb.service");
  fs.files["/sys/fs/cgroup/system.slice/ptxb.service/cgroup.controllers"] = "pids";
  fs.files["/sys/fs/cgroup/system.slice/ptxb.service/cgroup.subtree_control"] = "";
  fs.refuse_subtree = true;  // EBUSY: the group holds the supervisor itself
  CgroupSupport support =
      probe_cgroup_support(fs, "/sys/fs/cgroup", "0::/system.slice/ptxb.service\n");
  ASSERT_TRUE(support.usable) << support.why_not;
  EXPECT_EQ(support.base, "/sys/fs/cgroup/system.slice/ptxb.service");
  EXPECT_FALSE(support.has_pids);
}

TEST(CgroupSupport, HybridHierarchyFallsBackToTheProcessGroup) {
  // Development and CI machines: cgroup v1 at /sys/fs/cgroup, cgroup2 only at .../unified.
  FakeCgroupFs fs;
  fs.dirs.insert("/sys/fs/cgroup");
  fs.dirs.insert("/sys/fs/cgroup/unified");
  fs.files["/sys/fs/cgroup/unified/cgroup.controllers"] = "";
  CgroupSupport support = probe_cgroup_support(fs, "/sys/fs/cgroup", "12:pids:/\n0::/user.slice\n");
  EXPECT_FALSE(support.usable);
  EXPECT_NE(support.why_not.find("not a cgroup v2 root"), std::string::npos);
  Json described = support.describe();
  EXPECT_EQ(described["mechanism"], "process_group");
  EXPECT_FALSE(described["guarantee"].get<std::string>().empty());
}

TEST(CgroupSupport, ReadOnlyOrV1OnlyFallsBack) {
  FakeCgroupFs fs = h200_tree();
  fs.read_only.insert("/sys/fs/cgroup");
  EXPECT_FALSE(probe_cgroup_support(fs, "/sys/fs/cgroup", "0::/\n").usable);
  FakeCgroupFs v1 = h200_tree();
  EXPECT_FALSE(probe_cgroup_support(v1, "/sys/fs/cgroup", "4:pids:/\n").usable);
}

TEST(ProcessCgroup, CreateLimitsTasksAndTheLauncherJoins) {
  FakeCgroupFs fs = h200_tree();
  CgroupSupport support = probe_cgroup_support(fs, "/sys/fs/cgroup", "0::/\n");
  auto group = ProcessCgroup::create(fs, support, "ptxbench-10-0", 512);
  ASSERT_TRUE(group.ok()) << group.error().message;
  EXPECT_EQ(group->path(), "/sys/fs/cgroup/ptxbench-10-0");
  EXPECT_EQ(fs.files["/sys/fs/cgroup/ptxbench-10-0/pids.max"], "512");
  ASSERT_TRUE(join_cgroup(fs, group->path(), 4242).ok());
  auto pids = group->processes();
  ASSERT_TRUE(pids.ok());
  EXPECT_EQ(*pids, std::vector<std::int64_t>{4242});
  EXPECT_FALSE(ProcessCgroup::create(fs, support, "../escape", 1).ok());
  EXPECT_FALSE(ProcessCgroup::create(fs, support, "ptxbench-10-0", 1).ok());  // exists
  EXPECT_FALSE(ProcessCgroup::create(fs, CgroupSupport{}, "x", 1).ok());      // not usable
}

TEST(ProcessCgroup, KillAllCountsWaitsUntilEmptyAndRemoves) {
  FakeCgroupFs fs = h200_tree();
  fs.kill_delay_polls = 3;  // the kernel takes a few polls to tear the processes down
  CgroupSupport support = probe_cgroup_support(fs, "/sys/fs/cgroup", "0::/\n");
  auto group = ProcessCgroup::create(fs, support, "g", 0);
  ASSERT_TRUE(group.ok());
  fs.files["/sys/fs/cgroup/g/cgroup.procs"] = "100\n101\n";  // a runner and a setsid'd daemon
  EXPECT_FALSE(group->remove().ok());                        // busy while populated
  auto killed = group->kill_all(std::chrono::milliseconds(1000));
  ASSERT_TRUE(killed.ok()) << killed.error().message;
  EXPECT_EQ(*killed, 2u);
  EXPECT_GE(fs.pauses, 3);
  EXPECT_EQ(fs.writes.back().first, "/sys/fs/cgroup/g/cgroup.kill");
  ASSERT_TRUE(group->remove().ok());
  EXPECT_FALSE(fs.exists("/sys/fs/cgroup/g"));
}

TEST(ProcessCgroup, AnEmptyGroupNeedsNoKill) {
  FakeCgroupFs fs = h200_tree();
  CgroupSupport support = probe_cgroup_support(fs, "/sys/fs/cgroup", "0::/\n");
  auto group = ProcessCgroup::create(fs, support, "g", 0);
  ASSERT_TRUE(group.ok());
  const std::size_t writes = fs.writes.size();
  auto killed = group->kill_all(std::chrono::milliseconds(10));
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(*killed, 0u);
  EXPECT_EQ(fs.writes.size(), writes);
}

TEST(ProcessCgroup, WithoutCgroupKillItFreezesKillsEachAndThaws) {
  FakeCgroupFs fs = h200_tree();
  fs.set_kernel_has_kill(false);  // Linux < 5.14
  CgroupSupport support = probe_cgroup_support(fs, "/sys/fs/cgroup", "0::/\n");
  auto group = ProcessCgroup::create(fs, support, "g", 0);
  ASSERT_TRUE(group.ok());
  fs.files["/sys/fs/cgroup/g/cgroup.procs"] = "7\n8\n";
  auto killed = group->kill_all(std::chrono::milliseconds(100));
  ASSERT_TRUE(killed.ok()) << killed.error().message;
  EXPECT_EQ(*killed, 2u);
  EXPECT_EQ(fs.killed, (std::vector<std::int64_t>{7, 8}));
  EXPECT_EQ(fs.files["/sys/fs/cgroup/g/cgroup.freeze"], "0");  // thawed again
  bool froze = false;
  for (const auto& [path, text] : fs.writes)
    if (path == "/sys/fs/cgroup/g/cgroup.freeze" && text == "1") froze = true;
  EXPECT_TRUE(froze);
}

TEST(ProcessCgroup, FreezeWaitsForTheKernelToSayFrozenAndThawsTheSameWay) {
  FakeCgroupFs fs;
  const std::string group = "/sys/fs/cgroup/ptxbench-1-3";
  fs.add_group(group);
  // The kernel reports the new state in cgroup.events; the fake flips it on the first poll.
  fs.files[group + "/cgroup.events"] = "populated 1\nfrozen 0\n";
  EXPECT_FALSE(set_group_frozen(fs, group, true, std::chrono::milliseconds(3)).ok());
  EXPECT_EQ(fs.files[group + "/cgroup.freeze"], "1");
  EXPECT_GE(fs.pauses, 3);  // it polled until the deadline
  fs.files[group + "/cgroup.events"] = "populated 1\nfrozen 1\n";
  EXPECT_TRUE(set_group_frozen(fs, group, true, std::chrono::milliseconds(3)).ok());
  fs.files[group + "/cgroup.events"] = "populated 1\nfrozen 0\n";
  EXPECT_TRUE(set_group_frozen(fs, group, false, std::chrono::milliseconds(3)).ok());
  EXPECT_EQ(fs.files[group + "/cgroup.freeze"], "0");
  // A group without cgroup.events (not cgroup v2) is an error, never a silent "frozen".
  fs.files.erase(group + "/cgroup.events");
  EXPECT_FALSE(set_group_frozen(fs, group, true, std::chrono::milliseconds(3)).ok());
}

TEST(ProcessCgroup, AGroupThatWillNotEmptyIsAnErrorNamingIt) {
  FakeCgroupFs fs = h200_tree();
  fs.kill_delay_polls = 1'000'000;
  CgroupSupport support = probe_cgroup_support(fs, "/sys/fs/cgroup", "0::/\n");
  auto group = ProcessCgroup::create(fs, support, "stuck", 0);
  ASSERT_TRUE(group.ok());
  fs.files["/sys/fs/cgroup/stuck/cgroup.procs"] = "9\n";
  auto killed = group->kill_all(std::chrono::milliseconds(20));
  ASSERT_FALSE(killed.ok());
  EXPECT_NE(killed.error().message.find("/sys/fs/cgroup/stuck"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
