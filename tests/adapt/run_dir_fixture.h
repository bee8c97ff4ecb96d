// A small `ptxbench run` directory written by hand for the adaptation tests: plan.json,
// turns.jsonl, trajectories/ID.json and turns/ID/turnN.{cu,json}, with the statuses a test
// asks for.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/fs.h"
#include "core/json_io.h"

namespace ptxb::testing {

struct FixtureTurn {
  std::string trajectory;  // "t0", "t1", ...
  int turn = 1;
  std::string status;  // PtxbStatus name
  std::string kernel;
  std::optional<double> speedup;                // null when not measured
  std::string target_instructions = "not_run";  // design.md §3.6 verdict
};

inline std::string fixture_id(const std::string& task, const std::string& trajectory) {
  return "student__" + task + "__base__" + trajectory;
}

// Writes the run directory `root` with every turn under `task`.
inline void write_fixture_run(const std::string& root, const std::string& task,
                              const std::vector<FixtureTurn>& turns) {
  make_directories(root + "/trajectories");
  Json plan_trajectories = Json::array();
  std::string lines;
  std::vector<std::string> seen;
  for (const FixtureTurn& t : turns) {
    const std::string id = fixture_id(task, t.trajectory);
    const Json key{{"model", "student"},   {"arch", "sm_90a"},  {"definition", task},
                   {"workload", "w-uuid"}, {"variant", "base"}, {"trajectory", t.trajectory}};
    if (std::find(seen.begin(), seen.end(), id) == seen.end()) {
      seen.push_back(id);
      Json entry = key;
      entry["id"] = id;
      plan_trajectories.push_back(entry);
      const Json doc{
          {"messages", Json::array({Json{{"role", "system"}, {"content", "SYSTEM " + task}},
                                    Json{{"role", "user"}, {"content", "# Task: " + task}}})}};
      write_file_atomic(root + "/trajectories/" + id + ".json", doc.dump());
    }
    Json record = key;
    record["turn"] = t.turn;
    record["kernel_present"] = true;
    record["status"] = t.status;
    record["speedup"] = t.speedup ? Json(*t.speedup) : Json(nullptr);
    record["target_instructions"] = t.target_instructions;
    lines += record.dump() + "\n";
    make_directories(root + "/turns/" + id);
    const std::string base = root + "/turns/" + id + "/turn" + std::to_string(t.turn);
    write_file_atomic(base + ".cu", t.kernel);
    write_file_atomic(base + ".json",
                      Json{{"feedback", "FEEDBACK " + t.status + " of " + t.trajectory}}.dump());
  }
  write_file_atomic(root + "/plan.json", Json{{"trajectories", plan_trajectories}}.dump());
  write_file_atomic(root + "/turns.jsonl", lines);
}

}  // namespace ptxb::testing
