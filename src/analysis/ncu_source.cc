#include "analysis/ncu_source.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <unordered_map>

#include "core/strings.h"
#include "sass/sass_analysis.h"

namespace ptxb {

std::string split_csv_record(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::size_t i = 0;
  while (true) {
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) return "unterminated quoted field";
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',') return "text after a closing quote";
    } else {
      const std::size_t comma = line.find(',', i);
      const std::size_t end = comma == std::string_view::npos ? line.size() : comma;
      field.assign(line.substr(i, end - i));
      i = end;
    }
    fields.push_back(std::move(field));
    if (i >= line.size()) return "";
    ++i;  // the comma; a comma at the very end leaves one empty field, read next round
  }
}

namespace {

// A count as ncu prints it: "4", "73400320", or with thousands separators "73,400,320" (the
// separators depend on ncu's locale handling; the samples have none, users' machines may).
// Empty means "no value" (a row cut short); anything else non-numeric is an error.
Result<std::optional<std::int64_t>> parse_count(std::string_view field) {
  const std::string trimmed = trim(field);
  if (trimmed.empty()) return std::optional<std::int64_t>{};
  std::string digits;
  for (char c : trimmed) {
    if (c == ',') continue;
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return make_error("parse", "'{}' is not a count", trimmed);
    digits += c;
  }
  if (digits.empty()) return make_error("parse", "'{}' is not a count", trimmed);
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (error != std::errc() || end != digits.data() + digits.size())
    return make_error("parse", "count '{}' out of range", trimmed);
  return std::optional<std::int64_t>{value};
}

bool is_hex_address(std::string_view text) {
  if (text.size() < 3 || !starts_with(text, "0x")) return false;
  return std::all_of(text.begin() + 2, text.end(),
                     [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

// Placeholder wgmma. Observed 2026-11-29 (nvcc 13.0 ptxas, sm_90a, H200, ncu 2025.3; golden
// testdata/eval/ncu/wgmma_pred_off.csv): for a wgmma.mma_async whose guard predicate is false,
// ptxas branches around the real `HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], ...` and ALSO emits
// `HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0` on the fall-through path, apparently to keep
// the warpgroup's wgmma bookkeeping (arrive / commit / wait) balanced. That instruction executes
// (4 warps, 128 threads) but writes the zero register from the null descriptor: it computes
// nothing, so it must not make a kernel "dynamic_present". Both marks are required (destination
// RZ and descriptor URZ): a real wgmma always has a live accumulator, and asking for both keeps a
// genuine instruction from ever being discounted.
bool is_gmma_placeholder(std::string_view base_opcode, std::string_view operands) {
  if (base_opcode.find("GMMA") == std::string_view::npos) return false;
  const std::size_t comma = operands.find(',');
  const std::string destination = trim(operands.substr(0, comma));
  return destination == "RZ" && operands.find("gdesc[URZ]") != std::string_view::npos;
}

std::optional<std::int64_t> max_count(std::optional<std::int64_t> a,
                                      std::optional<std::int64_t> b) {
  if (!a) return b;
  if (!b) return a;
  return std::max(*a, *b);
}

// Column positions of the current section's header row.
struct Columns {
  std::size_t source = 0;
  std::optional<std::size_t> inst_executed;
  std::optional<std::size_t> thread_inst_executed_true;
};

}  // namespace

Status parse_sass_text(std::string_view source, NcuSourceLine& line) {
  line.text = trim(source);
  std::string_view rest = line.text;
  if (starts_with(rest, "@")) {
    const std::size_t space = rest.find_first_of(" \t");
    if (space == std::string_view::npos)
      return make_error("parse", "guard predicate without an instruction: '{}'", line.text);
    const std::string_view guard = rest.substr(0, space);
    // @PT / @UPT are the always-true predicates: such a line is not conditional.
    line.predicated = guard != "@PT" && guard != "@UPT";
    rest = rest.substr(space);
    while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  }
  const std::size_t end = rest.find_first_of(" \t;");
  line.opcode = std::string(rest.substr(0, end));
  if (line.opcode.empty()) return make_error("parse", "no instruction in '{}'", line.text);
  line.base_opcode = line.opcode.substr(0, line.opcode.find('.'));
  const std::string_view operands =
      end == std::string_view::npos ? std::string_view() : rest.substr(end);
  line.placeholder = is_gmma_placeholder(line.base_opcode, operands);
  return ok_status();
}

Result<std::vector<NcuKernelSource>> parse_ncu_source_csv(std::string_view raw_text,
                                                          const std::string& origin) {
  // Kernel names and source lines end up in JSON results: valid UTF-8 only.
  const std::string clean_text = to_valid_utf8(raw_text);
  const std::string_view text = clean_text;
  std::vector<NcuKernelSource> kernels;
  std::unordered_map<std::string, std::size_t> kernel_index;
  // Per kernel: address -> index into its lines (sections of one kernel merge on the address).
  std::vector<std::unordered_map<std::string, std::size_t>> line_index;
  std::optional<std::size_t> current;  // kernel of the section being read
  // Its header. A plain value plus a flag rather than std::optional: gcc 12 -O2 reports the
  // optional's payload as maybe-uninitialized here.
  Columns columns;
  bool header_seen = false;
  std::vector<std::string> fields;
  int line_number = 0;
  for (const std::string& raw : split_lines(text)) {
    ++line_number;
    // ncu's messages (==PROF==, ==WARNING==, ==ERROR==) and the profiled program's own stdout
    // share the stream with the CSV; every CSV row ncu prints starts with a quote.
    if (starts_with(raw, "==") || !starts_with(raw, "\"")) continue;
    const std::string problem = split_csv_record(raw, fields);
    if (!problem.empty()) return make_error("parse", "{}:{}: {}", origin, line_number, problem);

    if (fields[0] == "Kernel Name") {
      const std::string name = fields.size() > 1 ? fields[1] : std::string();
      if (name.empty())
        return make_error("parse", "{}:{}: \"Kernel Name\" row without a name", origin,
                          line_number);
      auto [found, inserted] = kernel_index.emplace(name, kernels.size());
      if (inserted) {
        kernels.push_back(NcuKernelSource{name, {}});
        line_index.emplace_back();
      }
      current = found->second;
      header_seen = false;
      continue;
    }
    if (!current)
      return make_error("parse", "{}:{}: CSV row before any \"Kernel Name\" section", origin,
                        line_number);
    if (fields[0] == "Address") {
      Columns header;
      bool has_source = false;
      for (std::size_t i = 1; i < fields.size(); ++i) {
        if (fields[i] == "Source") {
          header.source = i;
          has_source = true;
        }
        if (fields[i] == "inst_executed") header.inst_executed = i;
        if (fields[i] == "thread_inst_executed_true") header.thread_inst_executed_true = i;
      }
      if (!has_source)
        return make_error("parse", "{}:{}: header row without a \"Source\" column", origin,
                          line_number);
      columns = header;
      header_seen = true;
      continue;
    }
    if (!header_seen)
      return make_error("parse", "{}:{}: row before the \"Address\" header of its section", origin,
                        line_number);
    if (!is_hex_address(fields[0]))
      return make_error("parse", "{}:{}: '{}' is not an instruction address", origin, line_number,
                        fields[0]);
    if (fields.size() <= columns.source)
      return make_error("parse", "{}:{}: row without a Source field", origin, line_number);

    const std::string where = fmt::format("{}:{}", origin, line_number);
    NcuSourceLine line;
    line.address = fields[0];
    if (auto status = parse_sass_text(fields[columns.source], line); !status.ok())
      return status.error().with_context(where);
    // A row shorter than its header (seen after a crash) simply has no values.
    const auto read_count = [&](std::optional<std::size_t> column,
                                std::optional<std::int64_t>& out) -> Status {
      if (!column || *column >= fields.size()) return ok_status();
      auto count = parse_count(fields[*column]);
      if (!count.ok()) return count.error().with_context(where);
      out = *count;
      return ok_status();
    };
    PTXB_RETURN_IF_ERROR(read_count(columns.inst_executed, line.inst_executed));
    PTXB_RETURN_IF_ERROR(
        read_count(columns.thread_inst_executed_true, line.thread_inst_executed_true));

    NcuKernelSource& kernel = kernels[*current];
    auto [slot, inserted] = line_index[*current].emplace(line.address, kernel.lines.size());
    if (inserted) {
      kernel.lines.push_back(std::move(line));
    } else {
      // The duplicate section of the same launch: identical rows, so max == either; across
      // launches max keeps the busiest one rather than inventing a total.
      NcuSourceLine& kept = kernel.lines[slot->second];
      kept.inst_executed = max_count(kept.inst_executed, line.inst_executed);
      kept.thread_inst_executed_true =
          max_count(kept.thread_inst_executed_true, line.thread_inst_executed_true);
    }
  }
  if (kernels.empty())
    return make_error("parse",
                      "{}: no \"Kernel Name\" section found; not the output of ncu --page source "
                      "--csv, or nothing was profiled",
                      origin);
  return kernels;
}

namespace {

DynamicCheck make_check(std::string_view verdict, std::string reason,
                        std::map<std::string, FamilyDynamicCounts> families) {
  DynamicCheck check;
  check.verdict = std::string(verdict);
  check.reason = std::move(reason);
  check.families = std::move(families);
  return check;
}

}  // namespace

DynamicCheck decide_dynamic(const std::vector<NcuKernelSource>& kernels, std::string_view arch) {
  std::map<std::string, FamilyDynamicCounts> families;
  bool any_measured = false;
  for (const auto& kernel : kernels) {
    for (const auto& line : kernel.lines) {
      const bool measured = line.thread_inst_executed_true.has_value();
      any_measured = any_measured || measured;
      const auto family = sass_family_of(line.base_opcode);
      if (!family) continue;
      FamilyDynamicCounts& counts = families[*family];
      if (line.placeholder) {
        ++counts.placeholder_lines;
        continue;
      }
      ++counts.static_lines;
      if (!measured) {
        ++counts.unmeasured_lines;
        continue;
      }
      counts.inst_executed += line.inst_executed.value_or(0);
      counts.thread_inst_executed_true += *line.thread_inst_executed_true;
      if (*line.thread_inst_executed_true > 0) ++counts.executed_lines;
    }
  }

  const std::vector<std::string> qualifying = qualifying_families(arch);
  if (qualifying.empty())
    return make_check(kDynamicUnknown,
                      fmt::format("no target-instruction families are defined for '{}'", arch),
                      std::move(families));
  if (kernels.empty())
    return make_check(kDynamicUnknown, "no kernel was profiled", std::move(families));
  // A profile printed without metric columns says nothing about execution (oob_crash.csv: the
  // program failed, ncu printed the SASS only).
  if (!any_measured)
    return make_check(kDynamicUnknown,
                      "the profile holds no metric values (ncu printed the SASS only; the "
                      "profiled program probably failed)",
                      std::move(families));

  std::vector<std::string> executed, executed_notes, unmeasured_notes, idle_notes;
  int placeholders = 0;
  for (const auto& family : qualifying) {
    const auto found = families.find(family);
    if (found == families.end()) continue;
    const FamilyDynamicCounts& counts = found->second;
    placeholders += counts.placeholder_lines;
    if (counts.executed_lines > 0) {
      executed.push_back(family);
      executed_notes.push_back(fmt::format(
          "{} executed: {} predicate-on thread instructions on {} of {} line(s)", family,
          counts.thread_inst_executed_true, counts.executed_lines, counts.static_lines));
    } else if (counts.unmeasured_lines > 0) {
      unmeasured_notes.push_back(fmt::format("{} of {} {} line(s) carry no metric values",
                                             counts.unmeasured_lines, counts.static_lines, family));
    } else if (counts.static_lines > 0) {
      idle_notes.push_back(fmt::format("{} {} line(s)", counts.static_lines, family));
    }
  }
  std::string placeholder_note;
  if (placeholders > 0)
    placeholder_note = fmt::format(
        "; {} placeholder GMMA line(s) (destination RZ, descriptor URZ) compute nothing and are "
        "not counted",
        placeholders);

  if (!executed.empty()) {
    DynamicCheck check =
        make_check(kDynamicPresent, join(executed_notes, "; "), std::move(families));
    check.executed_families = std::move(executed);
    return check;
  }
  if (!unmeasured_notes.empty())
    return make_check(kDynamicUnknown,
                      join(unmeasured_notes, "; ") + "; cannot tell whether they executed",
                      std::move(families));
  if (!idle_notes.empty())
    return make_check(kDynamicNotExecuted,
                      join(idle_notes, ", ") +
                          " in the profiled kernels, none executed with a true guard predicate" +
                          placeholder_note,
                      std::move(families));
  return make_check(kDynamicNotExecuted,
                    fmt::format("the {} profiled kernel(s) hold no {} instruction{}",
                                kernels.size(), join(qualifying, "/"), placeholder_note),
                    std::move(families));
}

DynamicCheck dynamic_unknown(std::string reason) {
  return make_check(kDynamicUnknown, std::move(reason), {});
}

namespace {

Result<std::int64_t> read_int(const Json& json, const char* key, const std::string& what) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_number_integer())
    return make_error("parse", "{}: field '{}' must be an integer", what, key);
  return it->get<std::int64_t>();
}

Result<std::string> read_string(const Json& json, const char* key, const std::string& what) {
  const auto it = json.find(key);
  if (it == json.end() || !it->is_string())
    return make_error("parse", "{}: field '{}' must be a string", what, key);
  return it->get<std::string>();
}

}  // namespace

Json DynamicCheck::to_json() const {
  Json family_json = Json::object();
  for (const auto& [name, counts] : families) {
    family_json[name] = Json{{"static_lines", counts.static_lines},
                             {"placeholder_lines", counts.placeholder_lines},
                             {"executed_lines", counts.executed_lines},
                             {"unmeasured_lines", counts.unmeasured_lines},
                             {"inst_executed", counts.inst_executed},
                             {"thread_inst_executed_true", counts.thread_inst_executed_true}};
  }
  return Json{{"verdict", verdict},
              {"reason", reason},
              {"executed_families", executed_families},
              {"families", family_json}};
}

Result<DynamicCheck> DynamicCheck::from_json(const Json& json) {
  const std::string what = "dynamic check";
  if (!json.is_object()) return make_error("parse", "{}: expected a JSON object", what);
  DynamicCheck check;
  PTXB_ASSIGN_OR_RETURN(check.verdict, read_string(json, "verdict", what));
  if (check.verdict != kDynamicPresent && check.verdict != kDynamicNotExecuted &&
      check.verdict != kDynamicUnknown)
    return make_error("parse", "{}: unknown verdict '{}'", what, check.verdict);
  PTXB_ASSIGN_OR_RETURN(check.reason, read_string(json, "reason", what));
  const auto executed = json.find("executed_families");
  if (executed == json.end() || !executed->is_array())
    return make_error("parse", "{}: field 'executed_families' must be an array", what);
  for (const auto& family : *executed) {
    if (!family.is_string())
      return make_error("parse", "{}: executed_families holds a non-string", what);
    check.executed_families.push_back(family.get<std::string>());
  }
  const auto families = json.find("families");
  if (families == json.end() || !families->is_object())
    return make_error("parse", "{}: field 'families' must be an object", what);
  for (const auto& [name, item] : families->items()) {
    const std::string item_what = what + ": families." + name;
    if (!item.is_object()) return make_error("parse", "{}: expected a JSON object", item_what);
    FamilyDynamicCounts counts;
    PTXB_ASSIGN_OR_RETURN(counts.static_lines, read_int(item, "static_lines", item_what));
    PTXB_ASSIGN_OR_RETURN(counts.placeholder_lines, read_int(item, "placeholder_lines", item_what));
    PTXB_ASSIGN_OR_RETURN(counts.executed_lines, read_int(item, "executed_lines", item_what));
    PTXB_ASSIGN_OR_RETURN(counts.unmeasured_lines, read_int(item, "unmeasured_lines", item_what));
    PTXB_ASSIGN_OR_RETURN(counts.inst_executed, read_int(item, "inst_executed", item_what));
    PTXB_ASSIGN_OR_RETURN(counts.thread_inst_executed_true,
                          read_int(item, "thread_inst_executed_true", item_what));
    check.families[name] = counts;
  }
  return check;
}

std::vector<std::string> ncu_source_argv(const std::string& ncu_path,
                                         const std::vector<std::string>& program_argv) {
  std::vector<std::string> argv = {ncu_path,
                                   "--clock-control",
                                   "none",
                                   "--profile-from-start",
                                   "off",
                                   "--page",
                                   "source",
                                   "--csv",
                                   "--print-source",
                                   "sass",
                                   "--metrics",
                                   "inst_executed,thread_inst_executed_true"};
  argv.insert(argv.end(), program_argv.begin(), program_argv.end());
  return argv;
}

}  // namespace ptxb
