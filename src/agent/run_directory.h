// The run directory of `ptxbench run` (layout: docs/agent.md). Crash safety rests on one
// commit point per turn, the turns.jsonl line:
//   1. turns/<id>/turn<N>.cu and turn<N>.json (kernel, reply, evaluation, feedback): atomic files
//   2. trajectories/<id>.json (the conversation so far): an atomic rewrite
//   3. one line appended to turns.jsonl and fsync'd       <- the turn is done
// A process killed before 3 left no record, so a resumed run redoes that turn (its files are
// overwritten); one killed after 3 never redoes it. A torn last line (power loss mid-append) is
// cut off when the directory is opened again.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "agent/experiment.h"
#include "core/file_lock.h"
#include "core/json_io.h"
#include "core/result.h"
#include "metrics/turn_record.h"

namespace ptxb {

class RunDirectory {
 public:
  // Creates `root` with plan.json and trajectories.jsonl, or opens an existing run: its plan
  // must have the same identity (ExperimentPlan::identity), else the error names the first
  // difference. `resumed` says which happened. The directory is locked (root/.lock) for the
  // object's lifetime: a second run of the same directory fails with code "locked", naming the
  // pid of the first.
  static Result<std::unique_ptr<RunDirectory>> open(const std::string& root,
                                                    const ExperimentPlan& plan, bool& resumed);
  // The config saved in an existing run's plan.json (for `ptxbench run --out DIR` alone).
  static Result<Json> saved_config(const std::string& root);

  const std::string& root() const { return root_; }
  // Turn indices already committed, per trajectory id (read at open, updated on append).
  std::set<int> finished_turns(const std::string& id) const;
  std::size_t finished_turn_count() const;

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

  Status write_summary(const Json& summary) const;

 private:
  RunDirectory(std::string root, FileLock lock) : root_(std::move(root)), lock_(std::move(lock)) {}
  Status load_turns();

  std::string root_;
  FileLock lock_;
  mutable std::mutex mutex_;
  std::map<std::string, std::set<int>> finished_;
};

}  // namespace ptxb
