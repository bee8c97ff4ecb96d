// The NFS-safe lock file (core/file_lock.h): exclusion, the holder named in the refusal,
// release, stale locks on this host (dead pid) and from another host (no heartbeat), the
// heartbeat itself, and a release that leaves someone else's lock alone.
#include "core/file_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "core/fs.h"

namespace ptxb {
namespace {

using namespace std::chrono_literals;

class FileLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_temp_directory("ptxb-lock");
    ASSERT_TRUE(dir.ok());
    dir_ = dir.value();
    path_ = dir_ + "/lock";
  }
  void TearDown() override { remove_tree(dir_); }

  void write_lock(const std::string& text) { ASSERT_TRUE(write_file_atomic(path_, text).ok()); }
  std::string lock_text() {
    auto text = read_file(path_, 4096);
    return text.ok() ? text.value() : "<missing>";
  }
  void age_lock(std::chrono::seconds age) {
    struct timespec times[2];
    ::clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= age.count();
    times[1] = times[0];
    ASSERT_EQ(::utimensat(AT_FDCWD, path_.c_str(), times, 0), 0);
  }
  std::string own() { return fmt::format("{}:{}\n", lock_host_name(), ::getpid()); }

  std::string dir_, path_;
};

// A pid that surely names no process: a child that has exited and been reaped.
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

TEST_F(FileLockTest, SecondHolderIsRefusedWithTheFirstNamed) {
  auto first = FileLock::acquire(path_, "job A");
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(lock_text(), own());
  auto second = FileLock::acquire(path_, "job B");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, "locked");
  EXPECT_NE(second.error().message.find(fmt::format("job B: already running (pid {} on host {})",
                                                    ::getpid(), lock_host_name())),
            std::string::npos)
      << second.error().message;
}

TEST_F(FileLockTest, ReleaseRemovesTheFileAndFreesTheLock) {
  {
    auto lock = FileLock::acquire(path_, "job");
    ASSERT_TRUE(lock.ok());
  }
  EXPECT_FALSE(path_exists(path_));
  EXPECT_TRUE(FileLock::acquire(path_, "job").ok());
}

TEST_F(FileLockTest, WaitingGetsTheLockOnceTheHolderLetsGo) {
  auto first = FileLock::acquire(path_, "job");
  ASSERT_TRUE(first.ok());
  std::thread releaser([&] {
    std::this_thread::sleep_for(300ms);
    first->release();
  });
  FileLockOptions options;
  options.wait = 5s;
  auto second = FileLock::acquire(path_, "job", options);
  releaser.join();
  EXPECT_TRUE(second.ok()) << second.error().message;
}

TEST_F(FileLockTest, DeadHolderOnThisHostIsStale) {
  write_lock(fmt::format("{}:{}\n", lock_host_name(), dead_pid()));
  auto lock = FileLock::acquire(path_, "job");
  ASSERT_TRUE(lock.ok()) << lock.error().message;
  EXPECT_EQ(lock_text(), own());
  // A bare pid: the flock-era lock file of an older ptxbench, judged on this host.
  lock->release();
  write_lock(fmt::format("{}\n", dead_pid()));
  EXPECT_TRUE(FileLock::acquire(path_, "job").ok());
}

TEST_F(FileLockTest, OtherHostIsLiveUntilItsHeartbeatStops) {
  write_lock("node17.cluster:4242\n");
  auto refused = FileLock::acquire(path_, "job");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("pid 4242 on host node17.cluster"), std::string::npos);
  auto holder = FileLock::live_holder(path_);
  ASSERT_TRUE(holder.ok());
  ASSERT_TRUE(holder->has_value());
  EXPECT_EQ((*holder)->host, "node17.cluster");

  age_lock(kLockStaleAfter + 10s);  // its holder stopped refreshing the file
  holder = FileLock::live_holder(path_);
  ASSERT_TRUE(holder.ok());
  EXPECT_FALSE(holder->has_value());
  EXPECT_EQ(lock_text(), "node17.cluster:4242\n");  // live_holder never breaks a lock
  auto taken = FileLock::acquire(path_, "job");
  ASSERT_TRUE(taken.ok()) << taken.error().message;
  EXPECT_EQ(lock_text(), own());
  // Nothing is left over from breaking it (the renamed file, the clock probe).
  auto files = list_files(dir_);
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 1u);
}

TEST_F(FileLockTest, HeartbeatKeepsTheLockFresh) {
  FileLockOptions options;
  options.heartbeat = 50ms;
  auto lock = FileLock::acquire(path_, "job", options);
  ASSERT_TRUE(lock.ok());
  age_lock(kLockStaleAfter + 10s);
  std::this_thread::sleep_for(300ms);
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_GT(st.st_mtim.tv_sec, ::time(nullptr) - 5);
}

TEST_F(FileLockTest, ReleaseLeavesAnotherHoldersFileAlone) {
  auto lock = FileLock::acquire(path_, "job");
  ASSERT_TRUE(lock.ok());
  write_lock("node3:77\n");  // someone judged us stale and took over
  lock->release();
  EXPECT_EQ(lock_text(), "node3:77\n");
}

}  // namespace
}  // namespace ptxb
