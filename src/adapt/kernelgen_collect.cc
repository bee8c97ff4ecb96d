#include "adapt/kernelgen_collect.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "adapt/fixit_work.h"
#include "adapt/outcome_log.h"
#include "adapt/run_turns.h"
#include "adapt/source_tokens.h"
#include "core/fs.h"
#include "core/json_fields.h"
#include "eval/eval_types.h"

namespace ptxb::adapt {
namespace {

constexpr std::size_t kMaxCollectedKernelBytes = 1u << 20;  // CompileOptions::max_source_bytes

// Why a turn is not a KernelGen source, or "" when it is a candidate. Cheap checks first:
// most turns of a run fail or do not reach the threshold.
std::string kernelgen_skip_reason(const TurnRecord& record, const CollectOptions& options,
                                  std::string& detail) {
  if (!record.correct()) {
    detail = record.status_name();
    return "not_passed";
  }
  if (record.target_instructions != kInstDynamicPresent) {
    detail = record.target_instructions;
    return "target_not_executed";
  }
  if (!record.speedup) {
    detail = "not measured";
    return "speedup_not_measured";
  }
  if (*record.speedup < options.min_speedup) {
    detail = fmt::format("{} < {}", *record.speedup, options.min_speedup);
    return "below_min_speedup";
  }
  return "";
}

}  // namespace

Json CollectedKernel::to_json() const {
  return Json{{"id", id},
              {"run_dir", run_dir},
              {"trajectory", trajectory},
              {"model", model},
              {"task", task},
              {"turn", turn},
              {"speedup", speedup},
              {"canonical_sha256", canonical_hash},
              {"system_prompt", system_prompt},
              {"task_message", task_message},
              {"kernel", kernel}};
}

Result<CollectedKernel> CollectedKernel::from_json(const Json& json, const std::string& origin) {
  CollectedKernel k;
  FieldReader r(json);
  r.required("id", k.id).required("run_dir", k.run_dir).required("trajectory", k.trajectory);
  r.required("model", k.model).required("task", k.task).required("turn", k.turn);
  r.required("speedup", k.speedup).required("canonical_sha256", k.canonical_hash);
  r.required("system_prompt", k.system_prompt).required("task_message", k.task_message);
  r.required("kernel", k.kernel);
  if (!r.status().ok()) return make_error("parse", "{}: {}", origin, r.status().error().message);
  return k;
}

Result<CollectResult> collect_kernels(const std::vector<std::string>& run_dirs,
                                      const CollectOptions& options) {
  std::vector<CollectedKernel> candidates;
  SkippedTurns skipped;
  std::set<std::string> seen_ids;
  int scanned = 0;
  TrajectoryPrompts prompts;
  for (const std::string& run_dir : run_dirs) {
    PTXB_ASSIGN_OR_RETURN(std::vector<RunTurn> turns, read_run_turns(run_dir));
    for (const RunTurn& turn : turns) {
      ++scanned;
      std::string detail;
      if (std::string reason = kernelgen_skip_reason(turn.record, options, detail);
          !reason.empty()) {
        skipped.add(turn.id, reason, detail);
        continue;
      }
      if (!turn.in_plan) {
        skipped.add(turn.id, "not_in_plan", run_dir + "/plan.json");
        continue;
      }
      if (!seen_ids.insert(turn.id).second) {
        skipped.add(turn.id, "same_turn_in_two_run_dirs", run_dir);
        continue;
      }
      auto kernel = read_file(turn.file_base() + ".cu", kMaxCollectedKernelBytes);
      if (!kernel.ok()) {
        skipped.add(turn.id, "kernel_file_missing", kernel.error().message);
        continue;
      }
      const std::optional<TurnPrompt> prompt = prompts.get(turn);
      if (!prompt) {
        skipped.add(turn.id, "trajectory_file_missing",
                    fmt::format("trajectories/{}.json", turn.trajectory));
        continue;
      }
      CollectedKernel k;
      k.id = turn.id;
      k.run_dir = run_dir;
      k.trajectory = turn.trajectory;
      k.model = turn.record.key.model;
      k.task = turn.record.key.definition;
      k.turn = turn.record.turn;
      k.speedup = *turn.record.speedup;
      k.system_prompt = prompt->system_prompt;
      k.task_message = prompt->task_message;
      k.kernel = std::move(kernel.value());
      k.canonical_hash = canonical_source_hash(k.kernel);
      candidates.push_back(std::move(k));
    }
  }

  // Per task: fastest first, then earliest turn, then id (a total order: deterministic).
  std::sort(candidates.begin(), candidates.end(),
            [](const CollectedKernel& a, const CollectedKernel& b) {
              return std::tie(a.task, b.speedup, a.turn, a.id) <
                     std::tie(b.task, a.speedup, b.turn, b.id);
            });
  CollectResult result;
  std::map<std::string, std::string> first_with_hash;
  std::map<std::string, int> by_task;
  for (CollectedKernel& k : candidates) {
    auto [twin, inserted] = first_with_hash.try_emplace(k.canonical_hash, k.id);
    if (!inserted) {
      skipped.add(k.id, "duplicate_source", "same canonical source as " + twin->second);
      continue;
    }
    if (options.per_task_cap > 0 && by_task[k.task] >= options.per_task_cap) {
      skipped.add(k.id, "over_per_task_cap", std::to_string(options.per_task_cap));
      continue;
    }
    ++by_task[k.task];
    result.taken.push_back(std::move(k));
  }

  Json taken = Json::array();
  for (const auto& k : result.taken)
    taken.push_back(Json{{"id", k.id},
                         {"task", k.task},
                         {"turn", k.turn},
                         {"speedup", k.speedup},
                         {"canonical_sha256", k.canonical_hash}});
  result.manifest = Json{
      {"format", "ptxbench-kernelgen-collect/1"},
      {"run_dirs", run_dirs},
      {"options", {{"min_speedup", options.min_speedup}, {"per_task_cap", options.per_task_cap}}},
      {"counts",
       {{"scanned_turns", scanned},
        {"taken", result.taken.size()},
        {"skipped", skipped.entries.size()},
        {"skipped_by_reason", skipped.by_reason}}},
      {"taken_by_task", by_task},
      {"taken", taken},
      {"skipped", skipped.entries}};
  return result;
}

Result<std::vector<CollectedKernel>> read_collected(const std::string& work_dir) {
  const std::string path = work_dir + "/" + kKernelsFile;
  if (!path_exists(path))
    return make_error("usage",
                      "{}: no collected kernels here (run `ptxbench kernelgen collect RUN_DIR... "
                      "--out {}` first)",
                      path, work_dir);
  // `collect` writes an empty file when no turn qualified: a valid, empty set.
  return read_step_records<CollectedKernel>(path);
}

std::vector<RationaleItem> kernelgen_rationale_items(const std::vector<CollectedKernel>& kernels) {
  std::vector<RationaleItem> items;
  for (const CollectedKernel& k : kernels)
    items.push_back(RationaleItem{k.id, k.task_message, "", "", k.kernel});
  return items;
}

Result<std::vector<SftExample>> kernelgen_examples(const std::string& work_dir,
                                                   int& without_rationale) {
  PTXB_ASSIGN_OR_RETURN(auto kernels, read_collected(work_dir));
  PTXB_ASSIGN_OR_RETURN(auto log, OutcomeLog::open(work_dir + "/" + kRationalesLog));
  const auto rationales = log->entries();
  std::vector<SftExample> examples;
  without_rationale = 0;
  for (const CollectedKernel& k : kernels) {
    auto r = rationales.find(k.id);
    if (r == rationales.end() || r->second.value("outcome", "") != "kept") {
      ++without_rationale;
      continue;
    }
    SftExample e;
    e.id = k.id;
    e.kind = "kernelgen";
    e.task = k.task;
    e.system = k.system_prompt;
    e.task_message = k.task_message;
    e.analysis = r->second.value("analysis", "");
    e.plan = r->second.value("plan", "");
    e.fixed_kernel = k.kernel;
    examples.push_back(std::move(e));
  }
  return examples;
}

}  // namespace ptxb::adapt
