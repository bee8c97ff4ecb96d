// SlurmScheduler (cluster/slurm_scheduler.h) against scripted answers of sbatch, sacct, squeue
// and scancel: the exact commands, the batch script, job ids, state words, and the failures
// (sbatch refusing, accounting disabled, a purged job). The real Slurm runs in
// tests/cluster/scale_out_e2e_test.sh.
#include "cluster/slurm_scheduler.h"

#include <gtest/gtest.h>

#include <deque>

#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

class ScriptedRunner final : public ProcessRunner {
 public:
  Result<ProcessResult> run(const ProcessSpec& spec) override {
    calls.push_back(spec.argv);
    if (answers.empty()) return make_error("process", "no scripted answer for {}", spec.argv[0]);
    ProcessResult result = answers.front();
    answers.pop_front();
    return result;
  }
  void answer(int exit_code, const std::string& out, const std::string& err = "") {
    ProcessResult r;
    r.exit_code = exit_code;
    r.stdout_text = out;
    r.stderr_text = err;
    answers.push_back(r);
  }
  std::vector<std::vector<std::string>> calls;
  std::deque<ProcessResult> answers;
};

class SlurmSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_temp_directory("ptxb-slurm");
    ASSERT_TRUE(dir.ok());
    root_ = *dir;
    job_.run_root = root_;
    job_.shard_count = 4;
    job_.indices = {0, 2, 3};
    job_.name = "ptxbench:paper";
    job_.worker_argv = {"/opt/ptx bench/ptxbench", "run", "--out", root_, "--evaluator",
                        "http://gpu1:8470"};
  }
  void TearDown() override { remove_tree(root_); }
  std::string root_;
  ArrayJob job_;
  ScriptedRunner runner_;
};

TEST_F(SlurmSchedulerTest, SubmitsOneArrayOfTheGivenShards) {
  job_.array_parallel = 2;
  job_.partition = "gpu";
  job_.gres = "gpu:1";
  job_.time_limit = "04:00:00";
  job_.extra_args = {"--account=proj"};
  runner_.answer(0, "4711;cluster1\n");
  SlurmScheduler slurm(runner_);
  auto id = slurm.submit(job_);
  ASSERT_TRUE(id.ok()) << id.error().message;
  EXPECT_EQ(*id, "4711");
  const std::string script = root_ + "/shards/sbatch.sh";
  EXPECT_EQ(runner_.calls.at(0),
            (std::vector<std::string>{
                "sbatch", "--parsable", "--job-name=ptxbench:paper", "--array=0,2,3%2",
                "--output=" + root_ + "/shards/%a-of-4/slurm-%A_%a.log", "--partition=gpu",
                "--gres=gpu:1", "--time=04:00:00", "--account=proj", script}));
  const std::string text = read_file(script, 1 << 16).value();
  // exec, the shard from the array index, and every word quoted for the shell.
  EXPECT_NE(text.find("exec '/opt/ptx bench/ptxbench' 'run' '--out' '" + root_ +
                      "' '--evaluator' 'http://gpu1:8470' --shard \"${SLURM_ARRAY_TASK_ID}/4\"\n"),
            std::string::npos)
      << text;
}

TEST_F(SlurmSchedulerTest, SbatchRefusalIsOneLineWithSlurmsWords) {
  runner_.answer(1, "", "sbatch: error: invalid partition specified: gpux\n");
  SlurmScheduler slurm(runner_);
  auto id = slurm.submit(job_);
  ASSERT_FALSE(id.ok());
  EXPECT_NE(id.error().message.find(
                "sbatch failed (exit code 1): sbatch: error: invalid partition specified: gpux"),
            std::string::npos)
      << id.error().message;
  runner_.answer(0, "Submitted batch job 12\n");  // not --parsable output
  EXPECT_FALSE(slurm.submit(job_).ok());
}

TEST_F(SlurmSchedulerTest, QueryMergesSacctAndSqueue) {
  // sacct: the finished tasks (and a pending range it does not expand); squeue: the live view.
  runner_.answer(0, "77_0|COMPLETED\n77_1|CANCELLED by 0\n77_[2-3]|PENDING\n78_0|FAILED\n");
  runner_.answer(0, "77_2|RUNNING\n77_3|PENDING\n");
  SlurmScheduler slurm(runner_);
  auto states = slurm.query("77");
  ASSERT_TRUE(states.ok()) << states.error().message;
  EXPECT_EQ(*states, (std::map<int, TaskState>{{0, TaskState::kCompleted},
                                               {1, TaskState::kCancelled},
                                               {2, TaskState::kRunning},
                                               {3, TaskState::kPending}}));
  EXPECT_EQ(runner_.calls.at(1),
            (std::vector<std::string>{"squeue", "--noheader", "--array", "--states=all",
                                      "--jobs=77", "--format=%i|%T"}));
}

TEST_F(SlurmSchedulerTest, QueryWithoutAccountingOrAfterThePurge) {
  runner_.answer(1, "", "Slurm accounting storage is disabled\n");
  runner_.answer(0, "9_0|TIMEOUT\n9_1|NODE_FAIL\n9_2|OUT_OF_MEMORY\n");
  SlurmScheduler slurm(runner_);
  auto states = slurm.query("9");
  ASSERT_TRUE(states.ok());
  EXPECT_EQ(*states, (std::map<int, TaskState>{{0, TaskState::kTimeout},
                                               {1, TaskState::kNodeFail},
                                               {2, TaskState::kOutOfMemory}}));
  // Purged from the controller and no accounting: nothing known, not an error.
  runner_.answer(1, "", "Slurm accounting storage is disabled\n");
  runner_.answer(1, "", "slurm_load_jobs error: Invalid job id specified\n");
  states = slurm.query("9");
  ASSERT_TRUE(states.ok());
  EXPECT_TRUE(states->empty());
  // A controller that does not answer is an error.
  runner_.answer(1, "", "");
  runner_.answer(1, "", "squeue: error: Unable to contact slurm controller\n");
  states = slurm.query("9");
  ASSERT_FALSE(states.ok());
  EXPECT_NE(states.error().message.find("Unable to contact slurm controller"), std::string::npos);
}

TEST_F(SlurmSchedulerTest, CancelsOneTaskOrTheArray) {
  runner_.answer(0, "");
  runner_.answer(0, "");
  SlurmScheduler slurm(runner_);
  ASSERT_TRUE(slurm.cancel("55", 2).ok());
  ASSERT_TRUE(slurm.cancel("55", std::nullopt).ok());
  EXPECT_EQ(runner_.calls.at(0), (std::vector<std::string>{"scancel", "55_2"}));
  EXPECT_EQ(runner_.calls.at(1), (std::vector<std::string>{"scancel", "55"}));
}

TEST(SlurmStates, EveryWordWeRelyOn) {
  EXPECT_EQ(SlurmScheduler::parse_state("COMPLETING"), TaskState::kRunning);
  EXPECT_EQ(SlurmScheduler::parse_state("REQUEUED"), TaskState::kPending);
  EXPECT_EQ(SlurmScheduler::parse_state("CANCELLED by 1000"), TaskState::kCancelled);
  EXPECT_EQ(SlurmScheduler::parse_state("BOOT_FAIL"), TaskState::kFailed);
  EXPECT_FALSE(SlurmScheduler::parse_state("WHATEVER").has_value());
  EXPECT_TRUE(is_live(TaskState::kPending));
  EXPECT_FALSE(is_live(TaskState::kTimeout));
}

}  // namespace
}  // namespace ptxb
