// The task registry: the built-in suites (tasks/ in the repository) plus user task sets added
// with --tasks-dir or $PTXBENCH_TASKS_DIR. Each set is a FlashInfer-Trace folder (definitions/,
// workloads/) with a manifest tasks.json (format in docs/tasks.md). Tasks are data, not code.
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "tasks/task.h"

namespace ptxb {

class TaskRegistry {
 public:
  // Loads builtin_tasks_dir() and then each of `extra_dirs`. Every problem in every set is
  // reported (file + JSON path); task names must be unique across all sets.
  static Result<TaskRegistry> load(const std::vector<std::string>& extra_dirs);
  // Loads exactly these sets (no built-in set); used by tests and by load().
  static Result<TaskRegistry> load_sets(const std::vector<std::string>& dirs);

  // nullptr if unknown.
  const Task* find(const std::string& name) const;
  // Like find, but an unknown name is an error that suggests close names and
  // `ptxbench tasks list`.
  Result<const Task*> get(const std::string& name) const;
  // All tasks (manifest order, sets in load order), or those of one suite.
  std::vector<const Task*> list(const std::string& suite = "") const;
  // Suite names in first-seen order.
  std::vector<std::string> suites() const;

 private:
  std::vector<Task> tasks_;
};

// $PTXBENCH_BUILTIN_TASKS if set, else the data folder's tasks/ (core/install_layout.h); the
// error names every place searched.
Result<std::string> builtin_tasks_dir();

}  // namespace ptxb
