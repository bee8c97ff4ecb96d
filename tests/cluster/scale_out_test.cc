// The scale-out coordinator (cluster/scale_out.h) and `ptxbench status` (cluster/run_status.h)
// against a fake scheduler and hand-made run directories: which shards are submitted (only the
// unfinished ones that are not live), the job records, waiting until no shard is live, and the
// status arithmetic (GPU-hours, remaining turns, ETA) with hand-computed expectations.
#include <gtest/gtest.h>
#include <unistd.h>

#include "../support/fake_scheduler.h"
#include "agent/shard.h"
#include "cluster/run_status.h"
#include "cluster/scale_out.h"
#include "core/file_lock.h"
#include "core/fs.h"
#include "metrics/turn_record.h"

namespace ptxb {
namespace {

using namespace std::chrono_literals;

// A run of 6 trajectories (t0..t5) x 2 turns in 3 shards: shard s owns t_s and t_{s+3}.
class ScaleOutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_temp_directory("ptxb-scale-out");
    ASSERT_TRUE(dir.ok());
    root_ = *dir;
    Json trajectories = Json::array();
    for (int i = 0; i < 6; ++i) trajectories.push_back(Json{{"id", fmt::format("t{}", i)}});
    ASSERT_TRUE(write_file_atomic(
                    root_ + "/plan.json",
                    dump_pretty(Json{{"config", {{"turns", 2}, {"concurrency", {{"gpu", 1}}}}},
                                     {"trajectories", trajectories}}))
                    .ok());
    ASSERT_TRUE(write_file_atomic(root_ + "/turns.jsonl", "").ok());
    ASSERT_TRUE(record_shard_layout(root_, 3).ok());
    options_.job.run_root = root_;
    options_.job.shard_count = 3;
    options_.job.worker_argv = {"ptxbench", "run", "--out", root_};
    options_.poll = 10ms;
  }
  void TearDown() override { remove_tree(root_); }

  std::string shard_path(int s) { return shard_dir(root_, ShardSpec{s, 3}); }
  // Records turn `turn` of trajectory `id` in shard `s` (eval 10 s, model 1 s).
  void record(int s, const std::string& id, int turn, const std::string& status = "PASSED") {
    TurnRecord r;
    r.key = TrajectoryKey{"m", "sm_90a", "task", "w", "base", id};
    r.turn = turn;
    r.kernel_present = true;
    r.status = parse_ptxb_status(status);
    r.eval_wall_s = 10;
    r.model_wall_s = 1;
    const std::string path = shard_path(s) + "/turns.jsonl";
    auto old = read_file(path, 1 << 20);
    const std::string text = old.ok() ? old.value() : "";
    ASSERT_TRUE(write_file_atomic(path, text + r.to_json().dump() + "\n").ok());
  }
  void summary(int s, int unfinished, const std::string& exit_status = "model_error") {
    Json incomplete = Json::array();
    for (int i = 0; i < unfinished; ++i) incomplete.push_back(Json{{"exit_status", exit_status}});
    ASSERT_TRUE(write_file_atomic(shard_path(s) + "/summary.json",
                                  dump_pretty(Json{{"unfinished_trajectories", unfinished},
                                                   {"incomplete", incomplete}}))
                    .ok());
  }

  std::string root_;
  ScaleOutOptions options_;
  FakeScheduler scheduler_;
};

TEST_F(ScaleOutTest, FreshRunSubmitsEveryShardAsOneArray) {
  options_.wait = false;
  auto outcome = run_scaled_out(scheduler_, options_);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(outcome->submitted, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(scheduler_.submissions.size(), 1u);
  EXPECT_EQ(scheduler_.submissions[0].indices, (std::vector<int>{0, 1, 2}));
  auto records = read_job_records(root_);
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].id, "100");
  EXPECT_EQ((*records)[0].executor, "fake");
  // Submitted again at once: all three are queued now, nothing more goes out.
  outcome = run_scaled_out(scheduler_, options_);
  ASSERT_TRUE(outcome.ok());
  EXPECT_TRUE(outcome->submitted.empty());
  EXPECT_EQ(scheduler_.submissions.size(), 1u);
}

TEST_F(ScaleOutTest, ResubmitsOnlyShardsThatAreNeitherDoneNorLive) {
  ASSERT_TRUE(write_file_atomic(root_ + "/shards/jobs.json",
                                R"({"jobs": [{"id": "7", "executor": "fake",
                                              "indices": [0, 1, 2]}]})")
                  .ok());
  scheduler_.states["7"] = {
      {0, TaskState::kCompleted}, {1, TaskState::kRunning}, {2, TaskState::kCancelled}};
  for (int turn : {1, 2}) {
    record(0, "t0", turn);
    record(0, "t3", turn);
  }
  summary(0, 0);
  record(2, "t2", 1);  // cut off after one turn
  options_.wait = false;
  auto outcome = run_scaled_out(scheduler_, options_);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(outcome->submitted, (std::vector<int>{2}));
  const auto& shards = outcome->status.shards;
  EXPECT_EQ(shards[0].state, "done");
  EXPECT_EQ(shards[1].state, "running");
  EXPECT_EQ(shards[2].state, "stopped");
  EXPECT_EQ(shards[2].detail, "CANCELLED");
  EXPECT_EQ(shards[2].turns_remaining, 3);
}

TEST_F(ScaleOutTest, WaitsUntilNoShardIsLive) {
  // The "cluster": every shard runs on the 2nd poll and finishes on the 4th.
  scheduler_.on_query = [&](int query) {
    for (auto& [job, tasks] : scheduler_.states)
      for (auto& [index, state] : tasks) {
        if (query == 2) state = TaskState::kRunning;
        if (query != 4) continue;
        state = TaskState::kCompleted;
        record(index, fmt::format("t{}", index), 1);
        record(index, fmt::format("t{}", index), 2);
        record(index, fmt::format("t{}", index + 3), 1);
        record(index, fmt::format("t{}", index + 3), 2);
        summary(index, 0);
      }
  };
  std::vector<std::string> notes;
  options_.note = [&](const std::string& line) { notes.push_back(line); };
  auto outcome = run_scaled_out(scheduler_, options_);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_TRUE(outcome->status.complete());
  EXPECT_EQ(outcome->status.turns_done(), 12);
  EXPECT_GE(scheduler_.queries, 4);
  ASSERT_GE(notes.size(), 3u);
  EXPECT_NE(notes.front().find("submitted 3 shards of 3 as fake job 100"), std::string::npos);
  EXPECT_NE(notes.back().find("shards: 3 done; turns 12/12"), std::string::npos) << notes.back();
}

TEST_F(ScaleOutTest, SubmissionFailureSubmitsAndRecordsNothing) {
  scheduler_.submit_error = "sbatch failed (exit code 1): invalid partition";
  auto outcome = run_scaled_out(scheduler_, options_);
  ASSERT_FALSE(outcome.ok());
  EXPECT_NE(outcome.error().message.find("invalid partition"), std::string::npos);
  EXPECT_FALSE(path_exists(root_ + "/shards/jobs.json"));
}

TEST_F(ScaleOutTest, StatusArithmetic) {
  // Shard 0 running (its lock held by this live process), 2 turns recorded, one failed;
  // shard 1 stopped on a model error with t1 done; shard 2 never started.
  ASSERT_TRUE(make_directories(shard_path(0)).ok());
  auto lock = FileLock::acquire(shard_path(0) + "/lock", "shard 0");
  ASSERT_TRUE(lock.ok());
  record(0, "t0", 1, "COMPILE_ERROR");
  record(0, "t0", 2);
  record(1, "t1", 1);
  record(1, "t1", 2);
  summary(1, 1);
  auto status = read_run_status(root_);
  ASSERT_TRUE(status.ok()) << status.error().message;
  const auto& s = status->shards;
  EXPECT_EQ(s[0].state, "running");
  EXPECT_NE(s[0].holder.find(fmt::format("pid {}", ::getpid())), std::string::npos);
  EXPECT_EQ(s[0].failures, (std::map<std::string, int>{{"COMPILE_ERROR", 1}}));
  EXPECT_EQ(s[1].state, "stopped");
  EXPECT_EQ(s[1].detail, "1 model_error");
  EXPECT_EQ(s[2].state, "not_started");
  EXPECT_EQ(status->turns_done(), 4);
  EXPECT_EQ(status->turns_remaining(), 2 + 2 + 4);
  EXPECT_DOUBLE_EQ(status->gpu_hours(), 40.0 / 3600.0);
  // 10 s of evaluation per turn, one GPU slot, one shard running: 8 turns x 10 s.
  ASSERT_TRUE(status->eta_seconds().has_value());
  EXPECT_DOUBLE_EQ(*status->eta_seconds(), 80.0);
  EXPECT_EQ(format_duration(80), "1 min");
  EXPECT_EQ(format_duration(7500), "2 h 05 min");
  const Json json = status->to_json();
  EXPECT_EQ(json["shards"][1]["stopped_trajectories"]["model_error"], 1);
  EXPECT_EQ(json["turns_planned"], 12);
  EXPECT_NE(status->table().find("ETA: 1 min"), std::string::npos) << status->table();
}

TEST_F(ScaleOutTest, UnshardedRunIsOneShardNamedAll) {
  remove_tree(root_ + "/shards");
  auto status = read_run_status(root_);
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(status->shards.size(), 1u);
  EXPECT_EQ(status->shards[0].name, "all");
  EXPECT_EQ(status->shards[0].state, "not_started");
  EXPECT_FALSE(status->eta_seconds().has_value());
  EXPECT_FALSE(read_run_status(root_ + "/nope").ok());
}

}  // namespace
}  // namespace ptxb
