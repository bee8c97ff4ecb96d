#include "sass/ptxas_report.h"

#include <limits>
#include <regex>

#include "core/strings.h"

namespace ptxb {
namespace {

// Counts in ptxas's report, saturated (core/strings.h): a fuzzed "999999999999 registers" must
// not throw out of the parse.
int as_int(const std::string& digits) {
  return static_cast<int>(digits_saturating(digits, std::numeric_limits<int>::max()));
}
std::int64_t as_int64(const std::string& digits) {
  return digits_saturating(digits, std::numeric_limits<std::int64_t>::max());
}

// ptxas prefixes every report line with "ptxas info    : " or "ptxas warning : "; the error
// form "ptxas /tmp/x.ptx, line 12; error   : ..." is a compile error, not a report line.
bool strip_ptxas_prefix(const std::string& line, std::string& body, bool& is_warning) {
  static const std::regex kPrefix(R"(^ptxas(?: [^:]*?)?\s*(info|warning)\s*:\s?(.*)$)");
  std::smatch match;
  if (!std::regex_match(line, match, kPrefix)) return false;
  is_warning = match[1] == "warning";
  body = match[2];
  return true;
}

std::string quoted_function_name(const std::string& text) {
  static const std::regex kFunction(R"(function '([^']+)')");
  std::smatch match;
  if (std::regex_search(text, match, kFunction)) return match[1];
  return "";
}

}  // namespace

bool slows_the_kernel(const PtxasDiagnostic& diagnostic) {
  return diagnostic.performance_loss || contains(diagnostic.message, "warpgroup.wait is injected");
}

const PtxasKernelReport* PtxasReport::find(std::string_view name) const {
  for (const auto& kernel : kernels)
    if (kernel.name == name) return &kernel;
  return nullptr;
}

std::vector<PtxasDiagnostic> PtxasReport::unattributed() const {
  std::vector<PtxasDiagnostic> out;
  for (const auto& diagnostic : diagnostics)
    if (diagnostic.kernel.empty()) out.push_back(diagnostic);
  return out;
}

PtxasReport parse_ptxas_report(std::string_view raw_log) {
  // Kernel names and messages end up in JSON results: valid UTF-8 only.
  const std::string clean_log = to_valid_utf8(raw_log);
  const std::string_view log = clean_log;
  static const std::regex kCompiling(R"(^Compiling entry function '([^']+)' for '([^']+)')");
  static const std::regex kProperties(R"(^Function properties for (\S+))");
  static const std::regex kFrame(
      R"(^\s*(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex kRegisters(R"(^Used (\d+) registers)");
  static const std::regex kItem(R"((\d+) bytes (smem|lmem|cmem\[\d+\]|cumulative stack size))");
  static const std::regex kBarriers(R"(used (\d+) barriers)");
  static const std::regex kGmem(R"(^(\d+) bytes gmem)");
  static const std::regex kCode(R"(^\((C\d+)\)\s*(.*)$)");

  PtxasReport report;
  PtxasKernelReport* current = nullptr;
  auto kernel_named = [&](const std::string& name) -> PtxasKernelReport* {
    for (auto& kernel : report.kernels)
      if (kernel.name == name) return &kernel;
    report.kernels.push_back(PtxasKernelReport{});
    report.kernels.back().name = name;
    return &report.kernels.back();
  };
  std::string pending_arch;

  for (const std::string& raw_line : split_lines(log)) {
    std::smatch match;
    // The stack-frame line is the only report line without the "ptxas" prefix.
    if (std::regex_search(raw_line, match, kFrame)) {
      if (current) {
        current->stack_frame_bytes = as_int64(match[1]);
        current->spill_store_bytes = as_int64(match[2]);
        current->spill_load_bytes = as_int64(match[3]);
      }
      continue;
    }
    std::string body;
    bool is_warning = false;
    if (!strip_ptxas_prefix(raw_line, body, is_warning)) continue;

    if (std::regex_search(body, match, kCompiling)) {
      current = kernel_named(match[1]);
      current->arch = match[2];
      current->is_entry = true;
      pending_arch = match[2];
    } else if (std::regex_search(body, match, kProperties)) {
      // A non-inlined device function gets "Function properties" without "Compiling entry".
      const std::string name = match[1];
      bool known = false;
      for (const auto& kernel : report.kernels) known = known || kernel.name == name;
      current = kernel_named(name);
      if (!known && (current->arch.empty())) {
        current->is_entry = false;
        current->arch = pending_arch;
      }
    } else if (std::regex_search(body, match, kRegisters)) {
      if (!current) continue;
      current->registers = as_int(match[1]);
      std::smatch barrier;
      if (std::regex_search(body, barrier, kBarriers)) current->barriers = as_int(barrier[1]);
      for (std::sregex_iterator it(body.begin(), body.end(), kItem), end; it != end; ++it) {
        const std::int64_t bytes = as_int64((*it)[1]);
        const std::string kind = (*it)[2];
        if (kind == "smem")
          current->shared_bytes = bytes;
        else if (kind == "lmem")
          current->local_bytes = bytes;
        else if (kind == "cumulative stack size")
          current->cumulative_stack_bytes = bytes;
        else
          current->constant_bytes.emplace_back(kind, bytes);
      }
    } else if (std::regex_search(body, match, kGmem)) {
      report.global_bytes = as_int64(match[1]);
    } else if (starts_with(body, "Compile time") || starts_with(body, "Function properties")) {
      continue;
    } else if (std::regex_search(body, match, kCode) || is_warning) {
      PtxasDiagnostic diagnostic;
      if (!match.empty() && match.size() == 3 && match[1].matched) {
        diagnostic.code = match[1];
        diagnostic.message = trim(match[2].str());
      } else {
        diagnostic.message = trim(body);
      }
      diagnostic.performance_loss = contains(diagnostic.message, "Potential Performance Loss");
      diagnostic.kernel = quoted_function_name(diagnostic.message);
      report.diagnostics.push_back(diagnostic);
    }
  }
  for (const auto& diagnostic : report.diagnostics) {
    if (diagnostic.kernel.empty()) continue;
    for (auto& kernel : report.kernels)
      if (kernel.name == diagnostic.kernel) kernel.diagnostics.push_back(diagnostic);
  }
  return report;
}

namespace {

Json diagnostic_to_json(const PtxasDiagnostic& diagnostic) {
  return Json{{"code", diagnostic.code},
              {"kernel", diagnostic.kernel},
              {"message", diagnostic.message},
              {"performance_loss", diagnostic.performance_loss}};
}

PtxasDiagnostic ptxas_diagnostic_from_json(const Json& json) {
  PtxasDiagnostic diagnostic;
  diagnostic.code = json.value("code", "");
  diagnostic.kernel = json.value("kernel", "");
  diagnostic.message = json.value("message", "");
  diagnostic.performance_loss = json.value("performance_loss", false);
  return diagnostic;
}

}  // namespace

Json ptxas_report_to_json(const PtxasReport& report) {
  Json kernels = Json::array();
  for (const auto& kernel : report.kernels) {
    Json constants = Json::object();
    for (const auto& [bank, bytes] : kernel.constant_bytes) constants[bank] = bytes;
    Json diagnostics = Json::array();
    for (const auto& diagnostic : kernel.diagnostics)
      diagnostics.push_back(diagnostic_to_json(diagnostic));
    kernels.push_back(Json{{"name", kernel.name},
                           {"arch", kernel.arch},
                           {"is_entry", kernel.is_entry},
                           {"registers", kernel.registers},
                           {"barriers", kernel.barriers},
                           {"shared_bytes", kernel.shared_bytes},
                           {"stack_frame_bytes", kernel.stack_frame_bytes},
                           {"spill_store_bytes", kernel.spill_store_bytes},
                           {"spill_load_bytes", kernel.spill_load_bytes},
                           {"local_bytes", kernel.local_bytes},
                           {"cumulative_stack_bytes", kernel.cumulative_stack_bytes},
                           {"constant_bytes", constants},
                           {"diagnostics", diagnostics}});
  }
  Json diagnostics = Json::array();
  for (const auto& diagnostic : report.diagnostics)
    diagnostics.push_back(diagnostic_to_json(diagnostic));
  return Json{
      {"kernels", kernels}, {"diagnostics", diagnostics}, {"global_bytes", report.global_bytes}};
}

PtxasReport ptxas_report_from_json(const Json& json) {
  PtxasReport report;
  report.global_bytes = json.value("global_bytes", std::int64_t{0});
  for (const auto& item : json.value("kernels", Json::array())) {
    PtxasKernelReport kernel;
    kernel.name = item.value("name", "");
    kernel.arch = item.value("arch", "");
    kernel.is_entry = item.value("is_entry", true);
    kernel.registers = item.value("registers", 0);
    kernel.barriers = item.value("barriers", 0);
    kernel.shared_bytes = item.value("shared_bytes", std::int64_t{0});
    kernel.stack_frame_bytes = item.value("stack_frame_bytes", std::int64_t{0});
    kernel.spill_store_bytes = item.value("spill_store_bytes", std::int64_t{0});
    kernel.spill_load_bytes = item.value("spill_load_bytes", std::int64_t{0});
    kernel.local_bytes = item.value("local_bytes", std::int64_t{0});
    kernel.cumulative_stack_bytes = item.value("cumulative_stack_bytes", std::int64_t{0});
    const Json constant_bytes_json = item.value("constant_bytes", Json::object());
    for (const auto& [bank, bytes] : constant_bytes_json.items())
      kernel.constant_bytes.emplace_back(bank, bytes.get<std::int64_t>());
    for (const auto& diagnostic : item.value("diagnostics", Json::array()))
      kernel.diagnostics.push_back(ptxas_diagnostic_from_json(diagnostic));
    report.kernels.push_back(std::move(kernel));
  }
  for (const auto& diagnostic : json.value("diagnostics", Json::array()))
    report.diagnostics.push_back(ptxas_diagnostic_from_json(diagnostic));
  return report;
}

}  // namespace ptxb
