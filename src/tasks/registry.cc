#include "tasks/registry.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "core/fs.h"
#include "core/install_layout.h"
#include "core/strings.h"
#include "tasks/manifest.h"
#include "trace/schema_json.h"
#include "trace/trace_set.h"

namespace ptxb {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

Result<std::string> builtin_tasks_dir() {
  if (const char* env = std::getenv("PTXBENCH_BUILTIN_TASKS"); env && *env) return std::string(env);
  return data_subdir("tasks");
}

Result<TaskRegistry> TaskRegistry::load(const std::vector<std::string>& extra_dirs) {
  PTXB_ASSIGN_OR_RETURN(std::string builtin, builtin_tasks_dir());
  std::vector<std::string> dirs = {builtin};
  dirs.insert(dirs.end(), extra_dirs.begin(), extra_dirs.end());
  return load_sets(dirs);
}

Result<TaskRegistry> TaskRegistry::load_sets(const std::vector<std::string>& dirs) {
  TaskRegistry registry;
  Diagnostics all;
  std::map<std::string, std::string> owner;  // task name -> set folder
  for (const auto& dir : dirs) {
    if (!is_directory(dir)) {
      all.add_error(make_error("io", "{}: task set folder not found", dir));
      continue;
    }
    TraceSetLoad load = load_trace_set(dir);
    all.merge(load.diagnostics);
    const std::string manifest_path = dir + "/tasks.json";
    auto manifest = read_trace_json_file(manifest_path);
    if (!manifest) {
      all.add_error(manifest.error());
      continue;
    }
    if (!load.diagnostics.ok()) continue;  // tasks cannot be resolved against a broken set
    Diagnostics local(manifest_path);
    for (auto& task : parse_task_manifest(*manifest, load.set, local)) {
      auto [it, inserted] = owner.emplace(task.name, dir);
      if (!inserted) {
        local.error("$.tasks",
                    "task '" + task.name + "' is already defined by the set in " + it->second);
        continue;
      }
      registry.tasks_.push_back(std::move(task));
    }
    all.merge(local);
  }
  if (!all.ok()) return all.to_error();
  return registry;
}

const Task* TaskRegistry::find(const std::string& name) const {
  for (const auto& task : tasks_)
    if (task.name == name) return &task;
  return nullptr;
}

Result<const Task*> TaskRegistry::get(const std::string& name) const {
  if (const Task* task = find(name)) return task;
  // Suggest names within a small edit distance, or that contain what was typed.
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& task : tasks_) {
    const std::size_t distance = edit_distance(name, task.name);
    if (distance <= std::max<std::size_t>(2, name.size() / 4) ||
        (!name.empty() && contains(task.name, name)))
      scored.emplace_back(distance, task.name);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> suggestions;
  for (std::size_t i = 0; i < scored.size() && i < 5; ++i) suggestions.push_back(scored[i].second);
  std::string hint = suggestions.empty() ? "" : " (did you mean " + join(suggestions, ", ") + "?)";
  return make_error("not_found", "unknown task '{}'{}; run `ptxbench tasks list` to see all tasks",
                    name, hint);
}

std::vector<const Task*> TaskRegistry::list(const std::string& suite) const {
  std::vector<const Task*> out;
  for (const auto& task : tasks_)
    if (suite.empty() ||
        std::find(task.suites.begin(), task.suites.end(), suite) != task.suites.end())
      out.push_back(&task);
  return out;
}

std::vector<std::string> TaskRegistry::suites() const {
  std::vector<std::string> out;
  for (const auto& task : tasks_)
    for (const auto& suite : task.suites)
      if (std::find(out.begin(), out.end(), suite) == out.end()) out.push_back(suite);
  return out;
}

}  // namespace ptxb
