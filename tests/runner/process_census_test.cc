// The runner's leftover check reads /proc (runner/process_census.h): real threads and a real
// child of this test process, and a fake task directory for the census rule.
#include "runner/process_census.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace ptxb {
namespace {

bool has_id(const std::vector<TaskEntry>& tasks, std::int64_t id) {
  for (const auto& t : tasks)
    if (t.id == id) return true;
  return false;
}

TEST(ProcessCensus, ListsTheCallingThreadAlive) {
  auto threads = list_threads();
  ASSERT_FALSE(threads.empty());
  ASSERT_TRUE(has_id(threads, ::gettid()));
  for (const auto& t : threads)
    if (t.id == ::gettid()) EXPECT_TRUE(t.alive()) << t.state;
}

TEST(ProcessCensus, ReadsStartTimeAndStateFromStat) {
  for (const auto& t : list_threads()) {
    EXPECT_GT(t.start_ticks, 0u) << t.id;  // field 22 parsed
    EXPECT_TRUE(t.alive()) << t.state;
  }
}

TEST(ThreadCensus, ANewThreadIsUntrustedUntilItIsJoined) {
  ThreadCensus census;
  census.seal(list_threads());
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> tid{0};
  std::thread worker([&] {
    tid = ::gettid();
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (tid == 0) std::this_thread::yield();
  auto fresh = census.untrusted_alive(list_threads());
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].id, tid.load());
  stop = true;
  worker.join();
  EXPECT_TRUE(census.untrusted_alive(list_threads()).empty());
}

TEST(ThreadCensus, ARenamedThreadIsStillUntrusted) {
  ThreadCensus census;
  census.seal(list_threads());
  std::atomic<bool> stop{false};
  std::atomic<bool> renamed{false};
  std::thread worker([&] {
    ::pthread_setname_np(::pthread_self(), "cuda-EvtHandlr");  // a driver thread's name
    renamed = true;
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (!renamed) std::this_thread::yield();
  auto fresh = census.untrusted_alive(list_threads());
  stop = true;
  worker.join();
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].name, "cuda-EvtHandlr");
}

// A fake /proc/<pid>/task tree: <tid>/stat lines as the kernel writes them.
class FakeTaskDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "census-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void task(std::int64_t tid, const std::string& comm, char state, std::uint64_t start) {
    const std::string path = dir_ + "/" + std::to_string(tid);
    std::filesystem::create_directories(path);
    std::ofstream(path + "/stat") << tid << " (" << comm << ") " << state
                                  << " 1 1 1 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 9 0 " << start
                                  << " 123456 789 18446744073709551615\n";
  }
  void gone(std::int64_t tid) { std::filesystem::remove_all(dir_ + "/" + std::to_string(tid)); }
  std::string dir_;
};

TEST_F(FakeTaskDir, ParsesCommWithSpacesAndParenthesesAndStartTime) {
  task(7, "a (b) c", 'S', 4242);
  auto threads = list_threads_in(dir_);
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(threads[0].name, "a (b) c");
  EXPECT_EQ(threads[0].state, 'S');
  EXPECT_EQ(threads[0].start_ticks, 4242u);
}

TEST_F(FakeTaskDir, OnlyThreadsAliveAtTheSealAreTrustedWhateverTheirNames) {
  task(100, "ptxbench-runner", 'S', 10);
  task(101, "cuda-EvtHandlr", 'S', 11);
  task(102, "cuda00001400006", 'S', 12);  // the host-function worker, pre-created
  ThreadCensus census;
  EXPECT_TRUE(census.untrusted_alive(list_threads_in(dir_)).size() == 3u);  // before the seal
  census.seal(list_threads_in(dir_));
  ASSERT_TRUE(census.sealed());
  EXPECT_TRUE(census.untrusted_alive(list_threads_in(dir_)).empty());
  task(200, "cuda-evt", 'S', 50);  // the candidate's, named like the driver's
  task(201, "worker", 'Z', 51);    // a zombie never counts
  task(202, "ptxbench-runner", 'R', 52);
  auto left = census.untrusted_alive(list_threads_in(dir_));
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].id, 200);
  EXPECT_EQ(left[1].id, 202);
  census.seal({});  // a second seal changes nothing
  EXPECT_EQ(census.untrusted_alive(list_threads_in(dir_)).size(), 2u);
}

TEST_F(FakeTaskDir, AReusedThreadIdIsNotTrusted) {
  task(101, "cuda-EvtHandlr", 'S', 11);
  ThreadCensus census;
  census.seal(list_threads_in(dir_));
  gone(101);
  task(101, "cuda-EvtHandlr", 'S', 90);  // same tid, later start: another thread
  ASSERT_EQ(census.untrusted_alive(list_threads_in(dir_)).size(), 1u);
}

TEST(ProcessCensus, ChildProcessIsListedAndItsZombieIsNotAlive) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  auto children = list_children();
  ASSERT_TRUE(has_id(children, child));
  for (const auto& c : children)
    if (c.id == child) EXPECT_TRUE(c.alive()) << c.state;
  ::kill(child, SIGKILL);
  // Until reaped the child is a zombie: listed, not alive.
  for (int i = 0; i < 200; ++i) {
    bool zombie = false;
    for (const auto& c : list_children())
      if (c.id == child && !c.alive()) zombie = true;
    if (zombie) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  for (const auto& c : list_children())
    if (c.id == child) EXPECT_FALSE(c.alive()) << c.state;
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_FALSE(has_id(list_children(), child));
}

}  // namespace
}  // namespace ptxb
