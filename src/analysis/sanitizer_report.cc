#include "analysis/sanitizer_report.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "core/json_fields.h"
#include "core/strings.h"

namespace ptxb {

namespace {

constexpr std::string_view kPrefix = "=========";

struct Location {
  std::string kernel;
  std::string file;
  int line = 0;
};

bool is_hex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c));
  });
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// "<kernel>+0x1930 in kernel.cu:89" (memcheck, synccheck, initcheck), possibly followed by
// " [N hazards]" (racecheck). Without line info the " in file:line" part is missing and only the
// kernel is known; "file:line:function" is also accepted for the function.
std::optional<Location> parse_location(std::string_view where) {
  Location location;
  std::string_view code = where;
  const std::size_t in = where.rfind(" in ");
  if (in != std::string_view::npos) {
    code = where.substr(0, in);
    std::string_view place = where.substr(in + 4);
    place = place.substr(0, place.find(" ["));
    const std::size_t colon = place.find(':');
    if (colon != std::string_view::npos) {
      const std::string_view rest = place.substr(colon + 1);
      const std::size_t next = rest.find(':');
      if (auto line = parse_int(rest.substr(0, next)); line && *line > 0) {
        location.file = std::string(place.substr(0, colon));
        location.line = *line;
        if (next != std::string_view::npos) location.kernel = trim(rest.substr(next + 1));
      }
    }
  }
  // Drop the "+0x1930" offset: it changes with every edit and means nothing to the model.
  const std::size_t plus = code.rfind("+0x");
  if (plus != std::string_view::npos && is_hex(code.substr(plus + 3))) code = code.substr(0, plus);
  const std::string kernel = trim(code);
  // A bare address ("0x1a0") names no kernel.
  if (!kernel.empty() && !(starts_with(kernel, "0x") && is_hex(kernel.substr(2))))
    location.kernel = kernel;
  if (location.kernel.empty() && location.file.empty()) return std::nullopt;
  return location;
}

void apply(const Location& location, SanitizerFinding& finding) {
  if (finding.kernel.empty()) finding.kernel = location.kernel;
  if (finding.file.empty()) {
    finding.file = location.file;
    finding.line = location.line;
  }
}

// The short form of the detail for summary(): device addresses differ on every run and only
// cost the model tokens, so "Access to 0x7f.. is out of bounds; and is N bytes after the nearest
// allocation at 0x7f.. of size 512 bytes" becomes "out of bounds, N bytes after the nearest
// allocation of size 512 bytes". Other detail lines are kept as printed.
std::string short_detail(const std::string& detail) {
  std::vector<std::string> parts;
  for (std::string part : split(detail, ';')) {
    part = trim(part);
    if (starts_with(part, "Access to 0x") || starts_with(part, "Address 0x")) {
      const std::size_t is = part.find(" is ");
      if (is != std::string::npos) part = part.substr(is + 4);
    } else if (starts_with(part, "and is ")) {
      part = part.substr(7);
    }
    const std::size_t at = part.find(" at 0x");
    if (at != std::string::npos) {
      std::size_t end = at + 6;
      while (end < part.size() && std::isxdigit(static_cast<unsigned char>(part[end]))) ++end;
      part.erase(at, end - at);
    }
    if (!part.empty()) parts.push_back(part);
  }
  return join(parts, ", ");
}

std::string finding_line(const SanitizerFinding& finding) {
  if (finding.api_error) return "CUDA API error: " + finding.kind;
  std::string line;
  if (!finding.file.empty())
    line = fmt::format("{}:{}: ", finding.file, finding.line);
  else if (!finding.kernel.empty())
    line = finding.kernel + ": ";
  line += finding.kind;
  if (!finding.thread.empty() || !finding.block.empty())
    line += fmt::format(" (thread {} block {})", finding.thread, finding.block);
  const std::string detail = short_detail(finding.detail);
  if (!detail.empty()) line += ": " + detail;
  return line;
}

}  // namespace

Result<SanitizerReport> parse_sanitizer_output(std::string_view raw_text, std::string tool,
                                               SanitizerEnd end) {
  // Messages quote the candidate's names: valid UTF-8 only, they end up in JSON results.
  const std::string clean_text = to_valid_utf8(raw_text);
  const std::string_view text = clean_text;
  const std::string origin = "compute-sanitizer " + tool + " output";
  SanitizerReport report;
  report.tool = std::move(tool);
  bool banner = false;
  bool summary_seen = false;
  SanitizerFinding* current = nullptr;  // the finding that indented lines belong to
  int line_number = 0;
  for (const std::string& raw : split_lines(text)) {
    ++line_number;
    if (!starts_with(raw, kPrefix)) continue;  // the program's own output
    const std::string_view body = std::string_view(raw).substr(kPrefix.size());
    const std::string message = trim(body);
    if (message.empty()) {  // the separator between messages
      current = nullptr;
      continue;
    }
    // Detail lines are indented by four spaces beyond the single space after the prefix.
    const bool indented = starts_with(body, "  ");
    if (indented) {
      if (!current) continue;  // backtrace of a message we do not keep
      if (starts_with(message, "at ")) {
        if (auto location = parse_location(std::string_view(message).substr(3)))
          apply(*location, *current);
      } else if (starts_with(message, "by thread ")) {
        // "by thread (0,0,0) in block (0,0,0)"
        const std::string_view rest = std::string_view(message).substr(10);
        const std::size_t in_block = rest.find(" in block ");
        current->thread = trim(rest.substr(0, in_block));
        if (in_block != std::string_view::npos) current->block = trim(rest.substr(in_block + 10));
      } else if (starts_with(message, "Device Frame:")) {
        // Innermost frame first. It only fills what the "at" line left open: a binary without
        // line info for the kernel may still have it for an inlined helper.
        if (auto location = parse_location(std::string_view(message).substr(13)))
          apply(*location, *current);
      } else if (starts_with(message, "Host Frame:") ||
                 starts_with(message, "Saved host backtrace")) {
        continue;  // the runner's own call stack: nothing the model can act on
      } else {
        current->detail += (current->detail.empty() ? "" : "; ") + message;
      }
      continue;
    }

    current = nullptr;
    if (message == "COMPUTE-SANITIZER") {
      banner = true;
    } else if (starts_with(message, "ERROR SUMMARY:")) {
      // "ERROR SUMMARY: 6 errors" / "ERROR SUMMARY: 1 error"
      const std::string count = trim(std::string_view(message).substr(14));
      const auto value = parse_int(std::string_view(count).substr(0, count.find(' ')));
      if (!value)
        return make_error("parse", "{}:{}: unreadable error count in '{}'", origin, line_number,
                          message);
      report.error_count = *value;
      summary_seen = true;
    } else if (starts_with(message, "RACECHECK SUMMARY:")) {
      // "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)". Only the errors count:
      // racecheck's warnings are hazards it cannot confirm as races; they stay in the findings.
      // ERROR SUMMARY, when also printed, wins.
      const std::size_t open = message.find('(');
      const auto value = open == std::string::npos
                             ? std::nullopt
                             : parse_int(std::string_view(message).substr(
                                   open + 1, message.find(' ', open) - open - 1));
      if (!value)
        return make_error("parse", "{}:{}: unreadable error count in '{}'", origin, line_number,
                          message);
      if (report.error_count < 0) report.error_count = *value;
      summary_seen = true;
    } else if (message == "Target application returned an error") {
      report.target_failed = true;
    } else if (starts_with(message, "Program hit ")) {
      SanitizerFinding finding;
      finding.kind = message.substr(12);
      if (ends_with(finding.kind, ".")) finding.kind.pop_back();
      finding.api_error = true;
      report.findings.push_back(std::move(finding));
      current = &report.findings.back();
    } else {
      // Any other top-level message is a finding. Racecheck names the first access on this
      // line ("Error: Race reported between Write access at <kernel>+0x120 in race.cu:14").
      SanitizerFinding finding;
      finding.kind = message;
      const std::size_t at = message.find(" at ");
      if (at != std::string::npos) {
        if (auto location = parse_location(std::string_view(message).substr(at + 4))) {
          apply(*location, finding);
          finding.kind = message.substr(0, at);
        }
      }
      report.findings.push_back(std::move(finding));
      current = &report.findings.back();
    }
  }
  if (!banner)
    return make_error("parse", "{}: no COMPUTE-SANITIZER banner; not compute-sanitizer output",
                      origin);
  if (!summary_seen && end == SanitizerEnd::kRequireSummary)
    return make_error("parse",
                      "{}: no ERROR SUMMARY line; compute-sanitizer did not finish (it crashed, "
                      "was killed or timed out)",
                      origin);
  return report;
}

Json SanitizerReport::to_json() const {
  Json findings_json = Json::array();
  for (const auto& finding : findings) {
    findings_json.push_back(Json{{"kind", finding.kind},
                                 {"kernel", finding.kernel},
                                 {"file", finding.file},
                                 {"line", finding.line},
                                 {"thread", finding.thread},
                                 {"block", finding.block},
                                 {"detail", finding.detail},
                                 {"api_error", finding.api_error}});
  }
  return Json{{"tool", tool},
              {"error_count", error_count},
              {"target_failed", target_failed},
              {"findings", findings_json}};
}

namespace {

Result<SanitizerFinding> finding_from_json(const Json& json) {
  SanitizerFinding f;
  FieldReader r(json);
  r.required("kind", f.kind).required("kernel", f.kernel).required("file", f.file);
  r.required("line", f.line).required("thread", f.thread).required("block", f.block);
  r.required("detail", f.detail).required("api_error", f.api_error);
  PTXB_RETURN_IF_ERROR(r.status());
  return f;
}

}  // namespace

Result<SanitizerReport> SanitizerReport::from_json(const Json& json) {
  SanitizerReport report;
  FieldReader r(json);
  r.required("tool", report.tool).required("error_count", report.error_count);
  r.required("target_failed", report.target_failed);
  r.custom("findings", true, [&](const Json& v, const std::string& path) -> Status {
    if (!v.is_array()) return make_error("parse", "{}: expected an array", path);
    for (std::size_t i = 0; i < v.size(); ++i) {
      auto finding = finding_from_json(v[i]);
      if (!finding.ok()) return rebase_json_path(finding.error(), json_path_index(path, i));
      report.findings.push_back(std::move(finding).value());
    }
    return ok_status();
  });
  PTXB_RETURN_IF_ERROR(r.status());
  return report;
}

std::string SanitizerReport::summary(std::size_t max_findings) const {
  // Rank: located in a kernel, then other tool messages, then CUDA API errors (consequences).
  std::vector<const SanitizerFinding*> ranked;
  for (int rank = 0; rank < 3; ++rank) {
    for (const auto& finding : findings) {
      const bool located = !finding.api_error && (!finding.file.empty() || !finding.kernel.empty());
      const int finding_rank = finding.api_error ? 2 : located ? 0 : 1;
      if (finding_rank == rank) ranked.push_back(&finding);
    }
  }
  // Identical lines (the same API error after every later call) are printed once, counted.
  std::vector<std::pair<std::string, int>> lines;
  for (const SanitizerFinding* finding : ranked) {
    const std::string line = finding_line(*finding);
    auto same = std::find_if(lines.begin(), lines.end(),
                             [&](const auto& entry) { return entry.first == line; });
    if (same != lines.end())
      ++same->second;
    else
      lines.emplace_back(line, 1);
  }

  std::string out = tool + ": ";
  if (error_count < 0)
    out += "error count unknown";
  else if (error_count == 0)
    out += "no errors";
  else
    out += fmt::format("{} error{}", error_count, error_count == 1 ? "" : "s");
  if (target_failed) out += "; the program failed";
  out += '\n';
  const std::size_t shown = std::min(max_findings, lines.size());
  for (std::size_t i = 0; i < shown; ++i) {
    out += lines[i].first;
    if (lines[i].second > 1) out += fmt::format(" ({} times)", lines[i].second);
    out += '\n';
  }
  if (shown < lines.size()) out += fmt::format("... and {} more\n", lines.size() - shown);
  return out;
}

std::vector<std::string> sanitizer_argv(const std::string& sanitizer_path, const std::string& tool,
                                        const std::vector<std::string>& program_argv) {
  std::vector<std::string> argv = {sanitizer_path,     "--tool", tool, "--error-exitcode", "9",
                                   "--show-backtrace", "device"};
  argv.insert(argv.end(), program_argv.begin(), program_argv.end());
  return argv;
}

}  // namespace ptxb
