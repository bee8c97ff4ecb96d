// The debug stage's core-dump plumbing without a GPU: the environment the driver reads, finding
// the dump, and HangTrigger against a real FIFO and a real process group (the driver's side of
// the pipe is played by the test).
#include "supervisor/core_dump.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/process.h"
#include "core/strings.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

class CoreDumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_temp_directory("ptxb-core-dump-test");
    ASSERT_TRUE(dir.ok());
    scratch_ = *dir;
  }
  void TearDown() override { remove_tree(scratch_); }

  // `sleep 30` in its own process group, handed to the trigger when it starts.
  ProcessResult hang(HangTrigger& trigger) {
    ProcessSpec spec;
    spec.argv = {"sleep", "30"};
    spec.timeout = milliseconds(20'000);
    spec.on_start = [&trigger](pid_t group) { trigger.started(group); };
    SystemProcessRunner runner;
    auto ran = runner.run(spec);
    EXPECT_TRUE(ran.ok());
    trigger.stop();
    return ran.ok() ? *ran : ProcessResult{};
  }

  std::string scratch_;
};

TEST_F(CoreDumpTest, EnvironmentSkipsTheMemoriesAndNamesThePipeOnlyForAHang) {
  const auto env = core_dump_environment("/s", false);
  auto has = [](const std::vector<std::string>& list, const std::string& entry) {
    return std::find(list.begin(), list.end(), entry) != list.end();
  };
  EXPECT_TRUE(has(env, "CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1"));
  EXPECT_TRUE(has(env, "CUDA_COREDUMP_FILE=/s/core_%p.nvcudmp"));
  EXPECT_TRUE(has(env,
                  "CUDA_COREDUMP_GENERATION_FLAGS=skip_global_memory,skip_shared_memory,"
                  "skip_local_memory,skip_abort"));
  EXPECT_FALSE(has(env, "CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1"));
  const auto hang_env = core_dump_environment("/s", true);
  EXPECT_TRUE(has(hang_env, "CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1"));
  EXPECT_TRUE(has(hang_env, "CUDA_COREDUMP_PIPE=/s/corepipe"));
}

TEST_F(CoreDumpTest, FindsTheLargestDumpAndIgnoresOtherFiles) {
  EXPECT_FALSE(find_core_dump(scratch_).has_value());
  ASSERT_TRUE(write_file_atomic(scratch_ + "/core_1.nvcudmp", std::string(10, 'x')).ok());
  ASSERT_TRUE(write_file_atomic(scratch_ + "/core_2.nvcudmp", std::string(30, 'x')).ok());
  ASSERT_TRUE(write_file_atomic(scratch_ + "/big.log", std::string(100, 'x')).ok());
  auto dump = find_core_dump(scratch_);
  ASSERT_TRUE(dump.has_value());
  EXPECT_EQ(dump->path, scratch_ + "/core_2.nvcudmp");
  EXPECT_EQ(dump->bytes, 30);
  EXPECT_FALSE(find_core_dump(scratch_ + "/missing").has_value());
}

TEST_F(CoreDumpTest, AHangIsTriggeredThroughThePipeAndKilledOnceTheDumpIsWritten) {
  const std::string pipe = core_dump_pipe_path(scratch_);
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  // The driver's end: a reader that is open before the trigger writes.
  const int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  ASSERT_TRUE(write_file_atomic(scratch_ + "/core_7.nvcudmp", std::string(64, 'd')).ok());
  HangTrigger trigger(scratch_, milliseconds(100), milliseconds(5000));
  const auto start = std::chrono::steady_clock::now();
  ProcessResult ran = hang(trigger);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(ran.term_signal, 9) << ran.describe();  // killed by the trigger, not the timeout
  EXPECT_FALSE(ran.timed_out);
  EXPECT_LT(took, milliseconds(5000));  // the dump stopped growing: no need to wait longer
  EXPECT_TRUE(trigger.fired());
  EXPECT_EQ(trigger.failure(), "");
  char byte = 0;
  EXPECT_EQ(::read(reader, &byte, 1), 1);
  EXPECT_EQ(byte, '1');
  ::close(reader);
}

// The driver keeps the dump open while it writes, and may pause for more than a second (it stops
// every warp first): the trigger waits until no process of the group has it open.
TEST_F(CoreDumpTest, TheTriggerWaitsWhileTheGroupStillHasTheDumpOpen) {
  const std::string pipe = core_dump_pipe_path(scratch_);
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  const int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  HangTrigger trigger(scratch_, milliseconds(100), milliseconds(8000));
  ProcessSpec spec;
  // Writes a byte, keeps the file open without growing it for 2.5 s, closes it, then hangs.
  spec.argv = {"sh", "-c",
               "exec 3>'" + scratch_ +
                   "/core_9.nvcudmp'; printf d >&3; sleep 2.5; exec 3>&-; "
                   "sleep 30"};
  spec.timeout = milliseconds(20'000);
  spec.on_start = [&trigger](pid_t group) { trigger.started(group); };
  SystemProcessRunner runner;
  const auto start = std::chrono::steady_clock::now();
  auto ran = runner.run(spec);
  trigger.stop();
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(ran.ok());
  EXPECT_EQ(ran->term_signal, 9) << ran->describe();
  // Not at 2 s of a stable size while open; soon after the close.
  EXPECT_GE(took, milliseconds(2500));
  EXPECT_LT(took, milliseconds(6000));
  ::close(reader);
}

TEST_F(CoreDumpTest, OpenDumpsAreSeenInTheGroupOnly) {
  EXPECT_EQ(dump_open_in_group(::getpgrp()), std::optional<bool>(false));
  const std::string path = scratch_ + "/core_3.nvcudmp";
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(dump_open_in_group(::getpgrp()), std::optional<bool>(true));
  ::close(fd);
  EXPECT_EQ(dump_open_in_group(::getpgrp()), std::optional<bool>(false));
  // No such group: nothing readable.
  EXPECT_EQ(dump_open_in_group(999999999), std::nullopt);
}

TEST_F(CoreDumpTest, WithoutThePipeTheTriggerSaysWhyAndEndsTheHangAtOnce) {
  HangTrigger trigger(scratch_, milliseconds(50), milliseconds(5000));
  ProcessResult ran = hang(trigger);
  EXPECT_EQ(ran.term_signal, 9) << ran.describe();
  EXPECT_FALSE(trigger.fired());
  EXPECT_NE(trigger.failure().find("corepipe could not be opened"), std::string::npos)
      << trigger.failure();
}

TEST_F(CoreDumpTest, AProcessThatEndsFirstIsNeitherTriggeredNorKilled) {
  HangTrigger trigger(scratch_, milliseconds(2000), milliseconds(5000));
  ProcessSpec spec;
  spec.argv = {"true"};
  spec.on_start = [&trigger](pid_t group) { trigger.started(group); };
  SystemProcessRunner runner;
  auto ran = runner.run(spec);
  ASSERT_TRUE(ran.ok());
  trigger.stop();
  EXPECT_TRUE(ran->succeeded());
  EXPECT_FALSE(trigger.fired());
  EXPECT_EQ(trigger.failure(), "");
}

}  // namespace
}  // namespace ptxb
