// `ptxbench run`'s scale-out flags and `ptxbench status` as a user runs them: every combination
// that means nothing is one usage line (exit 2) before anything is written or submitted. The
// executors themselves run end to end in tests/cluster/scale_out_e2e_test.sh.
#include <gtest/gtest.h>

#include "../cli/cli_test_util.h"
#include "core/fs.h"

namespace ptxb {
namespace {

TEST(ExecutorCli, MeaninglessCombinationsAreUsageErrors) {
  auto dir = make_temp_directory("ptxb-executor-cli");
  ASSERT_TRUE(dir.ok());
  const std::string out = *dir + "/run";
  const std::vector<std::string> plan{"run",   "--model", "replay", "--task", "gemm_n7168_k5120",
                                      "--out", out};
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--executor", "slurm", "--shard", "0/2"}, "give one of them"},
      {{"--partition", "gpu"}, "they need --executor slurm"},
      {{"--executor", "local", "--sbatch-arg=--qos=low"}, "they need --executor slurm"},
      {{"--executor", "local"}, "give --gpus 0,1,..."},
      {{"--executor", "slurm", "--gpus", "0"}, "--gres gpu:1"},
      {{"--gpus", "0,x"}, "expected GPU indices"},
      {{"--shards", "4"}, "--shards N needs --executor"},
      {{"--shard", "4/4"}, "I must be 0-3"},
      {{"--executor", "pbs"}, "--executor"},
  };
  for (const auto& [extra, why] : cases) {
    std::vector<std::string> args = plan;
    args.insert(args.end(), extra.begin(), extra.end());
    ProcessResult result = testing::run_cli(args);
    EXPECT_EQ(result.exit_code, 2) << extra.front() << ": " << result.stderr_text;
    EXPECT_NE(result.stderr_text.find(why), std::string::npos) << result.stderr_text;
  }
  EXPECT_FALSE(path_exists(out));  // nothing written, nothing submitted

  ProcessResult status = testing::run_cli({"status", *dir + "/nope"});
  EXPECT_EQ(status.exit_code, 2);
  EXPECT_NE(status.stderr_text.find("not a directory"), std::string::npos);
  ProcessResult not_a_run = testing::run_cli({"status", *dir});
  EXPECT_EQ(not_a_run.exit_code, 2);
  EXPECT_NE(not_a_run.stderr_text.find("no plan.json"), std::string::npos);
  remove_tree(*dir);
}

}  // namespace
}  // namespace ptxb
