// Shards of a plan (agent/shard.h): `--shard I/N` parsing, round-robin ownership, the shard
// plan, and the recorded shard count of a run directory.
#include "agent/shard.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

TEST(Shard, ParsesIOfN) {
  auto shard = ShardSpec::parse("2/4");
  ASSERT_TRUE(shard.ok());
  EXPECT_EQ(shard->index, 2);
  EXPECT_EQ(shard->count, 4);
  EXPECT_EQ(shard->name(), "2-of-4");
  EXPECT_EQ(shard->arg(), "2/4");
}

TEST(Shard, RefusesBadSpecsWithTheReason) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"3", "expected I/N"},         {"4/4", "I must be 0-3"}, {"-1/4", "I must be 0-3"},
      {"0/0", "N must be 1-1000"},   {"a/4", "whole numbers"}, {"1/4x", "whole numbers"},
      {"0/1001", "N must be 1-1000"}};
  for (const auto& [text, why] : cases) {
    auto shard = ShardSpec::parse(text);
    ASSERT_FALSE(shard.ok()) << text;
    EXPECT_EQ(shard.error().code, "usage");
    EXPECT_NE(shard.error().message.find(why), std::string::npos) << shard.error().message;
  }
}

TEST(Shard, EveryTrajectoryHasExactlyOneShardRoundRobin) {
  ExperimentPlan plan;
  for (int i = 0; i < 10; ++i) plan.trajectories.push_back(TrajectoryPlan{fmt::format("t{}", i)});
  std::vector<std::string> seen;
  for (int s = 0; s < 3; ++s) {
    const ExperimentPlan part = shard_plan(plan, ShardSpec{s, 3});
    for (const auto& t : part.trajectories) seen.push_back(t.id);
    if (s == 1) {  // positions 1, 4, 7: neighbours (one task's trajectories) spread out
      ASSERT_EQ(part.trajectories.size(), 3u);
      EXPECT_EQ(part.trajectories[0].id, "t1");
      EXPECT_EQ(part.trajectories[2].id, "t7");
    }
  }
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(std::unique(seen.begin(), seen.end()), seen.end());
}

TEST(Shard, LayoutIsRecordedOnceAndChecked) {
  auto dir = make_temp_directory("ptxb-shard");
  ASSERT_TRUE(dir.ok());
  auto none = read_shard_layout(*dir);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(record_shard_layout(*dir, 4).ok());
  EXPECT_TRUE(record_shard_layout(*dir, 4).ok());
  auto other = record_shard_layout(*dir, 3);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("is split into 4 shards"), std::string::npos)
      << other.error().message;
  EXPECT_EQ(read_shard_layout(*dir)->value(), 4);
  remove_tree(*dir);
}

}  // namespace
}  // namespace ptxb
