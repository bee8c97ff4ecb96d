#include "adapt/failure_mining.h"

#include <algorithm>
#include <tuple>

#include "adapt/run_turns.h"
#include "adapt/source_tokens.h"
#include "core/fs.h"
#include "core/json_fields.h"
#include "metrics/turn_record.h"

namespace ptxb::adapt {
namespace {

constexpr std::size_t kMaxKernelBytes = 1u << 20;  // CompileOptions::max_source_bytes

struct Candidate {
  MinedFailure failure;
  std::string skip_reason;  // "" while selectable
};

}  // namespace

const std::vector<std::string>& all_error_types() {
  static const std::vector<std::string> types = {"compile", "runtime", "memory", "numerical",
                                                 "timeout"};
  return types;
}

std::string error_type_of(const std::string& status) {
  if (status == "COMPILE_ERROR") return "compile";
  if (status == "RUNTIME_ERROR") return "runtime";
  if (status == "MEMORY_ERROR") return "memory";
  if (status == "INCORRECT_NUMERICAL" || status == "INCORRECT_SHAPE" || status == "INCORRECT_DTYPE")
    return "numerical";
  if (status == "TIMEOUT") return "timeout";
  return "";
}

Json MinedFailure::to_json() const {
  return Json{{"id", id},
              {"run_dir", run_dir},
              {"trajectory", trajectory},
              {"model", key.model},
              {"arch", key.arch},
              {"definition", key.definition},
              {"workload", key.workload},
              {"workload_name", workload_name},
              {"variant", key.variant},
              {"trajectory_key", key.trajectory},
              {"task", task},
              {"turn", turn},
              {"status", status},
              {"error_type", error_type},
              {"canonical_sha256", canonical_hash},
              {"system_prompt", system_prompt},
              {"task_message", task_message},
              {"kernel", kernel},
              {"feedback", feedback}};
}

Result<MinedFailure> MinedFailure::from_json(const Json& json, const std::string& origin) {
  MinedFailure f;
  FieldReader r(json);
  r.required("id", f.id).required("run_dir", f.run_dir).required("trajectory", f.trajectory);
  r.required("model", f.key.model).required("arch", f.key.arch);
  r.required("definition", f.key.definition).required("workload", f.key.workload);
  r.required("workload_name", f.workload_name).required("variant", f.key.variant);
  r.required("trajectory_key", f.key.trajectory).required("task", f.task);
  r.required("turn", f.turn).required("status", f.status).required("error_type", f.error_type);
  r.required("canonical_sha256", f.canonical_hash).required("system_prompt", f.system_prompt);
  r.required("task_message", f.task_message).required("kernel", f.kernel);
  r.required("feedback", f.feedback);
  if (!r.status().ok()) return make_error("parse", "{}: {}", origin, r.status().error().message);
  return f;
}

Result<std::vector<MinedFailure>> read_failures(const std::string& path) {
  // `mine` writes an empty file when nothing failed: a valid, empty set for the next steps.
  return read_step_records<MinedFailure>(path);
}

Result<MiningResult> mine_failures(const std::vector<std::string>& run_dirs,
                                   const MiningOptions& options) {
  for (const auto& type : options.error_types)
    if (std::find(all_error_types().begin(), all_error_types().end(), type) ==
        all_error_types().end())
      return make_error("usage",
                        "unknown error type '{}' (known: compile, runtime, memory, "
                        "numerical, timeout)",
                        type);
  std::vector<Candidate> candidates;
  SkippedTurns skipped;
  std::set<std::string> seen_ids;
  int scanned = 0;

  TrajectoryPrompts prompts;
  for (const std::string& run_dir : run_dirs) {
    PTXB_ASSIGN_OR_RETURN(std::vector<RunTurn> turns, read_run_turns(run_dir));
    for (const RunTurn& turn : turns) {
      ++scanned;
      const TurnRecord& record = turn.record;
      const std::string& id = turn.id;
      const std::string status = record.status_name();
      const std::string type = error_type_of(status);
      if (type.empty()) {
        skipped.add(id, status == "PASSED" ? "passed" : "status_never_mined", status);
        continue;
      }
      if (!options.error_types.count(type)) {
        skipped.add(id, "error_type_not_selected", type);
        continue;
      }
      if (options.max_source_turn > 0 && record.turn > options.max_source_turn) {
        skipped.add(id, "after_max_source_turn", std::to_string(record.turn));
        continue;
      }
      if (!turn.in_plan) {
        skipped.add(id, "not_in_plan", run_dir + "/plan.json");
        continue;
      }
      if (!seen_ids.insert(id).second) {
        skipped.add(id, "same_turn_in_two_run_dirs", run_dir);
        continue;
      }
      const std::string turn_base = turn.file_base();
      auto kernel = read_file(turn_base + ".cu", kMaxKernelBytes);
      auto detail = read_json_file(turn_base + ".json");
      if (!kernel.ok()) {
        skipped.add(id, "kernel_file_missing", kernel.error().message);
        continue;
      }
      if (!detail.ok() || !detail->contains("feedback") || !(*detail)["feedback"].is_string()) {
        skipped.add(id, "turn_detail_missing", turn_base + ".json");
        continue;
      }
      const std::optional<TurnPrompt> prompt = prompts.get(turn);
      if (!prompt) {
        skipped.add(id, "trajectory_file_missing",
                    fmt::format("trajectories/{}.json", turn.trajectory));
        continue;
      }
      Candidate c;
      MinedFailure& f = c.failure;
      f.id = id;
      f.run_dir = run_dir;
      f.trajectory = turn.trajectory;
      f.key = record.key;
      f.workload_name = record.workload_name;
      f.task = record.key.definition;
      f.turn = record.turn;
      f.status = status;
      f.error_type = type;
      f.system_prompt = prompt->system_prompt;
      f.task_message = prompt->task_message;
      f.kernel = std::move(kernel.value());
      f.feedback = (*detail)["feedback"].get<std::string>();
      f.canonical_hash = canonical_source_hash(f.kernel);
      candidates.push_back(std::move(c));
    }
  }

  // Dedup by canonical source, the earliest (task, turn, id) kept.
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(a.failure.task, a.failure.turn, a.failure.id) <
           std::tie(b.failure.task, b.failure.turn, b.failure.id);
  });
  std::map<std::string, std::string> first_with_hash;
  for (Candidate& c : candidates) {
    auto [it, inserted] = first_with_hash.try_emplace(c.failure.canonical_hash, c.failure.id);
    if (!inserted) {
      c.skip_reason = "duplicate_source";
      skipped.add(c.failure.id, "duplicate_source", "same canonical source as " + it->second);
    }
  }

  // task -> error type -> queue (already in turn, id order).
  std::map<std::string, std::map<std::string, std::vector<Candidate*>>> groups;
  for (Candidate& c : candidates)
    if (c.skip_reason.empty()) groups[c.failure.task][c.failure.error_type].push_back(&c);
  MiningResult result;
  std::map<std::string, std::map<std::string, int>> by_task;
  for (auto& [task, types] : groups) {
    std::map<std::string, std::size_t> next;
    int taken_for_task = 0;
    bool progressed = true;
    while (progressed && (options.per_task_cap == 0 || taken_for_task < options.per_task_cap)) {
      progressed = false;
      for (auto& [type, queue] : types) {
        if (options.per_task_cap > 0 && taken_for_task >= options.per_task_cap) break;
        std::size_t& at = next[type];
        if (at >= queue.size()) continue;
        result.taken.push_back(queue[at]->failure);
        queue[at]->skip_reason = "taken";
        ++by_task[task][type];
        ++at;
        ++taken_for_task;
        progressed = true;
      }
    }
    for (auto& [type, queue] : types)
      for (Candidate* c : queue)
        if (c->skip_reason.empty())
          skipped.add(c->failure.id, "over_per_task_cap", std::to_string(options.per_task_cap));
  }

  Json taken = Json::array();
  for (const auto& f : result.taken)
    taken.push_back(Json{{"id", f.id},
                         {"task", f.task},
                         {"error_type", f.error_type},
                         {"status", f.status},
                         {"turn", f.turn},
                         {"canonical_sha256", f.canonical_hash}});
  Json types = Json::array();
  for (const auto& t : options.error_types) types.push_back(t);
  Json counts{{"scanned_turns", scanned},
              {"taken", result.taken.size()},
              {"skipped", skipped.entries.size()},
              {"skipped_by_reason", skipped.by_reason}};
  result.manifest = Json{{"format", "ptxbench-fixit-mine/1"},
                         {"run_dirs", run_dirs},
                         {"options",
                          {{"per_task_cap", options.per_task_cap},
                           {"max_source_turn", options.max_source_turn},
                           {"error_types", types}}},
                         {"counts", counts},
                         {"taken_by_task_and_type", by_task},
                         {"taken", taken},
                         {"skipped", skipped.entries}};
  return result;
}

}  // namespace ptxb::adapt
