// The committed turns of a `ptxbench run` directory as the adaptation tools read them
// (`fixit mine`, `kernelgen collect`): each turn with the trajectory id of plan.json, the
// file-name-safe item id "<trajectory id>__turn<N>", and on demand the prompt it was written
// under (trajectories/ID.json: the system prompt and the task message).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/json_io.h"
#include "core/result.h"
#include "metrics/turn_record.h"

namespace ptxb::adapt {

struct RunTurn {
  TurnRecord record;
  std::string run_dir;
  std::string trajectory;  // the trajectory id (plan.json), or the key's id when not in the plan
  std::string id;          // "<trajectory>__turn<N>"
  bool in_plan = false;
  std::string file_base() const;  // RUN_DIR/turns/ID/turnN (+ .cu, .json)
};

// RUN_DIR/turns.jsonl (a torn last line is not committed) joined with RUN_DIR/plan.json.
Result<std::vector<RunTurn>> read_run_turns(const std::string& run_dir);

// The turns a selection step (`fixit mine`, `kernelgen collect`) passed over, for its manifest:
// one {"id", "reason", "detail"?} entry each, and the count per reason.
struct SkippedTurns {
  Json entries = Json::array();
  std::map<std::string, int> by_reason;

  void add(const std::string& id, const std::string& reason, const std::string& detail);
};

struct TurnPrompt {
  std::string system_prompt;
  std::string task_message;
};

// The first two messages of trajectories/ID.json, read once per trajectory.
class TrajectoryPrompts {
 public:
  // nullopt when the file is missing or does not start with two string messages.
  std::optional<TurnPrompt> get(const RunTurn& turn);

 private:
  std::map<std::string, std::optional<TurnPrompt>> cache_;  // "RUN_DIR\nID" -> prompt
};

// Whether `path` exists and holds no bytes: a step that selected nothing writes an empty
// .jsonl, which read_jsonl_file rejects, but which is a valid empty set for the next step.
Result<bool> is_empty_file(const std::string& path);

// The records of a step's .jsonl file, T::from_json(line, "PATH:N") each; an empty file is a
// valid, empty set (is_empty_file).
template <typename T>
Result<std::vector<T>> read_step_records(const std::string& path) {
  std::vector<T> records;
  PTXB_ASSIGN_OR_RETURN(bool empty, is_empty_file(path));
  if (empty) return records;
  PTXB_ASSIGN_OR_RETURN(std::vector<Json> lines, read_jsonl_file(path));
  for (std::size_t i = 0; i < lines.size(); ++i) {
    PTXB_ASSIGN_OR_RETURN(T record, T::from_json(lines[i], fmt::format("{}:{}", path, i + 1)));
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace ptxb::adapt
