// The runner's leftover check reads /proc (runner/process_census.h): real threads and a real
// child of this test process.
#include "runner/process_census.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
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

TEST(ProcessCensus, ANewThreadIsSeenUntilItIsJoined) {
  const auto before = list_threads();
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> tid{0};
  std::thread worker([&] {
    tid = ::gettid();
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  while (tid == 0) std::this_thread::yield();
  auto fresh = new_live_tasks(before, list_threads(), /*exempt_driver_threads=*/true);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].id, tid.load());
  stop = true;
  worker.join();
  EXPECT_TRUE(new_live_tasks(before, list_threads(), true).empty());
}

TEST(ProcessCensus, DriverThreadsAreExemptByName) {
  std::vector<TaskEntry> before;
  std::vector<TaskEntry> after = {{10, "cuda-EvtHandlr", 'S'},
                                  {11, "cuda00001400006", 'S'},
                                  {12, "ptxbench-runne", 'S'},
                                  {13, "worker", 'Z'}};
  auto fresh = new_live_tasks(before, after, true);
  ASSERT_EQ(fresh.size(), 1u);
  EXPECT_EQ(fresh[0].id, 12);
  EXPECT_EQ(new_live_tasks(before, after, false).size(), 3u);  // zombies never count
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
