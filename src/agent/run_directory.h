// The run directory of `ptxbench run` (layout: docs/agent.md). Crash safety rests on one
// commit point per turn, the turns.jsonl line:
//   1. turns/<id>/turn<N>.cu and turn<N>.json (kernel, reply, evaluation, feedback): atomic files
//   2. trajectories/<id>.json (the conversation so far): an atomic rewrite
//   3. one line appended to turns.jsonl and fsync'd       <- the turn is done
// A process killed before 3 left no record, so a resumed run redoes that turn (its files are
// overwritten); one killed after 3 never redoes it. A torn last line (power loss mid-append) is
// cut off when the directory is opened again.
//
// A sharded run (`--shard I/N`, agent/shard.h) commits its turns to shards/I-of-N/turns.jsonl
// instead, so array tasks on different nodes of a shared (NFS) directory never append to one
// file; everything else a shard writes is per trajectory, and a trajectory has one shard. The
// readers (this class, `report`, `status`) take the union of every turn file.
//
// Locks (core/file_lock.h, NFS-safe): the directory lock DIR/.lock guards creating and checking
// the directory. An unsharded run keeps it, and every shard lock of a sharded directory, for its
// whole life; a shard holds it only while it opens the directory, then keeps its own
// shards/I-of-N/lock. So an unsharded run and a shard never work at once, nor two copies of one
// shard, while shards run side by side.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/experiment.h"
#include "agent/shard.h"
#include "core/file_lock.h"
#include "core/json_io.h"
#include "core/result.h"
#include "metrics/turn_record.h"

namespace ptxb {

// trajectories/<id>.json of the run in `root`; nullopt when the trajectory has no file yet.
Result<std::optional<Json>> read_trajectory_file(const std::string& root, const std::string& id);

class RunDirectory {
 public:
  // Creates `root` with plan.json and trajectories.jsonl, or opens an existing run: its plan
  // must have the same identity (ExperimentPlan::identity), else the error names the first
  // difference. `resumed` says which happened. The directory is locked (root/.lock) for the
  // object's lifetime: a second run of the same directory fails with code "locked", naming the
  // pid of the first.
  // With `shard`, the run is that shard of the plan: the shard count is recorded or checked
  // (shards/layout.json) and its turns go to its own file.
  static Result<std::unique_ptr<RunDirectory>> open(const std::string& root,
                                                    const ExperimentPlan& plan, bool& resumed,
                                                    std::optional<ShardSpec> shard = {});
  // The config saved in an existing run's plan.json (for `ptxbench run --out DIR` alone).
  static Result<Json> saved_config(const std::string& root);
  // For a scale-out coordinator: creates the run (or checks that `root` holds this plan) and
  // records its split into `shard_count` shards, under the directory lock, then lets go: the
  // shards' workers do the rest.
  static Status prepare_sharded(const std::string& root, const ExperimentPlan& plan,
                                int shard_count, bool& resumed);

  const std::string& root() const { return root_; }
  // Turn indices already committed, per trajectory id (read at open, updated on append).
  std::set<int> finished_turns(const std::string& id) const;
  std::size_t finished_turn_count() const;
  // Turns committed for the trajectories of `plan` (a shard's part of the run).
  std::size_t finished_turn_count(const ExperimentPlan& plan) const;
  const std::optional<ShardSpec>& shard() const { return shard_; }

  // Thread-safe; one line, written with one write(2) and fsync'd.
  Status append_turn(const TurnRecord& record);

  // turns/<id>/turn<N>.cu (when `kernel` is given) and turns/<id>/turn<N>.json.
  Status write_turn_files(const std::string& id, int turn, const std::string* kernel,
                          const Json& detail) const;
  Result<Json> read_turn_detail(const std::string& id, int turn) const;
  std::string kernel_file(const std::string& id, int turn) const;

  Status write_trajectory(const std::string& id, const Json& document) const;
  // nullopt when the trajectory has no file yet.
  Result<std::optional<Json>> read_trajectory(const std::string& id) const;

  // summary.json of the run, or of the shard (shards/I-of-N/summary.json).
  Status write_summary(const Json& summary) const;

 private:
  explicit RunDirectory(std::string root) : root_(std::move(root)) {}
  Status take_locks(const std::optional<ShardSpec>& shard);
  Status load_turns();
  // The turn file this run appends to.
  std::string own_turns_path() const;

  std::string root_;
  std::optional<ShardSpec> shard_;
  std::optional<FileLock> directory_lock_;
  std::vector<FileLock> shard_locks_;
  mutable std::mutex mutex_;
  std::map<std::string, std::set<int>> finished_;
};

}  // namespace ptxb
