#include "metrics/turn_record.h"

#include <algorithm>
#include <map>

#include "core/fs.h"
#include "core/strings.h"
#include "eval/eval_types.h"

namespace ptxb {
namespace {

// A run of 5 tasks × 12 trajectories × 8 turns is ~500 short lines; 64 MB leaves room for
// long sweeps while still refusing a stray binary file.
constexpr std::size_t kMaxRunFileBytes = 64u << 20;

Result<std::string> required_string(const Json& json, const char* field) {
  if (!json.contains(field)) return make_error("parse", "$.{}: missing", field);
  const Json& value = json.at(field);
  // Trajectory ids are often written as integers; accept them as their decimal text.
  if (value.is_number_integer()) return std::to_string(value.get<std::int64_t>());
  if (!value.is_string() || value.get<std::string>().empty())
    return make_error("parse", "$.{}: expected a non-empty string", field);
  return value.get<std::string>();
}

Result<double> optional_number(const Json& json, const char* parent, const char* field) {
  if (!json.contains(field) || json.at(field).is_null()) return 0.0;
  if (!json.at(field).is_number())
    return make_error("parse", "$.{}.{}: expected a number", parent, field);
  return json.at(field).get<double>();
}

Result<TrajectoryKey> parse_key(const Json& json) {
  TrajectoryKey key;
  PTXB_ASSIGN_OR_RETURN(key.model, required_string(json, "model"));
  PTXB_ASSIGN_OR_RETURN(key.arch, required_string(json, "arch"));
  PTXB_ASSIGN_OR_RETURN(key.definition, required_string(json, "definition"));
  PTXB_ASSIGN_OR_RETURN(key.workload, required_string(json, "workload"));
  PTXB_ASSIGN_OR_RETURN(key.variant, required_string(json, "variant"));
  PTXB_ASSIGN_OR_RETURN(key.trajectory, required_string(json, "trajectory"));
  return key;
}

bool known_verdict(const std::string& verdict) {
  for (std::string_view known :
       {kInstNotRun, kInstStaticAbsent, kInstDynamicNotExecuted, kInstDynamicPresent, kInstUnknown})
    if (verdict == known) return true;
  return false;
}

std::string workload_name_of(const Json& json, const TrajectoryKey& key) {
  if (json.contains("workload_name") && json["workload_name"].is_string())
    return json["workload_name"].get<std::string>();
  return key.workload;
}

std::string describe(const TrajectoryKey& key) {
  return fmt::format("{}/{}/{}/{}/{}/{}", key.model, key.arch, key.definition, key.workload,
                     key.variant, key.trajectory);
}

// Parses one JSON document per non-blank line, keeping the line number for errors.
template <typename T, typename ParseLine>
Result<std::vector<T>> parse_lines(const std::string& text, const std::string& origin,
                                   ParseLine parse_line) {
  std::vector<T> records;
  std::vector<std::string> lines = split_lines(text);
  for (std::size_t index = 0; index < lines.size(); ++index) {
    if (trim(lines[index]).empty()) continue;
    std::string where = fmt::format("{}:{}", origin, index + 1);
    auto json = parse_json(lines[index], where);
    if (!json.ok()) return json.error();
    Result<T> record = parse_line(json.value());
    if (!record.ok()) return record.error().with_context(where);
    records.push_back(std::move(record).value());
  }
  return records;
}

}  // namespace

std::string TurnRecord::status_name() const {
  return status ? std::string(ptxb_status_name(*status)) : kNoCodeStatus;
}

Json TurnRecord::to_json() const {
  Json json = Json::object();
  json["model"] = key.model;
  json["arch"] = key.arch;
  json["definition"] = key.definition;
  json["workload"] = key.workload;
  json["workload_name"] = workload_name;
  json["variant"] = key.variant;
  json["trajectory"] = key.trajectory;
  json["turn"] = turn;
  json["kernel_present"] = kernel_present;
  json["no_code_reason"] = kernel_present ? Json(nullptr) : Json(no_code_reason);
  json["status"] = status_name();
  json["reason"] = reason.empty() ? Json(nullptr) : Json(reason);
  json["speedup"] = speedup ? Json(*speedup) : Json(nullptr);
  json["target_instructions"] = target_instructions;
  json["tokens"] = {{"prompt", tokens.prompt},
                    {"completion", tokens.completion},
                    {"reasoning", tokens.reasoning}};
  json["wall_s"] = {{"model", model_wall_s}, {"eval", eval_wall_s}};
  return json;
}

Result<TurnRecord> TurnRecord::from_json(const Json& json) {
  if (!json.is_object()) return make_error("parse", "$: expected an object");
  TurnRecord record;
  PTXB_ASSIGN_OR_RETURN(record.key, parse_key(json));
  record.workload_name = workload_name_of(json, record.key);

  if (!json.contains("turn") || !json["turn"].is_number_integer() || json["turn"].get<int>() < 1)
    return make_error("parse", "$.turn: expected an integer >= 1 (turns are 1-based)");
  record.turn = json["turn"].get<int>();

  PTXB_ASSIGN_OR_RETURN(std::string status, required_string(json, "status"));
  if (status != kNoCodeStatus) {
    record.status = parse_ptxb_status(status);
    if (!record.status) return make_error("parse", "$.status: unknown status \"{}\"", status);
  }
  // kernel_present is redundant with the status; when written it must agree, so a record
  // can never say "no kernel" and "COMPILE_ERROR" at once.
  record.kernel_present = record.status.has_value();
  if (json.contains("kernel_present")) {
    if (!json["kernel_present"].is_boolean())
      return make_error("parse", "$.kernel_present: expected a boolean");
    if (json["kernel_present"].get<bool>() != record.kernel_present)
      return make_error("parse", "$.kernel_present: {} contradicts status {}",
                        json["kernel_present"].get<bool>(), status);
  }
  if (json.contains("reason") && !json["reason"].is_null()) {
    if (!json["reason"].is_string())
      return make_error("parse", "$.reason: expected a string or null");
    record.reason = json["reason"].get<std::string>();
  }
  if (json.contains("no_code_reason") && json["no_code_reason"].is_string())
    record.no_code_reason = json["no_code_reason"].get<std::string>();

  if (json.contains("speedup") && !json["speedup"].is_null()) {
    if (!json["speedup"].is_number() || json["speedup"].get<double>() < 0)
      return make_error("parse", "$.speedup: expected a non-negative number or null");
    record.speedup = json["speedup"].get<double>();
  }
  if (json.contains("target_instructions")) {
    if (!json["target_instructions"].is_string() ||
        !known_verdict(json["target_instructions"].get<std::string>()))
      return make_error("parse",
                        "$.target_instructions: expected one of not_run, static_absent, "
                        "dynamic_not_executed, dynamic_present, unknown");
    record.target_instructions = json["target_instructions"].get<std::string>();
  }

  if (json.contains("tokens")) {
    const Json& tokens = json["tokens"];
    if (!tokens.is_object()) return make_error("parse", "$.tokens: expected an object");
    for (auto [field, slot] : {std::pair{"prompt", &record.tokens.prompt},
                               std::pair{"completion", &record.tokens.completion},
                               std::pair{"reasoning", &record.tokens.reasoning}}) {
      if (!tokens.contains(field) || tokens[field].is_null()) continue;
      if (!tokens[field].is_number_integer() || tokens[field].get<std::int64_t>() < 0)
        return make_error("parse", "$.tokens.{}: expected a non-negative integer", field);
      *slot = tokens[field].get<std::int64_t>();
    }
  }
  if (json.contains("wall_s")) {
    if (!json["wall_s"].is_object()) return make_error("parse", "$.wall_s: expected an object");
    PTXB_ASSIGN_OR_RETURN(record.model_wall_s, optional_number(json["wall_s"], "wall_s", "model"));
    PTXB_ASSIGN_OR_RETURN(record.eval_wall_s, optional_number(json["wall_s"], "wall_s", "eval"));
  }
  return record;
}

Result<std::vector<TurnRecord>> parse_turns_jsonl(const std::string& text,
                                                  const std::string& origin) {
  return parse_lines<TurnRecord>(text, origin,
                                 [](const Json& json) { return TurnRecord::from_json(json); });
}

Result<std::vector<Trajectory>> load_run_dirs(const std::vector<std::string>& run_dirs) {
  if (run_dirs.empty()) return make_error("usage", "no run directory given");
  std::map<TrajectoryKey, Trajectory> trajectories;
  for (const std::string& run_dir : run_dirs) {
    if (!is_directory(run_dir)) return make_error("io", "{}: not a directory", run_dir);
    std::string turns_path = run_dir + "/turns.jsonl";
    PTXB_ASSIGN_OR_RETURN(std::string turns_text, read_file(turns_path, kMaxRunFileBytes));

    std::string declared_path = run_dir + "/trajectories.jsonl";
    if (path_exists(declared_path)) {
      PTXB_ASSIGN_OR_RETURN(std::string declared_text, read_file(declared_path, kMaxRunFileBytes));
      auto parse_declaration = [&](const Json& json) -> Result<Trajectory> {
        if (!json.is_object()) return make_error("parse", "$: expected an object");
        PTXB_ASSIGN_OR_RETURN(TrajectoryKey key, parse_key(json));
        return Trajectory{key, workload_name_of(json, key), run_dir, {}};
      };
      PTXB_ASSIGN_OR_RETURN(
          auto declared, parse_lines<Trajectory>(declared_text, declared_path, parse_declaration));
      for (Trajectory& trajectory : declared) {
        TrajectoryKey key = trajectory.key;
        if (!trajectories.emplace(key, std::move(trajectory)).second)
          return make_error("parse", "{}: trajectory {} declared twice", declared_path,
                            describe(key));
      }
    }

    PTXB_ASSIGN_OR_RETURN(auto turns, parse_turns_jsonl(turns_text, turns_path));
    for (TurnRecord& turn : turns) {
      turn.run_dir = run_dir;
      auto [it, inserted] = trajectories.try_emplace(turn.key);
      Trajectory& trajectory = it->second;
      if (inserted) trajectory = Trajectory{turn.key, turn.workload_name, run_dir, {}};
      for (const TurnRecord& existing : trajectory.turns)
        if (existing.turn == turn.turn)
          return make_error("parse", "{}: trajectory {} has turn {} twice", turns_path,
                            describe(turn.key), turn.turn);
      trajectory.turns.push_back(std::move(turn));
    }
  }

  std::vector<Trajectory> result;
  result.reserve(trajectories.size());
  for (auto& [key, trajectory] : trajectories) {
    std::sort(trajectory.turns.begin(), trajectory.turns.end(),
              [](const TurnRecord& a, const TurnRecord& b) { return a.turn < b.turn; });
    result.push_back(std::move(trajectory));
  }
  return result;
}

}  // namespace ptxb
