// `ptxbench validate PATH`: checks a FlashInfer-Trace file (definition, workload, solution or
// trace, detected from its content) or a whole trace-set folder, reporting every problem.
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "core/fs.h"
#include "core/strings.h"
#include "trace/trace_set.h"

namespace ptxb::cli {
namespace {

Result<int> run_validate(const std::string& path, bool json) {
  if (!path_exists(path)) return make_error("io", "{}: no such file or directory", path);
  Json counts = Json::object();
  Diagnostics diagnostics;
  std::string kind;
  if (is_directory(path)) {
    TraceSetLoad load = load_trace_set(path);
    kind = "trace_set";
    counts["definitions"] = load.set.definitions.size();
    counts["workloads"] = load.set.workloads.size();
    counts["solutions"] = load.set.solutions.size();
    counts["traces"] = load.set.traces.size();
    diagnostics = std::move(load.diagnostics);
  } else {
    FileValidation validation = validate_trace_file(path);
    kind = std::string(trace_file_kind_name(validation.kind));
    counts["documents"] = validation.documents;
    diagnostics = std::move(validation.diagnostics);
  }
  if (json) {
    Json out = Json::object();
    out["path"] = path;
    out["kind"] = kind;
    out["ok"] = diagnostics.ok();
    out["counts"] = counts;
    out["errors"] = Json::array();
    for (const auto& issue : diagnostics.issues()) out["errors"].push_back(issue.to_json());
    print_json(out);
    return diagnostics.ok() ? 0 : 1;
  }
  if (!diagnostics.ok()) {
    // Every problem is an error line of its own (file, JSON path, what is wrong); a count
    // closes a list of several.
    for (const auto& issue : diagnostics.issues())
      std::cerr << "ptxbench: error: " << one_line(issue.to_string()) << "\n";
    if (diagnostics.size() > 1)
      std::cerr << fmt::format("ptxbench: {} found in {} ({})\n",
                               count_noun(static_cast<long long>(diagnostics.size()), "problem"),
                               path, kind);
    return 1;
  }
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts.items())
    parts.push_back(std::to_string(count.get<std::size_t>()) + " " + name);
  std::cout << "OK " << path << " (" << kind << "): " << join(parts, ", ") << "\n";
  return 0;
}

}  // namespace

CommandSpec make_validate_command() {
  return {"validate",
          "Validate a FlashInfer-Trace file or trace-set folder (reports every problem)",
          [](CLI::App& app, const GlobalOptions&) -> CommandBody {
            auto path = std::make_shared<std::string>();
            auto json = std::make_shared<bool>(false);
            app.add_option("path", *path,
                           "A definition/workload/solution/trace file (.json, .jsonl) or a folder "
                           "with definitions/, workloads/, solutions/, traces/")
                ->required();
            app.add_flag("--json", *json, "Print JSON: {path, kind, ok, counts, errors[]}");
            return [path, json]() -> Result<int> { return run_validate(*path, *json); };
          }};
}

}  // namespace ptxb::cli
