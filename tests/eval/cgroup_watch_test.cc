// The supervisor's count of the candidate runner's processes (supervisor/cgroup_watch.h), over a
// fake session and a fake cgroup file: a process other than the runner in the group after a call
// or a batch becomes a leftover process, whatever the runner itself reported.
#include "supervisor/cgroup_watch.h"

#include <gtest/gtest.h>

#include <map>

#include "supervisor/integrity_checks.h"

namespace ptxb {
namespace {

class ProcsFile final : public CgroupFs {
 public:
  std::map<std::string, std::string> files;
  bool exists(const std::string& path) const override { return files.count(path) > 0; }
  bool writable(const std::string&) const override { return false; }
  Status make_dir(const std::string&) override { return make_error("cgroup", "read-only"); }
  Status remove_dir(const std::string&) override { return make_error("cgroup", "read-only"); }
  Result<std::string> read(const std::string& path) const override {
    auto it = files.find(path);
    if (it == files.end()) return make_error("cgroup", "open {}: No such file", path);
    return it->second;
  }
  Status write(const std::string&, const std::string&) override {
    return make_error("cgroup", "read-only");
  }
  void pause(std::chrono::milliseconds) override {}
  Status kill_process(std::int64_t) override { return make_error("cgroup", "no"); }
};

// Answers every call and batch with a clean reply (the runner saw no child).
class QuietSession final : public RunnerSession {
 public:
  Result<HelloReply> hello(std::chrono::milliseconds) override { return HelloReply{}; }
  Result<LoadReply> load(const LoadRequest&, std::chrono::milliseconds) override {
    return LoadReply{};
  }
  Result<BindReply> bind(const BindRequest&, std::chrono::milliseconds) override {
    return BindReply{};
  }
  Result<CallReply> call(const CallRequest&, std::chrono::milliseconds, CallBracket*) override {
    return CallReply{};
  }
  Result<BatchReply> batch(const BatchRequest&, std::chrono::milliseconds) override {
    return BatchReply{};
  }
  Status shutdown(std::chrono::milliseconds) override { return ok_status(); }
  void kill() override {}
  RunnerExit wait(std::chrono::milliseconds) override { return RunnerExit{}; }
  std::string log() const override { return ""; }
};

constexpr const char* kProcs = "/sys/fs/cgroup/x/ptxbench-1-2/cgroup.procs";

TEST(CgroupWatch, OnlyTheRunnerMayBeInItsGroupAfterACall) {
  ProcsFile fs;
  fs.files[kProcs] = "4242\n";
  CgroupWatchedSession session(std::make_unique<QuietSession>(), fs, kProcs, 4242);
  EXPECT_EQ(session.process_id(), 4242);
  auto clean = session.call(CallRequest{}, std::chrono::milliseconds(1), nullptr);
  ASSERT_TRUE(clean.ok()) << clean.error().message;
  EXPECT_TRUE(clean->leftover_processes.empty());

  // A daemon the runner did not report (double fork + setsid: no longer its child).
  fs.files[kProcs] = "4242\n5000\n";
  fs.files["/proc/5000/comm"] = "kworker-ish\n";
  auto dirty = session.call(CallRequest{}, std::chrono::milliseconds(1), nullptr);
  ASSERT_TRUE(dirty.ok());
  ASSERT_EQ(dirty->leftover_processes.size(), 1u);
  EXPECT_EQ(dirty->leftover_processes[0].id, 5000);
  EXPECT_EQ(dirty->leftover_processes[0].name, "kworker-ish");
  ReplyCheckOptions checks;
  checks.check_leftovers = true;
  auto finding = reply_findings(*dirty, checks);
  ASSERT_TRUE(finding.has_value());
  EXPECT_EQ(finding->reason, "leftover_process");

  // Batches too; a process gone before its name is read keeps its number.
  fs.files[kProcs] = "5001\n4242\n";
  auto batch = session.batch(BatchRequest{}, std::chrono::milliseconds(1));
  ASSERT_TRUE(batch.ok());
  ASSERT_EQ(batch->leftover_processes.size(), 1u);
  EXPECT_EQ(batch->leftover_processes[0].name, "?");
}

TEST(CgroupWatch, AnUnreadableGroupIsTheHarnessesErrorNotTheCandidates) {
  ProcsFile fs;
  CgroupWatchedSession session(std::make_unique<QuietSession>(), fs, kProcs, 4242);
  auto reply = session.call(CallRequest{}, std::chrono::milliseconds(1), nullptr);
  ASSERT_FALSE(reply.ok());
  EXPECT_EQ(reply.error().code, "cgroup");
  fs.files[kProcs] = "4242\nnot-a-pid\n";
  EXPECT_FALSE(session.call(CallRequest{}, std::chrono::milliseconds(1), nullptr).ok());
}

}  // namespace
}  // namespace ptxb
