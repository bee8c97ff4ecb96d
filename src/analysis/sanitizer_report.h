// compute-sanitizer reports (memcheck, racecheck, synccheck, initcheck) turned into findings the
// evaluator records and the model reads back.
//
// compute-sanitizer prefixes each of its own lines with "=========" (the profiled program's
// output is interleaved without the prefix). A finding is one top-level message followed by
// indented detail lines, e.g. (golden sample: testdata/eval/sanitizer/memcheck_oob.txt)
//   ========= Invalid __global__ write of size 2 bytes
//   =========     at <kernel>+0x1930 in kernel.cu:89
//   =========     by thread (0,0,0) in block (0,0,0)
//   =========     Access to 0x7f45e27c0000 is out of bounds
//   ========= Program hit cudaErrorLaunchFailure (error 719) due to "..." on CUDA API call to X.
//   ========= Target application returned an error
//   ========= ERROR SUMMARY: 6 errors
// A device-side fault makes every later CUDA call fail, so one kernel finding is usually
// followed by several "Program hit" API errors: those are consequences, kept but ranked last.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct SanitizerFinding {
  std::string kind;    // "Invalid __global__ write of size 2 bytes", or the API error text
  std::string kernel;  // "<unnamed>::gemm_tile_kernel(...)", without the "+0x1930" offset
  std::string file;    // "kernel.cu" (present when the binary has line info)
  int line = 0;
  std::string thread;      // "(0,0,0)"
  std::string block;       // "(0,0,0)"
  std::string detail;      // the remaining indented lines joined with "; "
  bool api_error = false;  // "Program hit <error> ... on CUDA API call to <function>"
};

struct SanitizerReport {
  std::string tool;                        // memcheck | racecheck | synccheck | initcheck
  int error_count = -1;                    // from "ERROR SUMMARY: N errors"; -1 if absent
  std::vector<SanitizerFinding> findings;  // in the order the tool printed them
  bool target_failed = false;              // "Target application returned an error"

  Json to_json() const;
  static Result<SanitizerReport> from_json(const Json& json);
  // Feedback for the model: a first line with the tool and the error count, then at most
  // `max_findings` lines like
  //   kernel.cu:89: Invalid __global__ write of size 2 bytes (thread (0,0,0) block (0,0,0)):
  //   out of bounds, 3,283,877,377 bytes after the nearest allocation of size 512 bytes
  // findings located in a kernel first, CUDA API errors last; identical lines are printed once
  // with a repeat count; device addresses are left out (they differ on every run).
  std::string summary(std::size_t max_findings) const;
};

// Whether the output must be whole. kMayBeCut: the output of a sanitizer stopped by its time
// limit; the findings printed before the stop are returned, with error_count -1 (unknown). Only
// for locating a failure already known; a verdict never reads a cut output as clean.
enum class SanitizerEnd { kRequireSummary, kMayBeCut };

// Parses compute-sanitizer's text output for `tool`. Fails when the "COMPUTE-SANITIZER" banner is
// missing, or (kRequireSummary) the summary line ("ERROR SUMMARY: N errors", or racecheck's
// "RACECHECK SUMMARY: ... (N errors, M warnings)"): a sanitizer that crashed or was killed must
// not read as clean.
Result<SanitizerReport> parse_sanitizer_output(std::string_view text, std::string tool,
                                               SanitizerEnd end = SanitizerEnd::kRequireSummary);

// {compute-sanitizer, --tool, <tool>, --error-exitcode, 9, --show-backtrace, device, program...}.
// --error-exitcode 9: with errors found the sanitizer exits 9, a code ptxbench-runner never uses
// itself (its codes are 0-4, runner/runner_service.h), so "the sanitizer found errors" is told
// apart from "the program failed" without parsing. --show-backtrace device: device frames locate
// a fault inside inlined helpers; host frames would only show the runner's own call stack.
std::vector<std::string> sanitizer_argv(const std::string& sanitizer_path, const std::string& tool,
                                        const std::vector<std::string>& program_argv);

}  // namespace ptxb
