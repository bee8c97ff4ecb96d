#include "trace/trace_set.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/fs.h"
#include "core/strings.h"
#include "trace/schema_json.h"

namespace ptxb {
namespace {

namespace stdfs = std::filesystem;

// How a file is named in findings: the root as the user gave it plus the path inside the set,
// so the name can be pasted into an editor from wherever the command ran.
std::string relative_to(const std::string& path, const std::string& root) {
  std::error_code ec;
  auto relative = stdfs::relative(path, root, ec);
  if (ec || relative.empty()) return path;
  return (stdfs::path(root) / relative).lexically_normal().string();
}

void load_definitions(const std::string& root, TraceSet& set, Diagnostics& diagnostics) {
  const std::string dir = root + "/definitions";
  if (!is_directory(dir)) {
    diagnostics.add_error(make_error("validation", "{}: missing definitions/ folder", root));
    return;
  }
  auto files = list_files_recursive(dir);
  if (!files) return diagnostics.add_error(files.error());
  std::map<std::string, std::string> seen;  // name -> file
  for (const auto& file : *files) {
    if (!ends_with(file, ".json")) continue;
    const std::string shown = relative_to(file, root);
    Diagnostics local(shown);
    auto document = read_trace_json_file(file);
    if (!document) {
      diagnostics.add_error(document.error());
      continue;
    }
    Definition definition = parse_definition(*document, local);
    // The layout is part of the format: definitions/<op_type>/<name>.json.
    const stdfs::path path(file);
    if (!definition.name.empty() && path.stem().string() != definition.name)
      local.error("$.name", "definition '" + definition.name + "' must live in a file named '" +
                                definition.name + ".json'");
    if (!definition.op_type.empty() && path.parent_path().filename().string() != definition.op_type)
      local.error("$.op_type", "op_type '" + definition.op_type + "' does not match its folder '" +
                                   path.parent_path().filename().string() + "'");
    if (!definition.name.empty()) {
      auto [it, inserted] = seen.emplace(definition.name, shown);
      if (!inserted)
        local.error("$.name",
                    "definition '" + definition.name + "' is also defined in " + it->second);
    }
    diagnostics.merge(local);
    if (local.ok()) set.definitions.push_back(std::move(definition));
  }
  std::sort(set.definitions.begin(), set.definitions.end(),
            [](const Definition& a, const Definition& b) { return a.name < b.name; });
}

void load_traces(const std::string& root, const std::string& folder, TraceSet& set,
                 std::vector<TraceRecord>& out, Diagnostics& diagnostics) {
  const std::string dir = root + "/" + folder;
  if (!is_directory(dir)) return;
  auto files = list_files_recursive(dir);
  if (!files) return diagnostics.add_error(files.error());
  std::set<std::pair<std::string, std::string>> uuids;  // (definition, uuid)
  for (const auto& file : *files) {
    if (!ends_with(file, ".jsonl")) continue;
    const std::string shown = relative_to(file, root);
    Diagnostics file_diagnostics;
    auto lines = read_trace_jsonl_file(file, file_diagnostics);
    diagnostics.merge(file_diagnostics);
    const std::string file_stem = stdfs::path(file).stem().string();
    for (auto& [line, document] : lines) {
      Diagnostics local(shown + ":" + std::to_string(line));
      Trace trace = parse_trace(document, local);
      if (folder == "workloads") {
        if (!trace.is_workload_trace())
          local.error("$", "a workloads/ line holds only 'definition' and 'workload'");
        if (!trace.definition.empty() && trace.definition != file_stem)
          local.error("$.definition", "workloads of '" + trace.definition +
                                          "' belong in a file named '" + trace.definition +
                                          ".jsonl'");
      }
      if (!trace.definition.empty()) {
        const Definition* definition = set.find_definition(trace.definition);
        if (!definition)
          local.error("$.definition",
                      "definition '" + trace.definition + "' not found in definitions/");
        else
          check_workload_against(trace.workload, *definition, "$.workload", local);
      }
      if (folder == "workloads" && !trace.workload.uuid.empty() &&
          !uuids.emplace(trace.definition, trace.workload.uuid).second)
        local.error("$.workload.uuid", "duplicate workload uuid '" + trace.workload.uuid + "'");
      if (trace.solution && !set.find_solution(*trace.solution))
        local.error("$.solution", "solution '" + *trace.solution + "' not found in solutions/");
      diagnostics.merge(local);
      if (local.ok()) out.push_back({file, line, std::move(trace)});
    }
  }
}

void load_solutions(const std::string& root, TraceSet& set, Diagnostics& diagnostics) {
  const std::string dir = root + "/solutions";
  if (!is_directory(dir)) return;
  auto files = list_files_recursive(dir);
  if (!files) return diagnostics.add_error(files.error());
  std::map<std::string, std::string> seen;
  for (const auto& file : *files) {
    if (!ends_with(file, ".json")) continue;
    const std::string shown = relative_to(file, root);
    Diagnostics local(shown);
    auto document = read_trace_json_file(file);
    if (!document) {
      diagnostics.add_error(document.error());
      continue;
    }
    Solution solution = parse_solution(*document, local);
    if (!solution.definition.empty() && !set.find_definition(solution.definition))
      local.error("$.definition",
                  "definition '" + solution.definition + "' not found in definitions/");
    if (!solution.name.empty()) {
      auto [it, inserted] = seen.emplace(solution.name, shown);
      if (!inserted)
        local.error("$.name", "solution '" + solution.name + "' is also defined in " + it->second);
    }
    diagnostics.merge(local);
    if (local.ok()) set.solutions.push_back(std::move(solution));
  }
}

}  // namespace

const Definition* TraceSet::find_definition(const std::string& name) const {
  for (const auto& definition : definitions)
    if (definition.name == name) return &definition;
  return nullptr;
}

const Solution* TraceSet::find_solution(const std::string& name) const {
  for (const auto& solution : solutions)
    if (solution.name == name) return &solution;
  return nullptr;
}

const TraceRecord* TraceSet::find_workload(const std::string& definition,
                                           const std::string& uuid) const {
  for (const auto& record : workloads)
    if (record.trace.definition == definition && record.trace.workload.uuid == uuid) return &record;
  return nullptr;
}

TraceSetLoad load_trace_set(const std::string& root) {
  TraceSetLoad load;
  load.set.root = root;
  if (!is_directory(root)) {
    load.diagnostics.add_error(make_error("io", "{}: not a directory", root));
    return load;
  }
  load_definitions(root, load.set, load.diagnostics);
  load_traces(root, "workloads", load.set, load.set.workloads, load.diagnostics);
  load_solutions(root, load.set, load.diagnostics);
  load_traces(root, "traces", load.set, load.set.traces, load.diagnostics);
  return load;
}

std::string_view trace_file_kind_name(TraceFileKind kind) {
  switch (kind) {
    case TraceFileKind::kDefinition:
      return "definition";
    case TraceFileKind::kWorkload:
      return "workload";
    case TraceFileKind::kSolution:
      return "solution";
    case TraceFileKind::kTrace:
      return "trace";
  }
  return "definition";
}

namespace {

// The definition named `name` from the trace set enclosing `path`, if there is one.
std::optional<Definition> find_enclosing_definition(const std::string& path,
                                                    const std::string& name) {
  std::error_code ec;
  stdfs::path dir = stdfs::absolute(path, ec).parent_path();
  for (; !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    if (!is_directory((dir / "definitions").string())) continue;
    auto files = list_files_recursive((dir / "definitions").string());
    if (!files) return std::nullopt;
    for (const auto& file : *files) {
      if (stdfs::path(file).filename() != name + ".json") continue;
      auto document = read_trace_json_file(file);
      if (!document) return std::nullopt;
      auto definition = parse_definition(*document, file);
      if (definition) return std::move(definition).value();
    }
    return std::nullopt;
  }
  return std::nullopt;
}

TraceFileKind detect_json_kind(const Json& document, const std::string& path) {
  if (document.is_object()) {
    if (document.contains("axes") || document.contains("op_type") || document.contains("outputs"))
      return TraceFileKind::kDefinition;
    if (document.contains("sources") || document.contains("spec") || document.contains("author"))
      return TraceFileKind::kSolution;
    if (document.contains("workload"))
      return document.contains("evaluation") ? TraceFileKind::kTrace : TraceFileKind::kWorkload;
  }
  // Content says nothing recognizable: fall back on the folder the file sits in.
  if (contains(path, "solutions/")) return TraceFileKind::kSolution;
  return TraceFileKind::kDefinition;
}

}  // namespace

FileValidation validate_trace_file(const std::string& path) {
  FileValidation result;
  result.diagnostics.set_file(path);
  if (ends_with(path, ".jsonl")) {
    result.kind = contains(path, "traces/") ? TraceFileKind::kTrace : TraceFileKind::kWorkload;
    auto lines = read_trace_jsonl_file(path, result.diagnostics);
    std::map<std::string, std::optional<Definition>> definitions;
    for (auto& [line, document] : lines) {
      ++result.documents;
      Diagnostics local(path + ":" + std::to_string(line));
      Trace trace = parse_trace(document, local);
      if (trace.evaluation) result.kind = TraceFileKind::kTrace;
      if (!trace.definition.empty()) {
        if (!definitions.count(trace.definition))
          definitions[trace.definition] = find_enclosing_definition(path, trace.definition);
        if (const auto& definition = definitions[trace.definition])
          check_workload_against(trace.workload, *definition, "$.workload", local);
      }
      result.diagnostics.merge(local);
    }
    return result;
  }
  auto document = read_trace_json_file(path);
  if (!document) {
    result.diagnostics.add_error(document.error());
    return result;
  }
  result.documents = 1;
  result.kind = detect_json_kind(*document, path);
  switch (result.kind) {
    case TraceFileKind::kDefinition:
      parse_definition(*document, result.diagnostics);
      break;
    case TraceFileKind::kSolution:
      parse_solution(*document, result.diagnostics);
      break;
    case TraceFileKind::kWorkload:
    case TraceFileKind::kTrace: {
      Trace trace = parse_trace(*document, result.diagnostics);
      if (auto definition = find_enclosing_definition(path, trace.definition))
        check_workload_against(trace.workload, *definition, "$.workload", result.diagnostics);
      break;
    }
  }
  return result;
}

}  // namespace ptxb
