#include "sass/sass_analysis.h"

#include "core/strings.h"
#include "sass/sass_listing.h"

namespace ptxb {

std::optional<std::string> sass_family_of(std::string_view base_opcode) {
  if (base_opcode.find("GMMA") != std::string_view::npos) return std::string(kFamilyGmma);
  if (base_opcode == "UTMALDG" || base_opcode == "UTMASTG" || base_opcode == "UTMAREDG")
    return std::string(kFamilyTma);
  if (starts_with(base_opcode, "UTC")) return std::string(kFamilyUtc);
  if (base_opcode == "LDTM") return std::string(kFamilyLdtm);
  if (base_opcode == "STTM") return std::string(kFamilySttm);
  return std::nullopt;
}

std::vector<std::string> qualifying_families(std::string_view arch) {
  if (starts_with(arch, "sm_90")) return {std::string(kFamilyGmma), std::string(kFamilyTma)};
  if (starts_with(arch, "sm_100") || starts_with(arch, "sm_103") || starts_with(arch, "sm_110"))
    return {std::string(kFamilyUtc), std::string(kFamilyLdtm), std::string(kFamilySttm)};
  return {};
}

const SassKernel* SassSummary::find(std::string_view name) const {
  for (const auto& kernel : kernels)
    if (kernel.name == name) return &kernel;
  return nullptr;
}

namespace {

// The base opcode of a cuobjdump instruction line (sass/sass_listing.h reads the line): the
// mnemonic after an optional guard predicate (@P0, @!UP1, @PT), before its first '.'.
std::optional<std::string> base_opcode_of_line(std::string_view line) {
  const std::optional<SassInstruction> instruction = sass_instruction_of_line(line);
  if (!instruction) return std::nullopt;
  std::string_view text = instruction->text;
  if (text.front() == '@') {  // skip the guard and the blanks after it
    const std::size_t start = text.find_first_not_of(' ', text.find(' '));
    if (start == std::string_view::npos) return std::nullopt;
    text = text.substr(start);
  }
  const std::string_view opcode = text.substr(0, text.find_first_of(" ;."));
  if (opcode.empty()) return std::nullopt;
  return std::string(opcode);
}

}  // namespace

Result<std::vector<SassKernel>> parse_cuobjdump_sass(std::string_view raw_text,
                                                     const std::string& origin) {
  // Function names end up in JSON results: valid UTF-8 only.
  const std::string clean_text = to_valid_utf8(raw_text);
  const std::string_view text = clean_text;
  std::vector<SassKernel> kernels;
  std::string arch;
  SassKernel* current = nullptr;
  int line_number = 0;
  for (const std::string& line : split_lines(text)) {
    ++line_number;
    const std::string trimmed = trim(line);
    if (starts_with(trimmed, "code for sm_")) {
      arch = trim(trimmed.substr(std::string_view("code for ").size()));
      continue;
    }
    if (starts_with(trimmed, "Function :")) {
      const std::string name = trim(trimmed.substr(std::string_view("Function :").size()));
      if (name.empty())
        return make_error("parse", "{}:{}: 'Function :' without a name", origin, line_number);
      kernels.push_back(SassKernel{name, arch});
      current = &kernels.back();
      continue;
    }
    if (!current) continue;
    auto opcode = base_opcode_of_line(line);
    if (!opcode) continue;
    ++current->instruction_count;
    ++current->opcode_histogram[*opcode];
    if (auto family = sass_family_of(*opcode)) ++current->family_counts[*family];
    if (*opcode == "LDL") ++current->local_loads;
    if (*opcode == "STL") ++current->local_stores;
  }
  if (kernels.empty())
    return make_error("parse",
                      "{}: no 'Function :' section found; not cuobjdump -sass output of a cubin "
                      "with kernels",
                      origin);
  return kernels;
}

SassSummary summarize_sass(std::vector<SassKernel> kernels, const std::string& target_arch) {
  SassSummary summary;
  summary.kernels = std::move(kernels);
  summary.target_arch = target_arch;
  for (const auto& kernel : summary.kernels)
    for (const auto& [family, count] : kernel.family_counts) summary.family_totals[family] += count;
  for (const auto& family : qualifying_families(target_arch)) {
    auto found = summary.family_totals.find(family);
    if (found != summary.family_totals.end() && found->second > 0)
      summary.qualifying_families_found.push_back(family);
  }
  summary.target_present = !summary.qualifying_families_found.empty();
  return summary;
}

namespace {

Json int_map_to_json(const std::map<std::string, int>& map) {
  Json json = Json::object();
  for (const auto& [key, value] : map) json[key] = value;
  return json;
}

std::map<std::string, int> int_map_from_json(const Json& json) {
  std::map<std::string, int> map;
  for (const auto& [key, value] : json.items()) map[key] = value.get<int>();
  return map;
}

}  // namespace

Json sass_summary_to_json(const SassSummary& summary) {
  Json kernels = Json::array();
  for (const auto& kernel : summary.kernels) {
    kernels.push_back(Json{{"name", kernel.name},
                           {"arch", kernel.arch},
                           {"instruction_count", kernel.instruction_count},
                           {"family_counts", int_map_to_json(kernel.family_counts)},
                           {"local_loads", kernel.local_loads},
                           {"local_stores", kernel.local_stores},
                           {"opcode_histogram", int_map_to_json(kernel.opcode_histogram)}});
  }
  return Json{{"target_arch", summary.target_arch},
              {"target_present", summary.target_present},
              {"qualifying_families_found", summary.qualifying_families_found},
              {"family_totals", int_map_to_json(summary.family_totals)},
              {"kernels", kernels}};
}

SassSummary sass_summary_from_json(const Json& json) {
  SassSummary summary;
  summary.target_arch = json.value("target_arch", "");
  summary.target_present = json.value("target_present", false);
  summary.qualifying_families_found =
      json.value("qualifying_families_found", std::vector<std::string>{});
  summary.family_totals = int_map_from_json(json.value("family_totals", Json::object()));
  for (const auto& item : json.value("kernels", Json::array())) {
    SassKernel kernel;
    kernel.name = item.value("name", "");
    kernel.arch = item.value("arch", "");
    kernel.instruction_count = item.value("instruction_count", 0);
    kernel.family_counts = int_map_from_json(item.value("family_counts", Json::object()));
    kernel.local_loads = item.value("local_loads", 0);
    kernel.local_stores = item.value("local_stores", 0);
    kernel.opcode_histogram = int_map_from_json(item.value("opcode_histogram", Json::object()));
    summary.kernels.push_back(std::move(kernel));
  }
  return summary;
}

}  // namespace ptxb
