#include "analysis/cuda_gdb_report.h"

#include <regex>

#include <fmt/format.h>

#include "analysis/source_context.h"
#include "core/strings.h"

namespace ptxb {
namespace {

const std::regex kExceptionLine(R"(CUDA Exception: (.+?)\s*$)");
const std::regex kSignalLine(R"(received signal CUDA_EXCEPTION_\d+, (.+?)\.?\s*$)");
const std::regex kPcLine(
    R"(exception was triggered at PC (0x[0-9a-fA-F]+)(?: \(([^:()\s]+):(\d+)\))?)");
const std::regex kFocusLine(R"(block (\([0-9, ]+\)), thread (\([0-9, ]+\)))");
// "#1  0x... in name<<<...>>> (args) at file:line"; the address is absent on frame #0 when gdb
// stops exactly at a line start.
const std::regex kFrameLine(R"(^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?(.+) at ([^:\s]+):(\d+)\s*$)");

DebugFrame frame_of(const std::smatch& match) {
  DebugFrame frame;
  frame.level = std::stoi(match[1].str());
  std::string call = match[2].str();
  if (auto open = call.find("<<<"); open != std::string::npos) {
    auto close = call.find(">>>", open);
    if (close != std::string::npos) frame.launch = call.substr(open, close + 3 - open);
    call = call.substr(0, open);
  }
  frame.function = trim(call.substr(0, call.find(" (")));
  frame.file = match[3].str();
  frame.line = std::stoi(match[4].str());
  return frame;
}

}  // namespace

Result<CudaGdbReport> parse_cuda_gdb_output(std::string_view text) {
  CudaGdbReport report;
  for (const std::string& raw : split_lines(text)) {
    std::string line = trim(raw);
    std::smatch match;
    if (std::regex_search(line, match, kExceptionLine) ||
        (report.exception.empty() && std::regex_search(line, match, kSignalLine))) {
      report.exception = match[1].str();
    } else if (std::regex_search(line, match, kPcLine)) {
      report.pc = match[1].str();
      if (match[2].matched) {
        report.exception_file = match[2].str();
        report.exception_line = std::stoi(match[3].str());
      }
    } else if (std::regex_search(line, match, kFrameLine)) {
      report.frames.push_back(frame_of(match));
    }
    // The focus line may also carry other fields; take the first block/thread seen.
    if (report.block.empty() && std::regex_search(line, match, kFocusLine)) {
      report.block = match[1].str();
      report.thread = match[2].str();
    }
  }
  if (report.exception.empty() && report.frames.empty())
    return make_error("parse", "cuda-gdb output holds no CUDA exception and no frame");
  return report;
}

std::string CudaGdbReport::render(std::string_view source, const std::string& source_name) const {
  std::string out = "CUDA exception: " + (exception.empty() ? "unknown" : exception);
  if (!block.empty()) out += fmt::format(" (block {}, thread {})", block, thread);
  if (!exception_file.empty()) out += fmt::format(" at {}:{}", exception_file, exception_line);
  out += "\n";
  for (const DebugFrame& frame : frames) {
    out += fmt::format("#{} {}{} at {}:{}\n", frame.level, frame.function, frame.launch, frame.file,
                       frame.line);
    if (frame.file == source_name) out += source_excerpt(source, frame.line);
  }
  // No frame in the kernel file (inlined away, or a core dump without line info): show the
  // exception's own location.
  bool shown = false;
  for (const DebugFrame& frame : frames) shown |= frame.file == source_name;
  if (!shown && exception_file == source_name) out += source_excerpt(source, exception_line);
  return out;
}

}  // namespace ptxb
