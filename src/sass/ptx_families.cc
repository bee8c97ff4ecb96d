#include "sass/ptx_families.h"

#include <cctype>

#include "core/strings.h"

namespace ptxb {

const std::vector<std::string>& ptx_family_prefixes() {
  static const std::vector<std::string> kPrefixes = {"wgmma.", "cp.async.bulk.tensor", "mbarrier.",
                                                     "setmaxnreg.", "tcgen05."};
  return kPrefixes;
}

namespace {

// "  .visible .entry _Z3fooPf(" -> "_Z3fooPf"; "" if the line declares no function.
std::string declared_function(const std::string& line, bool& is_entry) {
  for (const char* keyword : {".entry ", ".func "}) {
    const auto at = line.find(keyword);
    if (at == std::string::npos) continue;
    if (line.find("//") != std::string::npos && line.find("//") < at) continue;
    std::size_t start = at + std::string_view(keyword).size();
    // ".func (.param .b32 ret) name(" : skip the return-value list.
    while (start < line.size() && line[start] == ' ') ++start;
    if (start < line.size() && line[start] == '(') {
      const auto close = line.find(')', start);
      if (close == std::string::npos) return "";
      start = close + 1;
      while (start < line.size() && line[start] == ' ') ++start;
    }
    std::size_t end = start;
    while (end < line.size() && (std::isalnum(static_cast<unsigned char>(line[end])) ||
                                 line[end] == '_' || line[end] == '$' || line[end] == '.'))
      ++end;
    if (end == start) return "";
    is_entry = std::string_view(keyword) == ".entry ";
    return line.substr(start, end - start);
  }
  return "";
}

}  // namespace

PtxFamilyCounts count_ptx_families(std::string_view ptx) {
  PtxFamilyCounts result;
  PtxFunctionFamilies* current = nullptr;
  for (const std::string& raw : split_lines(ptx)) {
    bool is_entry = false;
    const std::string name = declared_function(raw, is_entry);
    if (!name.empty()) {
      result.functions.push_back(PtxFunctionFamilies{name, is_entry, {}});
      current = &result.functions.back();
      continue;
    }
    if (!current) continue;
    std::string statement = trim(raw);
    if (statement.empty() || starts_with(statement, "//")) continue;
    // Inline asm may put a brace or a label before the instruction: "{ wgmma...", "wait:
    // mbarrier...".
    while (!statement.empty() && statement[0] == '{')
      statement = trim(std::string_view(statement).substr(1));
    if (const auto colon = statement.find(':');
        colon != std::string::npos && colon > 0 && statement.find_first_of(" \t.[") > colon)
      statement = trim(std::string_view(statement).substr(colon + 1));
    if (statement.empty()) continue;
    if (statement[0] == '@') {  // guard predicate "@%p1" / "@!%p1"
      const auto space = statement.find_first_of(" \t");
      if (space == std::string::npos) continue;
      statement = trim(std::string_view(statement).substr(space));
    }
    for (const auto& prefix : ptx_family_prefixes()) {
      if (starts_with(statement, prefix)) {
        ++current->counts[prefix];
        ++result.totals[prefix];
      }
    }
  }
  return result;
}

Json ptx_family_counts_to_json(const PtxFamilyCounts& counts) {
  Json functions = Json::array();
  for (const auto& function : counts.functions) {
    Json family_counts = Json::object();
    for (const auto& [prefix, count] : function.counts) family_counts[prefix] = count;
    functions.push_back(
        Json{{"name", function.name}, {"is_entry", function.is_entry}, {"counts", family_counts}});
  }
  Json totals = Json::object();
  for (const auto& [prefix, count] : counts.totals) totals[prefix] = count;
  return Json{{"totals", totals}, {"functions", functions}};
}

PtxFamilyCounts ptx_family_counts_from_json(const Json& json) {
  PtxFamilyCounts counts;
  const Json totals_json = json.value("totals", Json::object());
  for (const auto& [prefix, count] : totals_json.items()) counts.totals[prefix] = count.get<int>();
  for (const auto& item : json.value("functions", Json::array())) {
    PtxFunctionFamilies function;
    function.name = item.value("name", "");
    function.is_entry = item.value("is_entry", true);
    const Json counts_json = item.value("counts", Json::object());
    for (const auto& [prefix, count] : counts_json.items())
      function.counts[prefix] = count.get<int>();
    counts.functions.push_back(std::move(function));
  }
  return counts;
}

}  // namespace ptxb
