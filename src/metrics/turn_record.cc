#include "metrics/turn_record.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "core/fs.h"
#include "core/json_fields.h"
#include "core/strings.h"
#include "eval/eval_types.h"

namespace ptxb {
namespace {

// A run of 5 tasks × 12 trajectories × 8 turns is ~500 short lines; 64 MB leaves room for
// long sweeps while still refusing a stray binary file.
constexpr std::size_t kMaxRunFileBytes = 64u << 20;

// An identifying string: non-empty. Trajectory ids are often written as integers; they are
// accepted as their decimal text.
auto id_string(std::string& out) {
  return [&out](const Json& value, const std::string& path) -> Status {
    if (value.is_number_integer()) {
      out = std::to_string(value.get<std::int64_t>());
      return ok_status();
    }
    if (!value.is_string() || value.get<std::string>().empty())
      return make_error("parse", "{}: expected a non-empty string", path);
    out = value.get<std::string>();
    return ok_status();
  };
}

void read_key(FieldReader& r, TrajectoryKey& key) {
  r.custom("model", true, id_string(key.model)).custom("arch", true, id_string(key.arch));
  r.custom("definition", true, id_string(key.definition));
  r.custom("workload", true, id_string(key.workload));
  r.custom("variant", true, id_string(key.variant));
  r.custom("trajectory", true, id_string(key.trajectory));
}

// Optional: the workload uuid when absent (records written before names were recorded).
void read_workload_name(FieldReader& r, const TrajectoryKey& key, std::string& name) {
  name = key.workload;
  r.optional("workload_name", name);
}

bool known_verdict(const std::string& verdict) {
  for (std::string_view known :
       {kInstNotRun, kInstStaticAbsent, kInstDynamicNotExecuted, kInstDynamicPresent, kInstUnknown})
    if (verdict == known) return true;
  return false;
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
  // Written only when there is one, so records of earlier runs round-trip unchanged.
  if (speedup_low && speedup_high) json["speedup_interval"] = {*speedup_low, *speedup_high};
  if (energy_ratio) json["energy_ratio"] = *energy_ratio;
  if (also_reference_speedup) json["also_reference_speedup"] = *also_reference_speedup;
  json["target_instructions"] = target_instructions;
  json["tokens"] = {{"prompt", tokens.prompt},
                    {"completion", tokens.completion},
                    {"reasoning", tokens.reasoning}};
  json["wall_s"] = {{"model", model_wall_s}, {"eval", eval_wall_s}};
  return json;
}

Result<TurnRecord> TurnRecord::from_json(const Json& json) {
  TurnRecord record;
  FieldReader r(json);
  read_key(r, record.key);
  read_workload_name(r, record.key, record.workload_name);
  r.required("turn", record.turn);
  std::string status;
  r.required("status", status);
  PTXB_RETURN_IF_ERROR(r.status());
  if (record.turn < 1)
    return make_error("parse", "$.turn: expected an integer >= 1 (turns are 1-based)");
  if (status != kNoCodeStatus) {
    record.status = parse_ptxb_status(status);
    if (!record.status) return make_error("parse", "$.status: unknown status \"{}\"", status);
  }
  // kernel_present is redundant with the status; when written it must agree, so a record
  // can never say "no kernel" and "COMPILE_ERROR" at once.
  record.kernel_present = record.status.has_value();
  std::optional<bool> kernel_present;
  r.optional("kernel_present", kernel_present);
  // Optional (null when none): the evaluation's reason, why no kernel, the speedup.
  r.optional("reason", record.reason).optional("no_code_reason", record.no_code_reason);
  r.optional("speedup", record.speedup);
  std::optional<std::vector<double>> interval;
  r.optional("speedup_interval", interval);
  r.optional("energy_ratio", record.energy_ratio);
  r.optional("also_reference_speedup", record.also_reference_speedup);
  // Optional: "not_run" when absent.
  r.optional("target_instructions", record.target_instructions);
  PTXB_RETURN_IF_ERROR(r.status());
  if (interval) {
    if (interval->size() != 2 || (*interval)[0] > (*interval)[1])
      return make_error("parse", "$.speedup_interval: expected [low, high] with low <= high");
    record.speedup_low = (*interval)[0];
    record.speedup_high = (*interval)[1];
  }
  if (kernel_present && *kernel_present != record.kernel_present)
    return make_error("parse", "$.kernel_present: {} contradicts status {}", *kernel_present,
                      status);
  if (record.speedup && *record.speedup < 0)
    return make_error("parse", "$.speedup: expected a non-negative number or null");
  if (!known_verdict(record.target_instructions))
    return make_error("parse",
                      "$.target_instructions: expected one of not_run, static_absent, "
                      "dynamic_not_executed, dynamic_present, unknown");

  // Optional, each part 0 when absent or null: token counts and wall times.
  if (r.has("tokens")) {
    FieldReader tokens(json["tokens"], r.path_of("tokens"));
    tokens.optional("prompt", record.tokens.prompt);
    tokens.optional("completion", record.tokens.completion);
    tokens.optional("reasoning", record.tokens.reasoning);
    PTXB_RETURN_IF_ERROR(tokens.status());
    for (auto [field, count] : {std::pair{"prompt", record.tokens.prompt},
                                std::pair{"completion", record.tokens.completion},
                                std::pair{"reasoning", record.tokens.reasoning}})
      if (count < 0)
        return make_error("parse", "$.tokens.{}: expected a non-negative integer", field);
  }
  if (r.has("wall_s")) {
    FieldReader wall(json["wall_s"], r.path_of("wall_s"));
    wall.optional("model", record.model_wall_s).optional("eval", record.eval_wall_s);
    PTXB_RETURN_IF_ERROR(wall.status());
  }
  return record;
}

Result<std::vector<TurnRecord>> parse_turns_jsonl(const std::string& text,
                                                  const std::string& origin) {
  return parse_lines<TurnRecord>(text, origin,
                                 [](const Json& json) { return TurnRecord::from_json(json); });
}

std::size_t committed_jsonl_length(std::string_view jsonl) {
  const std::size_t last_newline = jsonl.rfind('\n');
  return last_newline == std::string_view::npos ? 0 : last_newline + 1;
}

namespace {

// One turn file of `run_dir` into `trajectories`.
Status load_turn_file(const std::string& run_dir, const std::string& turns_path,
                      std::map<TrajectoryKey, Trajectory>& trajectories,
                      std::vector<std::string>* notes) {
  PTXB_ASSIGN_OR_RETURN(std::string turns_text, read_file(turns_path, kMaxRunFileBytes));
  if (const std::size_t committed = committed_jsonl_length(turns_text);
      committed < turns_text.size()) {
    const auto line = std::count(turns_text.begin(), turns_text.end(), '\n') + 1;
    if (notes != nullptr)
      notes->push_back(fmt::format(
          "{}:{}: torn last line ({} bytes without a newline: the run was stopped while "
          "writing it) left out; `ptxbench run --out {}` redoes that turn",
          turns_path, line, turns_text.size() - committed, run_dir));
    turns_text.resize(committed);
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
  return ok_status();
}

}  // namespace

Result<std::vector<std::string>> run_turn_files(const std::string& run_dir) {
  std::vector<std::string> files{run_dir + "/turns.jsonl"};
  // Shard folders (agent/shard.h): directories, so not list_files (regular files only).
  std::error_code ec;
  std::vector<std::string> shard_files;
  for (const auto& entry : std::filesystem::directory_iterator(run_dir + "/shards", ec)) {
    const std::string path = entry.path().string() + "/turns.jsonl";
    if (entry.is_directory() && path_exists(path)) shard_files.push_back(path);
  }
  std::sort(shard_files.begin(), shard_files.end());
  files.insert(files.end(), shard_files.begin(), shard_files.end());
  return files;
}

Result<std::vector<Trajectory>> load_run_dirs(const std::vector<std::string>& run_dirs,
                                              std::vector<std::string>* notes) {
  if (run_dirs.empty()) return make_error("usage", "no run directory given");
  std::map<TrajectoryKey, Trajectory> trajectories;
  for (const std::string& run_dir : run_dirs) {
    if (!is_directory(run_dir)) return make_error("io", "{}: not a directory", run_dir);
    std::string declared_path = run_dir + "/trajectories.jsonl";
    if (path_exists(declared_path)) {
      PTXB_ASSIGN_OR_RETURN(std::string declared_text, read_file(declared_path, kMaxRunFileBytes));
      auto parse_declaration = [&](const Json& json) -> Result<Trajectory> {
        Trajectory trajectory{{}, {}, run_dir, {}};
        FieldReader r(json);
        read_key(r, trajectory.key);
        read_workload_name(r, trajectory.key, trajectory.workload_name);
        PTXB_RETURN_IF_ERROR(r.status());
        return trajectory;
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

    PTXB_ASSIGN_OR_RETURN(const auto turn_files, run_turn_files(run_dir));
    for (const std::string& turns_path : turn_files)
      PTXB_RETURN_IF_ERROR(load_turn_file(run_dir, turns_path, trajectories, notes));
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
