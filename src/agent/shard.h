// Shards of a plan: the unit a scale-out executor runs on one node or one GPU (`ptxbench run
// --shard i/N`, docs/cluster.md). A trajectory belongs to exactly one shard (its turns depend on
// each other), so shards never touch the same trajectory, turn or kernel file. Assignment is
// round robin over the plan's order (trajectory k goes to shard k mod N): the plan lists
// trajectories task by task, so every shard gets a mix of tasks and shards take about the same
// time even though evaluations of different tasks cost 10-27 s.
//
// The shard count of a run directory is fixed by its first sharded run
// (shards/layout.json); each shard keeps its own file set under shards/I-of-N/: turns.jsonl
// (appended only by that shard), lock, summary.json and the executor's log files.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "agent/experiment.h"
#include "core/result.h"

namespace ptxb {

// Slurm's default MaxArraySize is 1001 (indices 0-1000); a study has far fewer trajectories
// per shard worth splitting than that.
inline constexpr int kMaxShards = 1000;

struct ShardSpec {
  int index = 0;  // 0-based, as Slurm's SLURM_ARRAY_TASK_ID
  int count = 1;

  // "I/N" with 0 <= I < N <= kMaxShards; errors are usage errors naming the text.
  static Result<ShardSpec> parse(const std::string& text);
  std::string name() const;  // "2-of-4": the folder under shards/
  std::string arg() const;   // "2/4": the --shard value
  bool owns(std::size_t trajectory_position) const {
    return static_cast<int>(trajectory_position % static_cast<std::size_t>(count)) == index;
  }
  bool operator==(const ShardSpec&) const = default;
};

std::string shards_root(const std::string& run_root);
std::string shard_dir(const std::string& run_root, const ShardSpec& shard);

// The plan restricted to one shard's trajectories (same config, same order).
ExperimentPlan shard_plan(const ExperimentPlan& plan, const ShardSpec& shard);

// The shard count recorded in run_root/shards/layout.json; nullopt when the run was never
// sharded.
Result<std::optional<int>> read_shard_layout(const std::string& run_root);
// Records `count` (first sharded run) or checks it against the recorded one: a run directory
// split one way cannot be continued split another way while shards hold trajectories.
Status record_shard_layout(const std::string& run_root, int count);

}  // namespace ptxb
