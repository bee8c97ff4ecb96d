#include "report/run_details.h"

#include <algorithm>

#include "core/fs.h"
#include "core/sha256.h"
#include "core/strings.h"

namespace ptxb {
namespace {

// Kernel files and turn records are small; these caps only stop a corrupt file from filling
// memory while a report is rendered.
constexpr std::size_t kMaxTurnJsonBytes = std::size_t{64} << 20;
constexpr std::size_t kMaxKernelBytes = std::size_t{4} << 20;

// The value at a dotted path when every step exists and has the expected type; else nullptr.
const Json* json_find_path(const Json& root, const std::string& dotted) {
  const Json* node = &root;
  for (const std::string& key : split(dotted, '.')) {
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return node;
}

std::string json_string_at(const Json& root, const std::string& dotted) {
  const Json* node = json_find_path(root, dotted);
  return node && node->is_string() ? node->get<std::string>() : "";
}

std::optional<long long> json_integer_at(const Json& root, const std::string& dotted) {
  const Json* node = json_find_path(root, dotted);
  if (!node || !node->is_number()) return std::nullopt;
  return node->get<long long>();
}

std::string first_gpu_name(const std::string& run_dir, const std::vector<Trajectory>& all) {
  for (const Trajectory& trajectory : all) {
    if (trajectory.run_dir != run_dir) continue;
    for (const TurnRecord& turn : trajectory.turns) {
      std::string path =
          fmt::format("{}/turns/{}/turn{}.json", run_dir, trajectory.key.trajectory, turn.turn);
      if (!path_exists(path)) continue;
      auto json = read_json_file(path);
      if (!json.ok()) continue;
      std::string name = json_string_at(json.value(), "eval.environment.gpu_name");
      if (!name.empty()) return name;
    }
  }
  return "";
}

}  // namespace

RunProvenance load_provenance(const std::string& run_dir,
                              const std::vector<Trajectory>& trajectories) {
  RunProvenance run;
  run.run_dir = run_dir;
  for (const Trajectory& trajectory : trajectories) {
    if (trajectory.run_dir != run_dir) continue;
    for (const TurnRecord& turn : trajectory.turns) {
      ++run.recorded_turns;
      run.gpu_skipped_turns += turn.reason == "gpu_skipped";
    }
  }
  if (auto plan = read_json_file(run_dir + "/plan.json"); plan.ok()) {
    run.harness_version = json_string_at(plan.value(), "harness_version");
    run.planned_turns = json_integer_at(plan.value(), "config.turns");
    run.suite = json_string_at(plan.value(), "config.suite");
    if (const Json* tasks = json_find_path(plan.value(), "config.tasks");
        run.suite.empty() && tasks && tasks->is_array()) {
      std::vector<std::string> names;
      for (const Json& task : *tasks)
        if (task.is_string()) names.push_back(task.get<std::string>());
      run.suite = join(names, ", ");
    }
  } else {
    run.notes.push_back("no plan.json (planned turns taken from the records)");
  }
  if (auto summary = read_json_file(run_dir + "/summary.json"); summary.ok())
    run.date = json_string_at(summary.value(), "updated");
  run.gpu = first_gpu_name(run_dir, trajectories);
  return run;
}

int run_turn_count(const std::vector<RunProvenance>& runs,
                   const std::vector<Trajectory>& trajectories) {
  int turns = 0;
  for (const RunProvenance& run : runs) turns = std::max(turns, run.planned_turns.value_or(0));
  // A run without a plan (a golden directory) only says how far its records go.
  for (const Trajectory& trajectory : trajectories)
    for (const TurnRecord& turn : trajectory.turns) turns = std::max(turns, turn.turn);
  return turns;
}

std::map<int, TurnDetail> load_turn_details(const Trajectory& trajectory,
                                            const KernelRefResolver& resolve_kernel_ref) {
  std::map<int, TurnDetail> details;
  std::string dir = fmt::format("{}/turns/{}", trajectory.run_dir, trajectory.key.trajectory);
  for (const TurnRecord& record : trajectory.turns) {
    std::string path = fmt::format("{}/turn{}.json", dir, record.turn);
    if (!path_exists(path)) continue;
    auto text = read_file(path, kMaxTurnJsonBytes);
    if (!text.ok()) continue;
    auto parsed = parse_json(text.value(), path);
    if (!parsed.ok()) continue;
    const Json& json = parsed.value();
    TurnDetail detail;
    detail.turn = record.turn;
    detail.started = json_string_at(json, "started");
    detail.finished = json_string_at(json, "finished");
    detail.feedback = json_string_at(json, "feedback");
    detail.eval_message = json_string_at(json, "eval.message");
    detail.compile_status = json_string_at(json, "eval.compile.status");
    detail.compile_message = json_string_at(json, "eval.compile.message");
    detail.inst_verdict = json_string_at(json, "eval.target_instructions.verdict");
    detail.inst_reason = json_string_at(json, "eval.target_instructions.reason");
    if (const Json* statics = json_find_path(json, "eval.target_instructions.static");
        statics && statics->is_object()) {
      for (const auto& [family, count] : statics->items()) {
        FamilyCount entry{family, count.is_number() ? count.get<long long>() : 0, std::nullopt};
        entry.executed = json_integer_at(
            json, "eval.target_instructions.dynamic.families." + family + ".inst_executed");
        detail.families.push_back(entry);
      }
    }
    std::string kernel_file = json_string_at(json, "kernel_file");
    std::string kernel_ref = fmt::format("{}/turn{}.kernel.json", dir, record.turn);
    if (!kernel_file.empty() && path_exists(dir + "/" + kernel_file)) {
      auto source = read_file(dir + "/" + kernel_file, kMaxKernelBytes);
      if (source.ok())
        detail.source = source.value();
      else
        detail.source_note = source.error().message;
    } else if (path_exists(kernel_ref)) {
      // The kernel is a repository file (the replay model's answers): resolve it and check it
      // is byte for byte what was evaluated.
      auto ref = read_json_file(kernel_ref);
      auto source = ref.ok() && resolve_kernel_ref
                        ? resolve_kernel_ref(ref.value())
                        : Result<std::string>(make_error("report", "no resolver"));
      if (!source.ok()) {
        detail.source_note = kernel_ref + ": " + source.error().message;
      } else if (sha256_hex(source.value()) != json_string_at(ref.value(), "sha256")) {
        detail.source_note = kernel_ref +
                             ": the resolved kernel's sha256 differs from the "
                             "evaluated one (the repository changed since the run)";
      } else {
        detail.source = source.value();
        detail.source_note = "from " + json_string_at(ref.value(), "git.path") + " at " +
                             json_string_at(ref.value(), "git.commit").substr(0, 12);
      }
    } else if (record.kernel_present) {
      detail.source_note = "the run directory holds no kernel for this turn";
    }
    details.emplace(record.turn, std::move(detail));
  }
  return details;
}

}  // namespace ptxb
