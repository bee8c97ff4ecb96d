// Issue 21 (hardening), end to end: hostile and malformed inputs, usage errors and exit codes,
// as a user meets them. Every rejection is one line `ptxbench: error: ...` and never a crash, a
// hang or an out-of-memory kill.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include "cli_test_util.h"
#include "core/fs.h"
#include "core/json_io.h"
#include "core/strings.h"

namespace ptxb {
namespace {

using testing::run_cli;

const std::string kTestdata = PTXB_TESTDATA_DIR;

class HostileInputCli : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_temp_directory("ptxb-hostile");
    ASSERT_TRUE(dir.ok());
    tmp_ = dir.value();
  }
  void TearDown() override { remove_tree(tmp_); }

  std::string write(const std::string& name, const std::string& text) {
    const std::string path = tmp_ + "/" + name;
    EXPECT_TRUE(write_file_atomic(path, text).ok());
    return path;
  }

  // A copy of the golden run directory with `turns` appended to its turns.jsonl.
  std::string run_dir_with(const std::string& extra_turns) {
    const std::string dir = tmp_ + "/run";
    EXPECT_TRUE(make_directories(dir).ok());
    for (const char* file : {"turns.jsonl", "trajectories.jsonl"}) {
      auto text = read_file(kTestdata + "/runs/golden_gemm/" + file, 1 << 20);
      EXPECT_TRUE(text.ok());
      EXPECT_TRUE(write_file_atomic(dir + "/" + file,
                                    *text + (std::string(file) == "turns.jsonl" ? extra_turns : ""))
                      .ok());
    }
    return dir;
  }

  std::string tmp_;
};

// One line on stderr, with our prefix, and the expected exit code; never a signal.
void expect_one_error_line(const ProcessResult& result, int exit_code, const std::string& needle) {
  EXPECT_EQ(result.term_signal, 0) << result.stderr_text;
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(result.exit_code, exit_code) << result.stderr_text;
  EXPECT_TRUE(starts_with(result.stderr_text, "ptxbench: error: ")) << result.stderr_text;
  EXPECT_EQ(std::count(result.stderr_text.begin(), result.stderr_text.end(), '\n'), 1)
      << result.stderr_text;
  EXPECT_TRUE(contains(result.stderr_text, needle))
      << "expected: " << needle << "\ngot: " << result.stderr_text;
}

// Defect 1: numbers beyond a double aborted validate, run --config and report (exit 134).
TEST_F(HostileInputCli, NumberOverflowIsAnErrorInValidateRunAndReport) {
  expect_one_error_line(run_cli({"validate", write("big.json", R"({"name":1e999999})")}), 1,
                        "big.json: malformed JSON: number overflow parsing '1e999999'");
  const std::string config =
      write("exp.json", R"({"models": [{"name": "m", "api": "openai", "model": "x",
        "temperature": 1e999}], "tasks": ["gemm_n7168_k5120"]})");
  expect_one_error_line(run_cli({"run", "--config", config, "--out", tmp_ + "/out"}), 1,
                        "exp.json: malformed JSON: number overflow");
  const std::string run = run_dir_with(
      R"({"model": "model-x", "arch": "sm_90a", "definition": "gemm_n7168_k5120", "speedup": 1e400})"
      "\n");
  expect_one_error_line(run_cli({"report", run}), 1, "turns.jsonl:14: malformed JSON");
}

// Defect 2: a 400 KB file nested 200,000 deep was OOM-killed at 24 GB; now a fast error.
TEST_F(HostileInputCli, DeepNestingIsRefusedWithItsLimit) {
  const std::string path = write("deep.json", std::string(200000, '[') + std::string(200000, ']'));
  expect_one_error_line(run_cli({"validate", path}), 1,
                        "deep.json: malformed JSON: nested deeper than 256 levels");
}

// Defect 8: a FIFO as the kernel hung `compile` (open(2) waits for a writer).
TEST_F(HostileInputCli, FifoKernelIsRefusedNotWaitedOn) {
  const std::string fifo = tmp_ + "/kernel.cu";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const char* command : {"compile", "eval"})
    expect_one_error_line(run_cli({command, fifo, "--task", "gemm_n7168_k5120"}), 1,
                          "kernel.cu: is a FIFO, expected a regular file");
  expect_one_error_line(run_cli({"validate", fifo}), 1, "FIFO");
}

// Defect 9: a torn last line (kill -9 during the append) is left out by report, with a note.
TEST_F(HostileInputCli, ReportLeavesOutATornLastLineAndSaysSo) {
  const std::string run = run_dir_with(R"({"model": "model-x", "arch": "sm_9)");
  ProcessResult result = run_cli({"report", run, "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_TRUE(
      contains(result.stderr_text, "ptxbench: warning: " + run + "/turns.jsonl:14: torn last line"))
      << result.stderr_text;
  EXPECT_TRUE(contains(result.stderr_text, "ptxbench run --out " + run));
  ASSERT_TRUE(
      write_file_atomic(tmp_ + "/run/turns.jsonl",
                        read_file(kTestdata + "/runs/golden_gemm/turns.jsonl", 1 << 20).value())
          .ok());
  ProcessResult clean = run_cli({"report", run, "--json"});
  EXPECT_EQ(clean.stderr_text, "");
  EXPECT_EQ(result.stdout_text, clean.stdout_text);  // the same metrics as without the torn line
}

// Defect 10: usage errors exit 2 with one prefixed line.
TEST_F(HostileInputCli, UsageErrorsExitTwoWithOnePrefixedLine) {
  expect_one_error_line(run_cli({"run", "--suite", "paper-h100"}), 2, "no model");
  expect_one_error_line(run_cli({"prompt", "--task", "gemm_n7168_k5120"}), 2, "--variant");
  expect_one_error_line(run_cli({"tasks", "list", "--no-such-flag"}), 2,
                        "(see ptxbench tasks list --help)");
  expect_one_error_line(run_cli({"validate"}), 2, "path is required");
  ProcessResult fast_p = run_cli({"report", kTestdata + "/runs/golden_gemm", "--fast-p", "-1"});
  expect_one_error_line(fast_p, 2, "must be >= 0, got -1");
  EXPECT_LT(fast_p.stderr_text.size(), 200u) << fast_p.stderr_text;  // not DBL_MAX in 309 digits
}

TEST_F(HostileInputCli, TasksDirIsAcceptedAfterTheSubcommand) {
  const std::string set = kTestdata + "/traceset";
  ProcessResult before = run_cli({"--tasks-dir", set, "tasks", "list", "--json"});
  ProcessResult after = run_cli({"tasks", "list", "--json", "--tasks-dir", set});
  ASSERT_EQ(after.exit_code, before.exit_code) << after.stderr_text;
  EXPECT_EQ(after.stdout_text, before.stdout_text);
}

TEST(CountNoun, SingularAndPlural) {
  EXPECT_EQ(count_noun(1, "turn"), "1 turn");
  EXPECT_EQ(count_noun(0, "turn"), "0 turns");
  EXPECT_EQ(count_noun(1, "trajectory"), "1 trajectory");
  EXPECT_EQ(count_noun(3, "trajectory"), "3 trajectories");
  EXPECT_EQ(count_noun(2, "day"), "2 days");
}

}  // namespace
}  // namespace ptxb
