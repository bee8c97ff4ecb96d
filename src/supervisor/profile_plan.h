// Which call of the timed sequence Nsight Compute profiles, and the command line that makes it
// profile exactly that call (design.md §3.6).
//
// The dynamic target-instruction check runs ncu over a second candidate runner that the
// supervisor drives over IPC exactly like the timed one: hello, load, bind (the same buffers),
// the timing's warm-up calls, then calls that rotate over the sets with the L2 flushed before
// each. One call after the warm-up, chosen with the operating system's randomness (not the
// evaluation's seed, which is in the request), is profiled: ncu counts only the launches of the
// cubin's functions (--kernel-name) and skips launch_skip = chosen call × kernels per call of
// them (--launch-skip), then profiles kernels_per_call launches (--launch-count). The runner is
// never told which call it is; every call of the sequence looks the same to it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "protocol/protocol.h"

namespace ptxb {

// What the timed samples launched (side_sampler.cc adds every sample's reply).
struct TimedKernels {
  std::vector<std::uint32_t> per_call;  // kernel_count of each timed sample, in order
  std::vector<KernelLaunch> launches;   // distinct shapes over all samples, counts summed
  // Each sample's launches per kernel name (restricted_to counts a subset per call from it).
  std::vector<std::map<std::string, std::uint32_t>> per_call_by_name;

  void add(const CallReply& reply);
  // The kernel count every timed sample had; nullopt without samples or when it varied (the
  // launch arithmetic needs one count per call).
  std::optional<std::uint32_t> kernels_per_call() const;
  // The same samples seen through the launches of `names` only (per_call counts those).
  TimedKernels restricted_to(const std::vector<std::string>& names) const;
  // Mean over the samples of the CUPTI kernel time per call (sum of the launches' device_ns);
  // 0 without samples or when a shape has no recorded time.
  double mean_kernel_ms() const;
};

// How many calls follow the warm-up in the profiled runner, one of which is profiled. Five
// keeps the profiled run short (each call outside the chosen one runs at full speed, the
// chosen one is replayed once per metric pass) while the chosen call is neither the first nor
// the last in most runs.
inline constexpr int kProfileCandidateCalls = 5;

struct ProfilePlan {
  int warmup_calls = 0;  // the timing's warm-up: never profiled
  int calls_after_warmup = 0;
  int chosen = 0;  // 0-based among the calls after the warm-up
  std::uint32_t kernels_per_call = 0;
  std::uint64_t launch_skip = 0;  // cubin-function launches before the profiled call's first
  // The source page's per-instruction counters, for the target-instruction verdict: only when
  // the static check found a target family (they patch every SASS instruction and cost replay
  // passes); the launch list, the kernel time and the work counters are always collected.
  bool source_counters = true;
  // The source counters are read per instruction address from the raw page (printed with
  // --print-metric-instances details) and mapped onto the cubin's SASS listing
  // (analysis/ncu_pc_source.h) instead of importing the source page: one ncu import, not two.
  bool source_from_raw = false;
  // The cubin functions ncu profiles when only some of the call's kernels are (focus_plan);
  // empty: every cubin function.
  std::vector<std::string> functions;
  // The profiler hints' metrics (analysis/ncu_hints.h), when the evaluation asked for them.
  bool hint_metrics = false;

  int total_calls() const { return warmup_calls + calls_after_warmup; }
  // 0-based index of the profiled call in the whole sequence.
  int profiled_call() const { return warmup_calls + chosen; }
};

// The plan for `random` (any 64-bit value; a draw from the evaluation's secret in real runs). Fails
// when the timed calls give no single kernel count per call (none, zero, or varying).
Result<ProfilePlan> plan_profile(const TimedKernels& timed, int warmup_calls,
                                 int calls_after_warmup, std::uint64_t random);

// The plan narrowed to the call's launches of `functions` (the kernels whose SASS holds a target
// family): the other kernels are neither replayed nor imported, which saves ncu's passes per
// kernel. nullopt when that is not possible or saves nothing: the timed calls launched no
// fixed number of them per call, none, or only them, or a shape lacks its CUPTI time.
std::optional<ProfilePlan> focus_plan(const ProfilePlan& plan, const TimedKernels& timed,
                                      const std::vector<std::string>& functions);

// ^(name1|name2)$ over the mangled names, each regex-escaped: ncu's --kernel-name regex that
// matches exactly the cubin's functions.
std::string kernel_name_regex(const std::vector<std::string>& mangled_names);

// ncu's profiling options for `plan`: clocks left alone (the timed calls run at the clocks the
// GPU picks, too), mangled names (as CUPTI reports them), the launch filter, and the metrics:
// the source page's inst_executed and thread_inst_executed_true (plan.source_counters),
// gpu__time_duration, and the work-done counters (analysis/ncu_work.h).
std::vector<std::string> ncu_call_options(const ProfilePlan& plan,
                                          const std::vector<std::string>& cubin_functions);

// Markers between the parts of the profiled run's output (profile_output_parts).
inline constexpr std::string_view kMarkProfileExit = "@@ptxb-ncu-profile-exit ";
inline constexpr std::string_view kMarkSource = "@@ptxb-ncu-source";
inline constexpr std::string_view kMarkLaunches = "@@ptxb-ncu-launches";
inline constexpr std::string_view kMarkPhases = "@@ptxb-ncu-phases-ms ";
inline constexpr std::string_view kMarkEnd = "@@ptxb-ncu-end";

// The tool command line the runner is started under (between the sandbox launcher and the
// runner): a /bin/sh program that runs ncu over "$@" (the runner) into a report in the
// scratch directory, then prints the report's source page and raw page between the markers.
// ncu prints a report only after its target exits, and the two pages need two imports.
std::vector<std::string> ncu_call_wrapper(const std::string& ncu_path, const ProfilePlan& plan,
                                          const std::vector<std::string>& cubin_functions);

// The profiled run's output split at the markers. The runner writes to the same stream before
// the markers (a candidate could print marker lines there), so the last occurrence of each
// counts: after ncu's profiling run returns, only the trusted imports write.
struct ProfileOutputParts {
  std::optional<int> profile_exit;  // ncu's exit status for the profiling run
  std::string source;               // the source page CSV
  std::string launches;             // the raw page CSV
  bool complete = false;            // the end marker was seen
  // The wrapper's own clock (informational: the profiled run, each import), "wrapper_<phase>".
  std::map<std::string, double> phases_ms;
};
ProfileOutputParts profile_output_parts(std::string_view output);

// One argument quoted for /bin/sh ('...' with ' written as '\'').
std::string shell_quote(std::string_view text);

}  // namespace ptxb
