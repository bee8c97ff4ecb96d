// Dynamic target-instruction check (design.md §3.6): did the kernel's GMMA / TMA / UTC / LDTM /
// STTM instructions actually run with their guard predicate true?
//
// Input: what `ncu --page source --csv --print-source sass --metrics
// inst_executed,thread_inst_executed_true <program>` prints (ncu_source_argv builds that line).
// The format, as ncu 2025.3 prints it (golden samples: testdata/eval/ncu/):
//   ==PROF== Connected to process ...            ncu's own messages, not CSV
//   "Kernel Name","<demangled name>",             starts a kernel section
//   "Address","Source","inst_executed","thread_inst_executed_true"
//   "0x7ff6e97a2430","      HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0","4","128"
// inst_executed counts warp-level issues; thread_inst_executed_true counts threads whose guard
// predicate was true, so a line issued with its predicate false shows (N, 0).
//
// A family is executed iff one of its lines has thread_inst_executed_true > 0. The verdict is
// never positive on doubt: a profile without metric values is "unknown".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// Verdict names as they appear in JSON (design.md §3.6; "not_run" and "static_absent" are decided
// before a profile exists, by the caller).
inline constexpr std::string_view kDynamicPresent = "dynamic_present";
inline constexpr std::string_view kDynamicNotExecuted = "dynamic_not_executed";
inline constexpr std::string_view kDynamicUnknown = "unknown";

struct NcuSourceLine {
  std::string address;      // "0x7ff6e97a2430" as ncu prints it
  std::string opcode;       // full mnemonic, "HGMMA.64x8x16.F32.BF16"
  std::string base_opcode;  // before the first '.', "HGMMA"
  std::string text;         // the SASS text, guard predicate included, trimmed
  // Absent when the row has no metric columns (a profile whose program failed before ncu could
  // collect them prints "Address","Source" only).
  std::optional<std::int64_t> inst_executed;
  std::optional<std::int64_t> thread_inst_executed_true;
  bool predicated = false;   // has a guard predicate (@P0, @!UP1; @PT is always true: not counted)
  bool placeholder = false;  // a *GMMA that writes RZ from descriptor URZ; see is_gmma_placeholder
};

struct NcuKernelSource {
  std::string name;  // demangled, as ncu prints it
  std::vector<NcuSourceLine> lines;
};

// Parses ncu's source-page CSV. Sections of the same kernel are merged into one NcuKernelSource:
// ncu 2025.3 prints every section twice for a single launch, so for one kernel name and one
// address the metrics are the maximum over sections, never the sum (several launches of one
// kernel therefore read as the busiest launch, which is all a >0 verdict needs).
// Lines starting with "==" (ncu messages) and lines that are not quoted CSV (the profiled
// program's own stdout) are skipped. Fails, naming `origin` and the line number, on malformed
// CSV, on a non-numeric count, and on text without any kernel section: an empty or foreign file
// must never read as "not executed".
Result<std::vector<NcuKernelSource>> parse_ncu_source_csv(std::string_view text,
                                                          const std::string& origin);

// Fills `line`'s opcode, base_opcode, text, predicated and placeholder from one instruction's
// SASS text as ncu's Source field or cuobjdump prints it ("@!P0  BRA 0x7f..",
// "HGMMA.64x8x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT, gsb0").
Status parse_sass_text(std::string_view source, NcuSourceLine& line);

// Per-family sums over every profiled kernel (lines merged as above).
struct FamilyDynamicCounts {
  int static_lines = 0;       // lines of the family, placeholders excluded
  int placeholder_lines = 0;  // placeholders: never counted as executed
  int executed_lines = 0;     // lines with thread_inst_executed_true > 0
  int unmeasured_lines = 0;   // lines without metric values
  std::int64_t inst_executed = 0;
  std::int64_t thread_inst_executed_true = 0;
};

struct DynamicCheck {
  std::string verdict;  // kDynamicPresent | kDynamicNotExecuted | kDynamicUnknown
  std::string reason;   // one sentence for the report and the model
  std::map<std::string, FamilyDynamicCounts> families;  // every family seen, qualifying or not
  std::vector<std::string> executed_families;           // qualifying families that executed

  Json to_json() const;
  static Result<DynamicCheck> from_json(const Json& json);
};

// The verdict for `arch` ("sm_90a"): dynamic_present iff a qualifying family (see
// qualifying_families) has a non-placeholder line with thread_inst_executed_true > 0;
// dynamic_not_executed when its lines were all measured and none ran with a true predicate, or
// when the profiled kernels hold no qualifying line at all; unknown when the profile carries no
// metric values, when unexecuted qualifying lines lack them, or for an unknown architecture.
DynamicCheck decide_dynamic(const std::vector<NcuKernelSource>& kernels, std::string_view arch);

// Splits one CSV record as ncu prints it: every field quoted, a quote inside one doubled (RFC
// 4180); an unquoted field (the empty one after the trailing comma of a "Kernel Name" row) runs
// to the next comma. Returns an empty string on success, else what is wrong.
std::string split_csv_record(std::string_view line, std::vector<std::string>& fields);

// The verdict when the profiler itself failed (ncu missing, timed out, unparsable output).
DynamicCheck dynamic_unknown(std::string reason);

// {ncu, --clock-control none, --profile-from-start off, --page source, --csv, --print-source sass,
//  --metrics inst_executed,thread_inst_executed_true, program...}. The program brackets the
// candidate's call with cudaProfilerStart/Stop, so only that call is profiled; the clocks are
// left alone because the counts, not the timings, are wanted.
std::vector<std::string> ncu_source_argv(const std::string& ncu_path,
                                         const std::vector<std::string>& program_argv);

}  // namespace ptxb
