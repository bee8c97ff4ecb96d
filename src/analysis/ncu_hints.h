// Profiler hints in words: a few Nsight Compute metrics of a PASSED kernel turned into 3–5
// concrete sentences with the numbers ("67 % of warp stall cycles are MIO throttle"), for the
// opt-in feedback option (eval/feedback.h FeedbackOptions::profiler_hints; off by default and in
// the paper protocol).
//
// Input: the launches of the profiled call's raw page as analysis/ncu_launches.h parses it (the
// same parse the target-instruction and work-done checks use), with the metrics of
// kProfilerHintMetrics among their columns. A metric the pass did not collect is simply absent
// and its sentence is left out. Metric names are Nsight Compute's (the sections SpeedOfLight,
// WarpStateStats, MemoryWorkloadAnalysis, Occupancy and LaunchStats collect the same ones).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/ncu_launches.h"
#include "core/result.h"

namespace ptxb {

// What the profiler pass must add to its --metrics list for every sentence below.
inline const std::vector<std::string_view> kProfilerHintMetrics = {
    "gpu__time_duration.sum",
    // Speed of light (section SpeedOfLight).
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    // Memory workload (MemoryWorkloadAnalysis).
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sector_hit_rate.pct",
    // Shared-memory bank conflicts: extra wavefronts over all shared wavefronts.
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    // Occupancy and its limiters (Occupancy, LaunchStats).
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__registers_per_thread",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    // Warp stall reasons (WarpStateStats): every
    // smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio; the group name below
    // collects them all (ncu --metrics accepts the regex form).
    "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio",
};

// One profiled launch: its kernel and every numeric metric column, in base units.
struct NcuLaunchMetrics {
  std::string kernel;
  std::map<std::string, double> values;  // metric name → value (bytes, %, ratio, count)
};

// The launches as the hints read them: every metric of the raw page's parse
// (analysis/ncu_launches.h; "n/a" cells are left out there) with gpu__time_duration.sum.
std::vector<NcuLaunchMetrics> hint_metrics_of(const std::vector<NcuLaunch>& launches);

// What ptxas said about one kernel (sass/ptxas_report.h), the hints that need no profiler: its
// spills, and its advisories that cost speed (slows_the_kernel: serialised wgmma, an injected
// warpgroup.wait, ...) as "C7517: <ptxas's message>".
struct KernelSpills {
  std::string kernel;
  long long store_bytes = 0;
  long long load_bytes = 0;
  std::vector<std::string> advisories;
};

// At most `max_sentences` sentences, most useful first: spills, ptxas advisories, the
// speed-of-light verdict (memory-, compute- or latency-bound), the dominant warp stall reasons,
// shared-memory bank conflicts, occupancy and its limiter, DRAM traffic. About the launch with the
// longest GPU time (named when the call launched several kernels). Empty when nothing was measured.
std::vector<std::string> profiler_hint_sentences(const std::vector<NcuLaunchMetrics>& launches,
                                                 const std::vector<KernelSpills>& spills,
                                                 std::size_t max_sentences = 5);

}  // namespace ptxb
