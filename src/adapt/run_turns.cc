#include "adapt/run_turns.h"

#include <filesystem>

#include "core/fs.h"
#include "core/json_fields.h"

namespace ptxb::adapt {
namespace {

constexpr std::size_t kMaxTurnsFileBytes = 64u << 20;  // turns.jsonl, as `report` reads it

std::string trajectory_key_text(const TrajectoryKey& k) {
  return k.model + "\n" + k.arch + "\n" + k.definition + "\n" + k.workload + "\n" + k.variant +
         "\n" + k.trajectory;
}

// key (model, definition, variant, trajectory) -> trajectory id, from RUN_DIR/plan.json.
Result<std::map<std::string, std::string>> plan_trajectory_ids(const std::string& run_dir) {
  PTXB_ASSIGN_OR_RETURN(Json plan, read_json_file(run_dir + "/plan.json"));
  if (!plan.contains("trajectories") || !plan["trajectories"].is_array())
    return make_error("parse", "{}/plan.json: $.trajectories: expected an array", run_dir);
  std::map<std::string, std::string> ids;
  for (const Json& t : plan["trajectories"]) {
    TrajectoryKey key;
    std::string id;
    FieldReader r(t, "$.trajectories[]");
    r.required("id", id).required("model", key.model).required("arch", key.arch);
    r.required("definition", key.definition).required("workload", key.workload);
    r.required("variant", key.variant).required("trajectory", key.trajectory);
    if (!r.status().ok())
      return make_error("parse", "{}/plan.json: {}", run_dir, r.status().error().message);
    ids[trajectory_key_text(key)] = id;
  }
  return ids;
}

}  // namespace

std::string RunTurn::file_base() const {
  return fmt::format("{}/turns/{}/turn{}", run_dir, trajectory, record.turn);
}

Result<std::vector<RunTurn>> read_run_turns(const std::string& run_dir) {
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(run_dir + "/turns.jsonl", kMaxTurnsFileBytes));
  text.resize(committed_jsonl_length(text));  // a torn last line is not committed
  PTXB_ASSIGN_OR_RETURN(std::vector<TurnRecord> records,
                        parse_turns_jsonl(text, run_dir + "/turns.jsonl"));
  PTXB_ASSIGN_OR_RETURN(auto ids, plan_trajectory_ids(run_dir));
  std::vector<RunTurn> turns;
  turns.reserve(records.size());
  for (TurnRecord& record : records) {
    RunTurn t;
    auto id_it = ids.find(trajectory_key_text(record.key));
    t.in_plan = id_it != ids.end();
    t.trajectory = t.in_plan ? id_it->second : record.key.trajectory;
    t.id = fmt::format("{}__turn{}", t.trajectory, record.turn);
    t.run_dir = run_dir;
    t.record = std::move(record);
    turns.push_back(std::move(t));
  }
  return turns;
}

std::optional<TurnPrompt> TrajectoryPrompts::get(const RunTurn& turn) {
  const std::string key = turn.run_dir + "\n" + turn.trajectory;
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  std::optional<TurnPrompt> prompt;
  auto doc = read_json_file(fmt::format("{}/trajectories/{}.json", turn.run_dir, turn.trajectory));
  if (doc.ok() && doc->is_object() && doc->contains("messages") && (*doc)["messages"].is_array() &&
      (*doc)["messages"].size() >= 2) {
    const Json& messages = (*doc)["messages"];
    auto content = [&](std::size_t i) {
      return messages[i].is_object() ? messages[i].value("content", Json()) : Json();
    };
    const Json system = content(0), task = content(1);
    if (system.is_string() && task.is_string())
      prompt = TurnPrompt{system.get<std::string>(), task.get<std::string>()};
  }
  cache_[key] = prompt;
  return prompt;
}

Result<bool> is_empty_file(const std::string& path) {
  std::error_code error;
  const auto size = std::filesystem::file_size(path, error);
  if (error) return make_error("io", "{}: {}", path, error.message());
  return size == 0;
}

void SkippedTurns::add(const std::string& id, const std::string& reason,
                       const std::string& detail) {
  Json entry{{"id", id}, {"reason", reason}};
  if (!detail.empty()) entry["detail"] = detail;
  entries.push_back(std::move(entry));
  ++by_reason[reason];
}

}  // namespace ptxb::adapt
