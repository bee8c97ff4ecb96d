#include "trace/solution.h"

#include <set>

#include "core/strings.h"
#include "trace/schema_json.h"

namespace ptxb {
namespace {

// Languages of the flashinfer-bench schema's SupportedLanguages enum (plus its later additions).
const std::set<std::string> kLanguages = {"cuda", "triton",   "python",
                                          "cpp",  "tilelang", "cute_dsl"};

bool is_safe_relative_path(const std::string& path) {
  if (path.empty() || path.front() == '/') return false;
  for (const auto& part : split(path, '/'))
    if (part.empty() || part == "..") return false;
  return true;
}

}  // namespace

std::string Solution::entry_file() const {
  auto pos = spec.entry_point.find("::");
  return pos == std::string::npos ? "" : spec.entry_point.substr(0, pos);
}

std::string Solution::entry_symbol() const {
  auto pos = spec.entry_point.find("::");
  return pos == std::string::npos ? "" : spec.entry_point.substr(pos + 2);
}

const SourceFile* Solution::find_source(const std::string& path) const {
  for (const auto& source : sources)
    if (source.path == path) return &source;
  return nullptr;
}

Solution parse_solution(const Json& document, Diagnostics& diagnostics) {
  Solution solution;
  if (!check_object(document, "$", diagnostics)) return solution;
  solution.raw = document;
  solution.name = require_string(document, "name", "$", diagnostics).value_or("");
  solution.definition = require_string(document, "definition", "$", diagnostics).value_or("");
  solution.author = require_string(document, "author", "$", diagnostics).value_or("");
  solution.description = optional_string(document, "description", "$", diagnostics).value_or("");

  if (const Json* spec = require_field(document, "spec", "$", diagnostics);
      spec && check_object(*spec, "$.spec", diagnostics)) {
    if (auto language = require_string(*spec, "language", "$.spec", diagnostics)) {
      if (!kLanguages.count(*language))
        diagnostics.error("$.spec.language", "unknown language '" + *language +
                                                 "' (expected cuda, triton, python, cpp, "
                                                 "tilelang or cute_dsl)");
      solution.spec.language = *language;
    }
    if (require_field(*spec, "target_hardware", "$.spec", diagnostics)) {
      solution.spec.target_hardware =
          optional_string_list(*spec, "target_hardware", "$.spec", diagnostics);
      if (solution.spec.target_hardware.empty() && spec->at("target_hardware").is_array())
        diagnostics.error("$.spec.target_hardware", "must list at least one target");
    }
    if (auto entry = require_string(*spec, "entry_point", "$.spec", diagnostics)) {
      solution.spec.entry_point = *entry;
      const auto pos = entry->find("::");
      if (pos == std::string::npos || pos == 0)
        diagnostics.error(
            "$.spec.entry_point",
            "'" + *entry + "' must have the form 'file::symbol' (e.g. kernel.cu::run)");
      else if (!is_c_identifier(solution.entry_symbol()))
        diagnostics.error("$.spec.entry_point",
                          "symbol '" + solution.entry_symbol() + "' is not a valid C identifier");
    }
    solution.spec.dependencies = optional_string_list(*spec, "dependencies", "$.spec", diagnostics);
  }

  if (const Json* sources = require_field(document, "sources", "$", diagnostics)) {
    if (!sources->is_array()) {
      diagnostics.error("$.sources", "expected an array of {path, content}, got " +
                                         json_type_description(*sources));
    } else {
      if (sources->empty()) diagnostics.error("$.sources", "must contain at least one file");
      std::set<std::string> seen;
      for (std::size_t i = 0; i < sources->size(); ++i) {
        const std::string path = json_path_index("$.sources", i);
        const Json& source = (*sources)[i];
        if (!check_object(source, path, diagnostics)) continue;
        SourceFile file;
        file.path = require_string(source, "path", path, diagnostics).value_or("");
        if (const Json* content = require_field(source, "content", path, diagnostics)) {
          if (content->is_string())
            file.content = content->get<std::string>();
          else
            diagnostics.error(json_path_key(path, "content"),
                              "expected a string, got " + json_type_description(*content));
        }
        if (!file.path.empty() && !is_safe_relative_path(file.path))
          diagnostics.error(json_path_key(path, "path"),
                            "'" + file.path + "' must be a relative path without '..'");
        if (!file.path.empty() && !seen.insert(file.path).second)
          diagnostics.error(json_path_key(path, "path"),
                            "duplicate source path '" + file.path + "'");
        solution.sources.push_back(std::move(file));
      }
      const std::string entry_file = solution.entry_file();
      if (!entry_file.empty() && !sources->empty() && !seen.count(entry_file))
        diagnostics.error("$.spec.entry_point",
                          "entry file '" + entry_file + "' is not among $.sources");
    }
  }
  return solution;
}

Result<Solution> parse_solution(const Json& document, const std::string& origin) {
  Diagnostics diagnostics(origin);
  Solution solution = parse_solution(document, diagnostics);
  if (!diagnostics.ok()) return diagnostics.to_error();
  return solution;
}

Json solution_to_json(const Solution& solution) {
  return solution.raw;
}

}  // namespace ptxb
