#include "analysis/debug_report.h"

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "analysis/source_context.h"
#include "core/json_fields.h"

namespace ptxb {
namespace {

// memcheck's "Access to 0x7f45e27c0000 is out of bounds" / "... is misaligned".
const std::regex kAccessAddress(R"(Access to (0x[0-9a-fA-F]+))");

int rank_of(const SanitizerFinding& finding) {
  if (finding.api_error) return 3;
  if (finding.line > 0) return 0;
  return finding.kernel.empty() ? 2 : 1;
}

// Excerpts are the costly part of the text: each line is shown once, in the order met.
struct ExcerptBudget {
  std::string_view source;
  const std::string& source_name;
  int left;
  std::set<int> shown;

  std::string take(const std::string& file, int line) {
    if (file != source_name || line <= 0 || left <= 0 || shown.count(line)) return "";
    std::string excerpt = source_excerpt(source, line);
    if (excerpt.empty()) return "";
    shown.insert(line);
    --left;
    return excerpt;
  }
};

std::string fault_text(const DebugFault& fault) {
  std::string out = fault.kind;
  if (!fault.file.empty()) out = fmt::format("{}:{}: {}", fault.file, fault.line, out);
  if (!fault.kernel.empty()) out += " in " + fault.kernel.substr(0, fault.kernel.find('('));
  if (!fault.block.empty()) out += fmt::format(" (block {}, thread {})", fault.block, fault.thread);
  if (!fault.address.empty()) out += ", address " + fault.address;
  return out;
}

void append_cuda_gdb(std::string& out, const CoreDumpRecord& dump, ExcerptBudget& excerpts) {
  const CudaGdbReport& gdb = *dump.cuda_gdb;
  out +=
      fmt::format("cuda-gdb (core dump on {}): {}", dump.trigger,
                  gdb.exception.empty() ? "no exception (stopped where it hung)" : gdb.exception);
  if (!gdb.block.empty()) out += fmt::format(", block {}, thread {}", gdb.block, gdb.thread);
  if (!gdb.pc.empty()) out += ", PC " + gdb.pc;
  if (!gdb.exception_file.empty())
    out += fmt::format(" ({}:{})", gdb.exception_file, gdb.exception_line);
  out += "\n";
  if (!gdb.instruction.empty()) out += "  instruction: " + gdb.instruction + "\n";
  // Frames beyond the first few are the runner's; they only add length.
  constexpr std::size_t kMaxFrames = 4;
  for (std::size_t i = 0; i < gdb.frames.size() && i < kMaxFrames; ++i) {
    const DebugFrame& frame = gdb.frames[i];
    out += fmt::format("  #{} {}{}", frame.level, frame.function, frame.launch);
    if (frame.file.empty())
      out += "\n";
    else if (frame.inlined_at > 0)
      out += fmt::format(" at {}:{} (inlined, called at line {})\n", frame.file, frame.line,
                         frame.inlined_at);
    else
      out += fmt::format(" at {}:{}\n", frame.file, frame.line);
    out += excerpts.take(frame.file, frame.line);
  }
  if (gdb.frames.empty()) out += excerpts.take(gdb.exception_file, gdb.exception_line);
}

}  // namespace

std::optional<DebugFault> most_precise_fault(const SanitizerReport& report) {
  const SanitizerFinding* best = nullptr;
  for (const auto& finding : report.findings)
    if (!best || rank_of(finding) < rank_of(*best)) best = &finding;
  if (!best) return std::nullopt;
  DebugFault fault{best->kind,   best->kernel, best->file,   best->line,     best->block,
                   best->thread, "",           best->detail, best->api_error};
  std::smatch match;
  if (std::regex_search(best->detail, match, kAccessAddress)) fault.address = match[1].str();
  return fault;
}

std::optional<DebugLocation> choose_location(const DebugRecord& record,
                                             const std::string& source_name) {
  if (record.fault && record.fault->file == source_name && record.fault->line > 0)
    return DebugLocation{source_name, record.fault->line, "sanitizer"};
  if (record.core_dump && record.core_dump->cuda_gdb) {
    const CudaGdbReport& gdb = *record.core_dump->cuda_gdb;
    if (const DebugFrame* frame = gdb.innermost_in(source_name))
      return DebugLocation{source_name, frame->line, "cuda-gdb"};
    if (gdb.exception_file == source_name && gdb.exception_line > 0)
      return DebugLocation{source_name, gdb.exception_line, "cuda-gdb"};
  }
  if (record.launch) return DebugLocation{source_name, record.launch->line, "launch"};
  return std::nullopt;
}

std::string render_debug_summary(const DebugRecord& record, std::string_view source,
                                 const std::string& source_name, int max_excerpts) {
  ExcerptBudget excerpts{source, source_name, max_excerpts, {}};
  std::string out;
  if (record.points_at)
    out += fmt::format("points at {}:{} (from {})\n", record.points_at->file,
                       record.points_at->line, record.points_at->source);
  if (record.fault) {
    out += "compute-sanitizer memcheck: " + fault_text(*record.fault) + "\n";
    out += excerpts.take(record.fault->file, record.fault->line);
  }
  if (record.core_dump && record.core_dump->cuda_gdb)
    append_cuda_gdb(out, *record.core_dump, excerpts);
  if (record.launch) {
    const std::string of = record.launch->kernel.empty() ? "" : " of " + record.launch->kernel;
    out += record.launch->hang
               ? fmt::format(
                     "the call did not finish and no tool saw inside the kernel; the "
                     "launch{} is at {}:{}\n",
                     of, source_name, record.launch->line)
               : fmt::format("the error surfaced at a synchronization; the launch{} is at {}:{}\n",
                             of, source_name, record.launch->line);
    out += excerpts.take(source_name, record.launch->line);
  }
  for (const std::string& note : record.notes) out += "note: " + note + "\n";
  return out;
}

Json DebugFault::to_json() const {
  return Json{{"kind", kind},       {"kernel", kernel}, {"file", file},
              {"line", line},       {"block", block},   {"thread", thread},
              {"address", address}, {"detail", detail}, {"api_error", api_error}};
}

Result<DebugFault> DebugFault::from_json(const Json& json) {
  DebugFault f;
  FieldReader r(json);
  r.required("kind", f.kind).optional("kernel", f.kernel).optional("file", f.file);
  r.optional("line", f.line).optional("block", f.block).optional("thread", f.thread);
  r.optional("address", f.address).optional("detail", f.detail);
  r.optional("api_error", f.api_error);
  PTXB_RETURN_IF_ERROR(r.status());
  return f;
}

Json CoreDumpRecord::to_json() const {
  return Json{{"trigger", trigger},
              {"bytes", bytes},
              {"cuda_gdb", cuda_gdb ? cuda_gdb->to_json() : Json(nullptr)}};
}

Result<CoreDumpRecord> CoreDumpRecord::from_json(const Json& json) {
  CoreDumpRecord d;
  FieldReader r(json);
  r.required("trigger", d.trigger).optional("bytes", d.bytes).optional("cuda_gdb", d.cuda_gdb);
  PTXB_RETURN_IF_ERROR(r.status());
  return d;
}

Json LaunchSite::to_json() const {
  Json j{{"kernel", kernel}, {"line", line}};
  if (hang) j["hang"] = true;  // absent in records made before it existed
  return j;
}

Result<LaunchSite> LaunchSite::from_json(const Json& json) {
  LaunchSite s;
  FieldReader r(json);
  r.optional("kernel", s.kernel).required("line", s.line).optional("hang", s.hang);
  PTXB_RETURN_IF_ERROR(r.status());
  return s;
}

Json DebugLocation::to_json() const {
  return Json{{"file", file}, {"line", line}, {"source", source}};
}

Result<DebugLocation> DebugLocation::from_json(const Json& json) {
  DebugLocation l;
  FieldReader r(json);
  r.required("file", l.file).required("line", l.line).required("source", l.source);
  PTXB_RETURN_IF_ERROR(r.status());
  return l;
}

Json DebugRecord::to_json() const {
  auto or_null = [](const auto& part) { return part ? part->to_json() : Json(nullptr); };
  return Json{{"fault", or_null(fault)},
              {"core_dump", or_null(core_dump)},
              {"launch", or_null(launch)},
              {"points_at", or_null(points_at)},
              {"notes", notes},
              {"sanitizer_output", sanitizer_output},
              {"cuda_gdb_output", cuda_gdb_output},
              {"elapsed_ms", elapsed_ms},
              {"summary", summary}};
}

Result<DebugRecord> DebugRecord::from_json(const Json& json) {
  DebugRecord d;
  FieldReader r(json);
  r.optional("fault", d.fault).optional("core_dump", d.core_dump).optional("launch", d.launch);
  r.optional("points_at", d.points_at).optional("notes", d.notes);
  r.optional("sanitizer_output", d.sanitizer_output).optional("cuda_gdb_output", d.cuda_gdb_output);
  r.optional("elapsed_ms", d.elapsed_ms).required("summary", d.summary);
  PTXB_RETURN_IF_ERROR(r.status());
  return d;
}

}  // namespace ptxb
