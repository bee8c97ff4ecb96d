#include "tasks/manifest.h"

#include <algorithm>
#include <set>

#include "core/strings.h"
#include "tasks/cost_model.h"
#include "trace/schema_json.h"

namespace ptxb {
namespace {

// The manifest format this code reads; a different value is rejected rather than misread.
constexpr const char* kManifestFormat = "ptxbench-tasks/1";

bool contains_name(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::optional<double> positive_number(const Json& object, const std::string& key,
                                      const std::string& path, Diagnostics& diagnostics) {
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  const std::string field = json_path_key(path, key);
  if (!it->is_number()) {
    diagnostics.error(field, "expected a number, got " + json_type_description(*it));
    return std::nullopt;
  }
  if (it->get<double>() <= 0) {
    diagnostics.error(field, "must be > 0, got " + it->dump());
    return std::nullopt;
  }
  return it->get<double>();
}

// "base" or "base+<pattern>" with a lowercase identifier pattern.
bool is_prompt_variant(const std::string& variant) {
  if (variant == "base") return true;
  if (!starts_with(variant, "base+")) return false;
  const std::string pattern = variant.substr(5);
  return is_c_identifier(pattern) && to_lower(pattern) == pattern;
}

std::optional<Task> parse_entry(const Json& entry, const std::string& path, const TraceSet& set,
                                Diagnostics& diagnostics) {
  if (!check_object(entry, path, diagnostics)) return std::nullopt;
  const std::size_t findings_before = diagnostics.size();
  Task task;
  task.set_root = set.root;
  if (auto name = require_string(entry, "name", path, diagnostics)) {
    if (!is_c_identifier(*name))
      diagnostics.error(json_path_key(path, "name"),
                        "task name '" + *name + "' must be a C identifier");
    task.name = *name;
  }
  if (require_field(entry, "suites", path, diagnostics)) {
    task.suites = optional_string_list(entry, "suites", path, diagnostics);
    if (task.suites.empty() && entry.at("suites").is_array())
      diagnostics.error(json_path_key(path, "suites"), "must name at least one suite");
  }
  if (auto arch = require_string(entry, "arch", path, diagnostics)) {
    if (*arch != "sm_90a" && *arch != "sm_100a")
      diagnostics.error(json_path_key(path, "arch"),
                        "unknown arch '" + *arch + "' (expected sm_90a or sm_100a)");
    task.arch = *arch;
  }
  if (require_field(entry, "target_families", path, diagnostics)) {
    task.target_families = optional_string_list(entry, "target_families", path, diagnostics);
    const auto& allowed = families_for_arch(task.arch);
    if (task.target_families.empty() && entry.at("target_families").is_array())
      diagnostics.error(json_path_key(path, "target_families"), "must name at least one family");
    for (std::size_t i = 0; i < task.target_families.size(); ++i)
      if (!allowed.empty() && !contains_name(allowed, task.target_families[i]))
        diagnostics.error(json_path_index(json_path_key(path, "target_families"), i),
                          "family '" + task.target_families[i] + "' does not exist on " +
                              task.arch + " (expected " + join(allowed, ", ") + ")");
  }
  if (auto backend = require_string(entry, "reference_backend", path, diagnostics)) {
    if (!contains_name(reference_backend_names(), *backend))
      diagnostics.error(json_path_key(path, "reference_backend"),
                        "unknown reference backend '" + *backend + "' (expected " +
                            join(reference_backend_names(), ", ") + ")");
    task.reference_backend = *backend;
  }
  if (auto it = entry.find("tolerance"); it != entry.end()) {
    const std::string tolerance_path = json_path_key(path, "tolerance");
    if (check_object(*it, tolerance_path, diagnostics)) {
      task.tolerance.atol =
          positive_number(*it, "atol", tolerance_path, diagnostics).value_or(task.tolerance.atol);
      task.tolerance.rtol =
          positive_number(*it, "rtol", tolerance_path, diagnostics).value_or(task.tolerance.rtol);
    }
  }
  if (require_field(entry, "prompt_variants", path, diagnostics)) {
    task.prompt_variants = optional_string_list(entry, "prompt_variants", path, diagnostics);
    for (std::size_t i = 0; i < task.prompt_variants.size(); ++i)
      if (!is_prompt_variant(task.prompt_variants[i]))
        diagnostics.error(json_path_index(json_path_key(path, "prompt_variants"), i),
                          "'" + task.prompt_variants[i] +
                              "' is not a prompt variant ('base' or 'base+<pattern>')");
  }
  task.target_speedup =
      positive_number(entry, "target_speedup", path, diagnostics).value_or(task.target_speedup);
  task.source_workload_uuid =
      optional_string(entry, "source_workload_uuid", path, diagnostics).value_or("");

  auto definition_name = require_string(entry, "definition", path, diagnostics);
  auto uuid = require_string(entry, "workload_uuid", path, diagnostics);
  if (definition_name) {
    if (const Definition* definition = set.find_definition(*definition_name)) {
      task.definition = *definition;
      if (uuid) {
        if (const TraceRecord* record = set.find_workload(*definition_name, *uuid))
          task.workload = record->trace.workload;
        else
          diagnostics.error(
              json_path_key(path, "workload_uuid"),
              "no workload with uuid '" + *uuid + "' in workloads/ for '" + *definition_name + "'");
      }
    } else {
      diagnostics.error(json_path_key(path, "definition"),
                        "definition '" + *definition_name + "' not found in definitions/");
    }
  }
  if (auto model = require_string(entry, "cost_model", path, diagnostics)) {
    task.cost_model = *model;
    if (!contains_name(cost_model_names(), *model)) {
      diagnostics.error(
          json_path_key(path, "cost_model"),
          "unknown cost model '" + *model + "' (expected " + join(cost_model_names(), ", ") + ")");
    } else if (diagnostics.size() == findings_before) {
      auto cost = compute_cost(*model, task.definition, task.axis_values());
      if (!cost) {
        diagnostics.error(json_path_key(path, "cost_model"), cost.error().message);
      } else {
        task.flops = cost->flops;
        task.min_bytes = cost->min_bytes;
      }
    }
  }
  const std::string gqa_backend = gqa_reference_for(task.cost_model);
  const bool names_gqa = task.reference_backend.starts_with("flashinfer_gqa_");
  if (is_library_reference(task.reference_backend) && (names_gqa || !gqa_backend.empty()) &&
      task.reference_backend != gqa_backend)
    diagnostics.error(json_path_key(path, "reference_backend"),
                      "reference backend '" + task.reference_backend +
                          "' does not fit cost model '" + task.cost_model + "' (expected " +
                          (gqa_backend.empty() ? "a non-GQA backend" : gqa_backend) +
                          " or plain_cuda)");
  if (diagnostics.size() != findings_before) return std::nullopt;
  return task;
}

}  // namespace

const std::vector<std::string>& families_for_arch(const std::string& arch) {
  // Hopper qualifies with GMMA or TMA; Blackwell only with tcgen05's UTC*, LDTM, STTM (§3.6).
  static const std::vector<std::string> hopper = {"GMMA", "TMA"};
  static const std::vector<std::string> blackwell = {"UTC", "LDTM", "STTM"};
  static const std::vector<std::string> none;
  if (arch == "sm_90a") return hopper;
  if (arch == "sm_100a") return blackwell;
  return none;
}

std::vector<Task> parse_task_manifest(const Json& manifest, const TraceSet& set,
                                      Diagnostics& diagnostics) {
  std::vector<Task> tasks;
  if (!check_object(manifest, "$", diagnostics)) return tasks;
  if (auto format = require_string(manifest, "format", "$", diagnostics);
      format && *format != kManifestFormat)
    diagnostics.error("$.format", "unsupported manifest format '" + *format + "' (expected '" +
                                      kManifestFormat + "')");
  const Json* entries = require_field(manifest, "tasks", "$", diagnostics);
  if (!entries) return tasks;
  if (!entries->is_array()) {
    diagnostics.error("$.tasks",
                      "expected an array of tasks, got " + json_type_description(*entries));
    return tasks;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const std::string path = json_path_index("$.tasks", i);
    auto task = parse_entry((*entries)[i], path, set, diagnostics);
    if (!task) continue;
    if (!names.insert(task->name).second) {
      diagnostics.error(json_path_key(path, "name"), "duplicate task name '" + task->name + "'");
      continue;
    }
    tasks.push_back(std::move(*task));
  }
  return tasks;
}

}  // namespace ptxb
