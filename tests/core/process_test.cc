#include "core/process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <thread>

#include "core/interrupt.h"

namespace ptxb {
namespace {

TEST(Process, CapturesOutputAndExitCode) {
  SystemProcessRunner runner;
  auto result = runner.run({{"sh", "-c", "echo out; echo err >&2; exit 3"}});
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_EQ(result->stdout_text, "out\n");
  EXPECT_EQ(result->stderr_text, "err\n");
  EXPECT_FALSE(result->succeeded());
  EXPECT_EQ(result->describe(), "exit code 3");
}

TEST(Process, TimeoutKillsTheWholeProcessGroup) {
  SystemProcessRunner runner;
  ProcessSpec spec{{"sh", "-c", "sleep 30 & sleep 30; echo never"}};
  spec.timeout = std::chrono::milliseconds(300);
  auto result = runner.run(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->timed_out);
  EXPECT_LT(result->wall_ms, 5000.0);  // the background sleep must not keep the pipes open
  EXPECT_EQ(result->stdout_text, "");
}

// Issue 21, defect 7: nvcc's children run in their own process group, so Ctrl-C never reached
// them. An interrupt of ptxbench (core/interrupt.h) ends the whole group at once.
TEST(Process, InterruptKillsTheWholeProcessGroup) {
  SystemProcessRunner runner;
  ProcessSpec spec{{"sh", "-c", "sleep 30 & echo $!; sleep 30; echo never"}};
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    set_interrupt_signal_for_testing(SIGINT);
  });
  auto result = runner.run(spec);
  interrupter.join();
  set_interrupt_signal_for_testing(0);
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result->interrupted);
  EXPECT_FALSE(result->succeeded());
  EXPECT_LT(result->wall_ms, 5000.0);
  EXPECT_EQ(result->describe(), "stopped: ptxbench was interrupted (process group killed)");
  // The background sleep (a grandchild, like nvcc's cicc) is gone too.
  const pid_t grandchild = static_cast<pid_t>(std::stol(result->stdout_text));
  // Dead means no such process, or a zombie that its new parent has not reaped yet.
  auto dead = [&] {
    if (::kill(grandchild, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
    std::string pid, name, state;
    stat >> pid >> name >> state;
    return state == "Z";
  };
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone = dead();
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << grandchild;
}

TEST(Process, ReportsSignals) {
  SystemProcessRunner runner;
  auto result = runner.run({{"sh", "-c", "kill -SEGV $$"}});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->term_signal, 11);
  EXPECT_EQ(result->describe(), "killed by signal 11 (SIGSEGV)");
}

TEST(Process, CapsOutput) {
  SystemProcessRunner runner;
  ProcessSpec spec{{"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}};
  spec.output_cap_bytes = 1000;
  auto result = runner.run(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->stdout_text.size(), 1000u);
  EXPECT_EQ(result->stdout_dropped_bytes, 99000u);
}

TEST(Process, MissingExecutableIsAnError) {
  SystemProcessRunner runner;
  auto result = runner.run({{"definitely-not-a-program-ptxb"}});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("executable not found"), std::string::npos);
}

TEST(Process, StdinIsDelivered) {
  SystemProcessRunner runner;
  ProcessSpec spec{{"cat"}};
  spec.stdin_data = "hello";
  auto result = runner.run(spec);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->stdout_text, "hello");
}

}  // namespace
}  // namespace ptxb
