#include "analysis/source_context.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/strings.h"

namespace ptxb {
namespace {

// The code of a line without its `//` comment (string literals holding "//" are rare in
// kernels and would only shorten the scanned text).
std::string code_of(const std::string& line) {
  std::size_t comment = line.find("//");
  return comment == std::string::npos ? line : line.substr(0, comment);
}

bool launches_a_kernel(const std::string& code) {
  for (const char* marker :
       {"<<<", "cudaLaunchKernel", "cudaLaunchKernelEx", "cuLaunchKernel", "cuLaunchKernelEx"})
    if (code.find(marker) != std::string::npos) return true;
  return false;
}

// A kernel's name as written at its launch: "gemm_tile_kernel" for the demangled
// "<unnamed>::gemm_tile_kernel(const __nv_bfloat16 *, ...)" or "ns::k<128>".
std::string bare_name(const std::string& kernel) {
  std::string name = kernel.substr(0, kernel.find('('));
  // Anonymous namespaces as compute-sanitizer and cuda-gdb print them, before template
  // arguments are cut at '<'.
  name = replace_all(replace_all(name, "<unnamed>::", ""), "(anonymous namespace)::", "");
  name = name.substr(0, name.find('<'));
  std::size_t scope = name.rfind("::");
  return trim(scope == std::string::npos ? name : name.substr(scope + 2));
}

}  // namespace

std::string source_excerpt(std::string_view source, int line, int context) {
  std::vector<std::string> lines = split_lines(source);
  if (line < 1 || line > static_cast<int>(lines.size())) return "";
  int first = std::max(1, line - context);
  int last = std::min(static_cast<int>(lines.size()), line + context);
  int width = static_cast<int>(std::to_string(last).size());
  std::string out;
  for (int i = first; i <= last; ++i)
    out += fmt::format("{}{:>{}} | {}\n", i == line ? "> " : "  ", i, width, lines[i - 1]);
  return out;
}

std::optional<int> infer_launch_line(std::string_view source, int from_line,
                                     const std::string& kernel_name) {
  std::vector<std::string> lines = split_lines(source);
  int start = from_line < 1 || from_line > static_cast<int>(lines.size())
                  ? static_cast<int>(lines.size())
                  : from_line;
  std::string wanted = kernel_name.empty() ? "" : bare_name(kernel_name);
  for (int i = start; i >= 1; --i) {
    std::string code = code_of(lines[i - 1]);
    if (!launches_a_kernel(code)) continue;
    if (wanted.empty() || code.find(wanted) != std::string::npos) return i;
  }
  return std::nullopt;
}

}  // namespace ptxb
