// `ptxbench tasks list|show|solution`: the task suites as data (tasks/ plus --tasks-dir sets), and
// the expert kernels the replay model answers with.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>

#include "abi/signature.h"
#include "cli/command.h"
#include "core/strings.h"
#include "llm/replay_model.h"
#include "llm/solution_render.h"
#include "tasks/registry.h"

namespace ptxb::cli {
namespace {

// "A[8192,5120] B[7168,5120] -> C[8192,7168]"
std::string shape_summary(const Task& task) {
  const Json shapes = task.shapes_json();
  auto render = [&](const std::vector<TensorSpec>& tensors) {
    std::vector<std::string> parts;
    for (const auto& tensor : tensors) {
      std::vector<std::string> dims;
      for (const auto& dim : shapes.at(tensor.name)) dims.push_back(dim.dump());
      parts.push_back(tensor.is_scalar() ? tensor.name : tensor.name + "[" + join(dims, ",") + "]");
    }
    return join(parts, " ");
  };
  return render(task.definition.inputs) + " -> " + render(task.definition.outputs);
}

std::string human_count(double value) {
  const char* units[] = {"", "K", "M", "G", "T", "P"};
  int unit = 0;
  while (value >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  return fmt::format("{:.3g}{}", value, units[unit]);
}

Result<int> run_list(const GlobalOptions& globals, const std::string& suite, bool json) {
  PTXB_ASSIGN_OR_RETURN(auto registry, TaskRegistry::load(globals.tasks_dirs));
  if (!suite.empty()) {
    const auto suites = registry.suites();
    if (std::find(suites.begin(), suites.end(), suite) == suites.end())
      return make_error("not_found", "unknown suite '{}' (known: {})", suite, join(suites, ", "));
  }
  const auto tasks = registry.list(suite);
  if (json) {
    Json out = Json::object();
    out["suite"] = suite.empty() ? Json(nullptr) : Json(suite);
    out["tasks"] = Json::array();
    for (const Task* task : tasks) {
      Json entry = Json::object();
      entry["name"] = task->name;
      entry["suites"] = task->suites;
      entry["arch"] = task->arch;
      entry["definition"] = task->definition.name;
      entry["workload_uuid"] = task->workload.uuid;
      entry["workload_name"] = task->workload_name();
      Json axes = Json::object();
      for (const auto& [name, value] : task->workload.axes) axes[name] = value;
      entry["workload_axes"] = axes;
      entry["shapes"] = task->shapes_json();
      entry["target_families"] = task->target_families;
      entry["reference_backend"] = task->reference_backend;
      out["tasks"].push_back(entry);
    }
    print_json(out);
    return 0;
  }
  std::cout << fmt::format("{:<44} {:<14} {:<8} {:<15} {}\n", "TASK", "SUITES", "ARCH", "REFERENCE",
                           "WORKLOAD SHAPES");
  for (const Task* task : tasks)
    std::cout << fmt::format("{:<44} {:<14} {:<8} {:<15} {}\n", task->name, join(task->suites, ","),
                             task->arch, task->reference_backend, shape_summary(*task));
  std::cout << count_noun(static_cast<long long>(tasks.size()), "task") << "\n";
  return 0;
}

Result<int> run_show(const GlobalOptions& globals, const std::string& name, bool json) {
  PTXB_ASSIGN_OR_RETURN(auto registry, TaskRegistry::load(globals.tasks_dirs));
  PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(name));
  if (json) {
    print_json(task->to_json());
    return 0;
  }
  std::vector<std::string> axes;
  for (const auto& axis : task->definition.axes)
    axes.push_back(axis.name + "=" + std::to_string(task->axis_values().at(axis.name)) +
                   (axis.is_var ? " (var)" : ""));
  std::cout << "task:              " << task->name << "\n"
            << "suites:            " << join(task->suites, ", ") << "\n"
            << "definition:        " << task->definition.name << " (" << task->definition.op_type
            << ")\n"
            << "description:       " << task->definition.description << "\n"
            << "axes:              " << join(axes, ", ") << "\n"
            << "shapes:            " << shape_summary(*task) << "\n"
            << "workload:          " << task->workload_name() << " (uuid " << task->workload.uuid
            << ")\n"
            << "source workload:   "
            << (task->source_workload_uuid.empty() ? "-" : task->source_workload_uuid) << "\n"
            << "arch:              " << task->arch << "\n"
            << "target families:   " << join(task->target_families, ", ") << "\n"
            << "reference backend: " << task->reference_backend << "\n"
            << fmt::format("tolerance:         atol={} rtol={}\n", task->tolerance.atol,
                           task->tolerance.rtol)
            << "prompt variants:   " << join(task->prompt_variants, ", ") << "\n"
            << fmt::format("target speedup:    {}x\n", task->target_speedup)
            << fmt::format("FLOPs:             {:.6g} ({}FLOP, cost model {})\n", task->flops,
                           human_count(task->flops), task->cost_model)
            << fmt::format("minimum bytes:     {:.6g} ({}B)\n", task->min_bytes,
                           human_count(task->min_bytes))
            << "signature:         " << make_run_signature(task->definition).declaration() << "\n";
  return 0;
}

// The variant of rung file `rung` ("rung2_warp_specialized") for `task`: the replay turn whose
// source it is; else the task's own solutions/<task>/<rung>.cu; else the file of that name beside
// the task's last replay turn's source, with that turn's defines (a rung the replay model no
// longer answers with, e.g. rung 2 of a task whose last turn is rung 3, stays testable).
Result<SolutionVariant> rung_variant(const ReplayModel& replay, const std::string& solutions,
                                     const std::string& task, std::size_t turns,
                                     const std::string& rung) {
  const std::string file = rung + ".cu";
  for (std::size_t t = 1; t <= turns; ++t) {
    PTXB_ASSIGN_OR_RETURN(SolutionVariant v, replay.kernel_variant(task, static_cast<int>(t)));
    if (std::filesystem::path(v.source).filename() == file) return v;
  }
  if (std::filesystem::is_regular_file(std::filesystem::path(solutions) / task / file))
    return SolutionVariant{task + "/" + file, {}};
  PTXB_ASSIGN_OR_RETURN(SolutionVariant last, replay.kernel_variant(task, static_cast<int>(turns)));
  last.source = (std::filesystem::path(last.source).parent_path() / file).string();
  if (!std::filesystem::is_regular_file(std::filesystem::path(solutions) / last.source))
    return make_error("not_found", "no rung '{}' for task '{}': no {} in {}", rung, task,
                      last.source, solutions);
  return last;
}

// The replay kernel of `name` at `turn` (0: the last listed, the fastest) exactly as the replay
// model answers it, so scripts and users compile or evaluate the same single file; `list` prints
// the variants instead ("TASK TURN VARIANT" lines, every task when `name` is empty); `rung`
// renders that rung file for the task instead of a turn (rung_variant).
Result<int> run_solution(const std::string& dir, const std::string& name, int turn, bool list,
                         const std::string& rung) {
  std::string solutions = dir;
  if (solutions.empty()) {
    PTXB_ASSIGN_OR_RETURN(solutions, default_replay_dir());
  }
  PTXB_ASSIGN_OR_RETURN(auto replay, ReplayModel::load(solutions));
  const auto counts = replay->turn_counts();
  if (list) {
    for (const auto& [task, count] : counts) {
      if (!name.empty() && task != name) continue;
      for (std::size_t t = 1; t <= count; ++t) {
        PTXB_ASSIGN_OR_RETURN(SolutionVariant variant,
                              replay->kernel_variant(task, static_cast<int>(t)));
        std::cout << task << " " << t << " " << variant.describe() << "\n";
      }
    }
    if (!name.empty() && counts.count(name) == 0)
      return make_error("not_found", "no replay kernel for task '{}'", name);
    return 0;
  }
  if (name.empty()) return make_error("usage", "tasks solution: a task name (or --list)");
  auto it = counts.find(name);
  if (it == counts.end()) return make_error("not_found", "no replay kernel for task '{}'", name);
  if (!rung.empty()) {
    if (turn != 0) return make_error("usage", "tasks solution: --turn or --rung, not both");
    PTXB_ASSIGN_OR_RETURN(SolutionVariant variant,
                          rung_variant(*replay, solutions, name, it->second, rung));
    PTXB_ASSIGN_OR_RETURN(std::string source, render_solution(solutions, variant));
    std::cout << source;
    return 0;
  }
  if (turn < 0 || static_cast<std::size_t>(turn) > it->second)
    return make_error("usage", "task '{}' lists {}, not {}", name,
                      count_noun(it->second, "replay turn"), turn);
  PTXB_ASSIGN_OR_RETURN(
      std::string source,
      replay->kernel_source(name, turn == 0 ? static_cast<int>(it->second) : turn));
  std::cout << source;
  return 0;
}

}  // namespace

CommandSpec make_tasks_command() {
  return {
      "tasks", "List the task suites and show one task (definition, workload, signature)",
      [](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
        struct Options {
          std::string suite;
          std::string name;
          bool list_json = false;
          bool show_json = false;
          std::string replay_dir;
          int turn = 0;
          bool list_solutions = false;
          std::string rung;
        };
        auto options = std::make_shared<Options>();
        app.require_subcommand(1);
        CLI::App* list =
            app.add_subcommand("list", "List tasks (name, suites, arch, shapes, reference)");
        list->add_option("--suite", options->suite, "Only tasks of this suite (e.g. paper-h100)");
        list->add_flag("--json", options->list_json, "Print JSON");
        CLI::App* show = app.add_subcommand("show", "Show one task with its exact `run` signature");
        show->add_option("name", options->name, "Task name (see `ptxbench tasks list`)")
            ->required();
        show->add_flag("--json", options->show_json, "Print JSON");
        CLI::App* solution = app.add_subcommand(
            "solution", "Print the expert kernel the replay model answers with (one .cu file)");
        solution->add_option("name", options->name, "Task name");
        solution->add_option("--turn", options->turn, "Replay turn (default: the last, fastest)")
            ->check(number_at_least(1, true));
        solution->add_flag("--list", options->list_solutions,
                           "List the replay turns as TASK TURN VARIANT lines instead");
        solution->add_option("--rung", options->rung,
                             "Render this rung file instead of a replay turn (e.g. "
                             "rung2_warp_specialized): the task's own, or the one beside its "
                             "last turn's source with that turn's defines");
        solution->add_option("--replay-dir", options->replay_dir,
                             "Folder with replay.json (default: the repository's solutions/)");
        return [&globals, options, list, show, solution]() -> Result<int> {
          if (list->parsed()) return run_list(globals, options->suite, options->list_json);
          if (show->parsed()) return run_show(globals, options->name, options->show_json);
          if (solution->parsed())
            return run_solution(options->replay_dir, options->name, options->turn,
                                options->list_solutions, options->rung);
          return make_error("usage", "tasks: expected a subcommand (list, show or solution)");
        };
      }};
}

}  // namespace ptxb::cli
