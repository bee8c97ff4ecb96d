// The debug stage's report on a failing evaluation (RUNTIME_ERROR, MEMORY_ERROR, TIMEOUT;
// docs/eval.md "Debug stage"): what compute-sanitizer and cuda-gdb over a CUDA core dump said,
// the launch behind an error that surfaced at a synchronization, and the one kernel.cu line the
// report points at. Plain data with JSON (EvalResult::debug) plus the compact text the model
// reads (the feedback's "## Debug" section), rendered once, where the source is at hand.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/cuda_gdb_report.h"
#include "analysis/sanitizer_report.h"
#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// compute-sanitizer's most precise finding: one located in a kernel before a kernel finding
// without a line, before a CUDA API error (a consequence of the fault).
struct DebugFault {
  std::string kind;    // "Invalid __global__ write of size 4 bytes"
  std::string kernel;  // "<unnamed>::oob_kernel(float *, long)"
  std::string file;    // "kernel.cu"
  int line = 0;
  std::string block, thread;  // "(3,0,0)"
  std::string address;        // "0x7f45e27c0000" from "Access to 0x... is ...", else ""
  std::string detail;         // the finding's other lines
  bool api_error = false;

  Json to_json() const;
  static Result<DebugFault> from_json(const Json& json);
};

// nullopt when the report holds no finding.
std::optional<DebugFault> most_precise_fault(const SanitizerReport& report);

// The core dump and what cuda-gdb read from it.
struct CoreDumpRecord {
  std::string trigger;  // "exception" (the driver wrote it on a GPU exception) | "hang" (pipe)
  std::int64_t bytes = 0;
  std::optional<CudaGdbReport> cuda_gdb;  // absent when cuda-gdb failed (see DebugRecord::notes)

  Json to_json() const;
  static Result<CoreDumpRecord> from_json(const Json& json);
};

// The launch behind an error reported at a synchronization (analysis/source_context.h).
struct LaunchSite {
  std::string kernel;  // the kernel whose launch was looked for; "" = the nearest launch
  int line = 0;
  // A TIMEOUT that no tool saw inside of: the launch is where the hung kernel started, not
  // where an error surfaced.
  bool hang = false;

  Json to_json() const;
  static Result<LaunchSite> from_json(const Json& json);
};

// The one line the report points at, and which tool located it.
struct DebugLocation {
  std::string file;
  int line = 0;
  std::string source;  // "sanitizer" | "cuda-gdb" | "launch"

  Json to_json() const;
  static Result<DebugLocation> from_json(const Json& json);
};

struct DebugRecord {
  std::optional<DebugFault> fault;
  std::optional<CoreDumpRecord> core_dump;
  std::optional<LaunchSite> launch;
  std::optional<DebugLocation> points_at;
  // Why a part did not run or gave nothing ("cuda-gdb: not found", "no core dump: the
  // self-contained call exited 0"), in the order they happened.
  std::vector<std::string> notes;
  // The tools' raw output (capped tails): goldens for the parsers, and for a reader in doubt.
  std::string sanitizer_output, cuda_gdb_output;
  double elapsed_ms = 0;
  std::string summary;  // the feedback's compact text (render_debug_summary)

  Json to_json() const;
  static Result<DebugRecord> from_json(const Json& json);
};

// Picks the line the report points at: the sanitizer's kernel.cu line, else cuda-gdb's innermost
// kernel.cu frame (or the exception's own line), else the inferred launch.
std::optional<DebugLocation> choose_location(const DebugRecord& record,
                                             const std::string& source_name);

// The compact text for the model: the fault, cuda-gdb's exception and frames, the launch, each
// location once with ±4 lines of `source`, and the notes. At most `max_excerpts` excerpts.
std::string render_debug_summary(const DebugRecord& record, std::string_view source,
                                 const std::string& source_name, int max_excerpts = 3);

}  // namespace ptxb
