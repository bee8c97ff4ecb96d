// The launches Nsight Compute profiled, from its raw page: which kernels ran, with which launch
// shape, and for how long. The profile stage (supervisor/profile_check.h) compares them with the
// launches CUPTI recorded in the timed calls, so that the profiled call is known to be a timed
// one (design.md §3.6).
//
// Input: `ncu --import REPORT --page raw --csv --print-units base --print-kernel-base mangled`.
// The format, as ncu 2025.3 prints it: a header row naming the columns ("ID", "Kernel Name",
// "Block Size", "Grid Size", ..., one column per collected metric), a row of units (its "ID"
// cell empty), then one row per profiled launch:
//   "ID","Process ID",...,"Kernel Name",...,"Block Size","Grid Size",...,"gpu__time_duration.sum"
//   "","",...,"","",...,"","",...,"nsecond"
//   "0","4242",...,"_Z4gemmPK13__nv_bfloat16",...,"(384, 1, 1)","(132, 1, 1)",...,"1,234,567"
// Columns are found by name, so their order and any other column do not matter.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxb {

struct NcuLaunch {
  std::string name;  // mangled (--print-kernel-base mangled), as CUPTI names kernels
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
  double gpu_time_ns = 0;  // gpu__time_duration.sum in nanoseconds
  // Every other metric column ("unit__name.sum" style, launch__ attributes included) whose
  // value is a number, in the units the row of units names (--print-units base: plain counts
  // and bytes). The work-done check reads its counters here (analysis/ncu_work.h), the profiler
  // hints theirs (analysis/ncu_hints.h).
  std::map<std::string, double> metrics;
  // The source counters per instruction address, when the page was printed with
  // --print-metric-instances details: a cell reads "total (0x7f..00: n; 0x7f..10: n; ...)" and
  // lists only the instructions that were issued. Empty when the metric was not collected.
  std::map<std::uint64_t, std::int64_t> inst_executed_by_pc;
  std::map<std::uint64_t, std::int64_t> thread_true_by_pc;
  // ncu's own per-opcode sums of thread_inst_executed_true (kNcuThreadTruePerOpcode), computed
  // from the SASS the GPU ran: the check that the addresses were mapped onto that SASS.
  std::map<std::string, std::int64_t> thread_true_by_opcode;
};

// The per-opcode metric ncu derives from the source counters.
inline constexpr std::string_view kNcuThreadTruePerOpcode =
    "sass__thread_inst_executed_true_per_opcode";

// The metric whose sum over a call's launches is compared with the timed median.
inline constexpr std::string_view kNcuGpuTimeMetric = "gpu__time_duration.sum";

// Parses the raw page. Lines that are not quoted CSV (ncu messages, a program's output) are
// skipped. Fails, naming `origin`, without a header row, without one of the columns above, on a
// unit other than nanoseconds for the time, or on a malformed value: a launch list that cannot
// be read must never compare as "the same kernels".
Result<std::vector<NcuLaunch>> parse_ncu_launches_csv(std::string_view text,
                                                      const std::string& origin);

// "(384, 1, 1)" → {384, 1, 1}; also "384" (a 1-D shape) → {384, 1, 1}.
Result<std::array<std::uint32_t, 3>> parse_launch_dims(std::string_view text);

}  // namespace ptxb
