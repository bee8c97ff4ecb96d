#include "analysis/cuda_gdb_report.h"

#include <climits>
#include <regex>

#include <fmt/format.h>

#include "analysis/source_context.h"
#include "core/json_fields.h"
#include "core/strings.h"

namespace ptxb {
namespace {

const std::regex kExceptionLine(R"(CUDA Exception: (.+?)\s*$)");
const std::regex kSignalLine(R"(received signal CUDA_EXCEPTION_\d+, (.+?)\.?\s*$)");
// "... at PC 0x7fb96f7a0140 (kernel.cu:89)", or on the H200 (cuda-gdb 13.0) with the function
// between: "... at PC 0x7fb96f7a0140  (anonymous namespace)::first_column(...)  (kernel.cu:16)".
const std::regex kPcLine(
    R"(exception was triggered at PC (0x[0-9a-fA-F]+)(?:.*\(([^:()\s]+):(\d+)\))?)");
const std::regex kFocusLine(R"(block (\([0-9, ]+\)), thread (\([0-9, ]+\)))");
// "#1  0x... in name<<<...>>> (args) at file:line"; the address is absent on frame #0 when gdb
// stops exactly at a line start.
// cuda-gdb 13.0 on the H200 names the build path ("at /tmp/.../kernel.cu:28") and, for a line of
// an inlined helper, where it was inlined: "at .../cuda_bf16.hpp:608 in _ZN... inlined from
// kernel.cu:16".
const std::regex kFrameLine(
    R"(^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?(.+?) at ([^:\s]+):(\d+)(?: in \S+ inlined from ([^:\s]+):(\d+))?\s*$)");
// A frame without a location: "#0  0x00007f... in probe_kernel<<<(1,1,1),(128,1,1)>>> ()".
const std::regex kBareFrameLine(R"(^#(\d+)\s+(?:0x[0-9a-fA-F]+ in )?(\S.*?)\s*$)");
// x/i $pc: "=> 0x7f8e4ab7a430 <_Z10store_tilePfii+560>:\tSTG.E [R2.64], R5 ;"
const std::regex kInstructionLine(R"(^=>\s*(0x[0-9a-fA-F]+)(?:\s*<[^>]*>)?:\s*(.+?)\s*$)");

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "#0  <unavailable> in ?? ()": a dump without a kernel; nothing to show.
bool unknown_frame(const std::string& line) {
  return line.find("<unavailable>") != std::string::npos || line.find(" ?? (") != std::string::npos;
}

DebugFrame frame_of(const std::smatch& match, bool located) {
  DebugFrame frame;
  frame.level = static_cast<int>(digits_saturating(match[1].str(), INT_MAX));
  std::string call = match[2].str();
  if (auto open = call.find("<<<"); open != std::string::npos) {
    auto close = call.find(">>>", open);
    if (close != std::string::npos) frame.launch = call.substr(open, close + 3 - open);
    call = call.substr(0, open);
  }
  frame.function = trim(call.substr(0, call.find(" (")));
  // A frame without arguments prints "name()" when nothing separates the parentheses.
  if (ends_with(frame.function, "()"))
    frame.function = frame.function.substr(0, frame.function.size() - 2);
  if (located) {
    // File names without the build folder (it is the sandbox's, not the model's). A line of an
    // inlined helper: a library header's (cuda_bf16.hpp) becomes the caller's own line, but a
    // helper of the kernel's own file keeps its line, the one the PC is on (a hang inside
    // `wait_phase` is the try_wait loop, not the call), with the call's line beside it.
    const bool inlined = match.size() > 6 && match[5].matched;
    const std::string file = base_name(match[3].str());
    const int line = static_cast<int>(digits_saturating(match[4].str(), INT_MAX));
    if (inlined && file != base_name(match[5].str())) {
      frame.file = base_name(match[5].str());
      frame.line = static_cast<int>(digits_saturating(match[6].str(), INT_MAX));
    } else {
      frame.file = file;
      frame.line = line;
      if (inlined) frame.inlined_at = static_cast<int>(digits_saturating(match[6].str(), INT_MAX));
    }
  }
  return frame;
}

}  // namespace

Result<CudaGdbReport> parse_cuda_gdb_output(std::string_view text) {
  CudaGdbReport report;
  bool backtrace_done = false;
  for (const std::string& raw : split_lines(text)) {
    std::string line = trim(raw);
    std::smatch match;
    if (std::regex_search(line, match, kExceptionLine) ||
        (report.exception.empty() && std::regex_search(line, match, kSignalLine))) {
      report.exception = match[1].str();
    } else if (std::regex_search(line, match, kPcLine)) {
      report.pc = match[1].str();
      if (match[2].matched) {
        report.exception_file = base_name(match[2].str());
        report.exception_line = static_cast<int>(digits_saturating(match[3].str(), INT_MAX));
      }
    } else if (unknown_frame(line) && starts_with(line, "#")) {
      continue;
    } else if (std::regex_search(line, match, kFrameLine) ||
               std::regex_search(line, match, kBareFrameLine)) {
      // The first backtrace only: a frame #0 after frames is the second "bt" (argv below).
      if (match[1].str() == "0" && !report.frames.empty()) backtrace_done = true;
      if (!backtrace_done) report.frames.push_back(frame_of(match, match.size() > 3));
    } else if (std::regex_search(line, match, kInstructionLine)) {
      if (report.pc.empty()) report.pc = match[1].str();
      if (report.instruction.empty()) report.instruction = match[2].str();
    }
    // The focus line may also carry other fields; take the first block/thread seen.
    if (report.block.empty() && std::regex_search(line, match, kFocusLine)) {
      report.block = match[1].str();
      report.thread = match[2].str();
    }
  }
  if (report.exception.empty() && report.frames.empty()) {
    // cuda-gdb 13.0 asserted on some hang dumps of the H200 ("internal-error: initialize:
    // Assertion `m_instance.m_num_devices > 0' failed.").
    const std::size_t internal = text.find("internal-error: ");
    if (internal != std::string_view::npos)
      return make_error("parse", "cuda-gdb failed on the dump: {}",
                        trim(text.substr(internal, text.find('\n', internal) - internal)));
    if (text.find("No CUDA kernels.") != std::string_view::npos)
      return make_error("parse", "the dump holds no CUDA kernel (cuda-gdb: \"No CUDA kernels.\")");
    return make_error("parse", "cuda-gdb output holds no CUDA exception and no frame");
  }
  return report;
}

std::string CudaGdbReport::render(std::string_view source, const std::string& source_name) const {
  std::string out = "CUDA exception: " + (exception.empty() ? "unknown" : exception);
  if (!block.empty()) out += fmt::format(" (block {}, thread {})", block, thread);
  if (!exception_file.empty()) out += fmt::format(" at {}:{}", exception_file, exception_line);
  out += "\n";
  for (const DebugFrame& frame : frames) {
    out += fmt::format("#{} {}{}", frame.level, frame.function, frame.launch);
    out += frame.file.empty() ? "\n" : fmt::format(" at {}:{}\n", frame.file, frame.line);
    if (frame.file == source_name) out += source_excerpt(source, frame.line);
  }
  // No frame in the kernel file (inlined away, or a core dump without line info): show the
  // exception's own location.
  bool shown = false;
  for (const DebugFrame& frame : frames) shown |= frame.file == source_name;
  if (!shown && exception_file == source_name) out += source_excerpt(source, exception_line);
  return out;
}

const DebugFrame* CudaGdbReport::innermost_in(const std::string& source_name) const {
  // gdb numbers frames innermost first.
  for (const DebugFrame& frame : frames)
    if (frame.file == source_name && frame.line > 0) return &frame;
  return nullptr;
}

const DebugFrame* CudaGdbReport::kernel_frame() const {
  for (const DebugFrame& frame : frames)
    if (!frame.launch.empty()) return &frame;
  return frames.empty() ? nullptr : &frames.back();
}

Json DebugFrame::to_json() const {
  Json j{
      {"level", level}, {"function", function}, {"launch", launch}, {"file", file}, {"line", line}};
  if (inlined_at > 0) j["inlined_at"] = inlined_at;
  return j;
}

Result<DebugFrame> DebugFrame::from_json(const Json& json) {
  DebugFrame frame;
  FieldReader r(json);
  r.required("level", frame.level).required("function", frame.function);
  r.optional("launch", frame.launch).optional("file", frame.file).optional("line", frame.line);
  r.optional("inlined_at", frame.inlined_at);
  PTXB_RETURN_IF_ERROR(r.status());
  return frame;
}

Json CudaGdbReport::to_json() const {
  Json frames_json = Json::array();
  for (const DebugFrame& frame : frames) frames_json.push_back(frame.to_json());
  return Json{{"exception", exception},
              {"pc", pc},
              {"exception_file", exception_file},
              {"exception_line", exception_line},
              {"block", block},
              {"thread", thread},
              {"instruction", instruction},
              {"frames", frames_json}};
}

Result<CudaGdbReport> CudaGdbReport::from_json(const Json& json) {
  CudaGdbReport report;
  FieldReader r(json);
  r.optional("exception", report.exception).optional("pc", report.pc);
  r.optional("exception_file", report.exception_file);
  r.optional("exception_line", report.exception_line);
  r.optional("block", report.block).optional("thread", report.thread);
  r.optional("instruction", report.instruction).required("frames", report.frames);
  PTXB_RETURN_IF_ERROR(r.status());
  return report;
}

std::vector<std::string> cuda_gdb_argv(const std::string& cuda_gdb_path,
                                       const std::string& core_dump_path) {
  return {cuda_gdb_path, "-batch", "-nx", "-ex", "set pagination off", "-ex", "set confirm off",
          "-ex", "target cudacore " + core_dump_path, "-ex", "info cuda kernels", "-ex", "bt",
          "-ex", "x/i $pc",
          // A user-triggered dump (a hang) may open without a focus: "bt" then has no device
          // stack. Focus the first thread of the first kernel and ask again; the parser keeps
          // the first backtrace it sees, so an exception's own focus wins. (A command that fails
          // in batch mode prints its error and the next one runs.)
          "-ex", "cuda kernel 0 block 0,0,0 thread 0,0,0", "-ex", "bt", "-ex", "x/i $pc"};
}

}  // namespace ptxb
