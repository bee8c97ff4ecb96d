// Is the call Nsight Compute profiled one of the timed calls (design.md §3.6)? The profiled
// runner is a second process; a candidate that can tell it apart (ncu's injection is visible in
// the process) could run other code there. So the profile only counts when its kernels are the
// timed calls' kernels — same names, same number, same launch shapes — and its GPU time is in a
// band around the timed median. Otherwise the evaluation is REWARD_HACK profile_mismatch.
#pragma once

#include <string>
#include <vector>

#include "analysis/ncu_launches.h"
#include "eval/eval_types.h"
#include "supervisor/profile_plan.h"

namespace ptxb {

// The accepted band for (profiled GPU time) / (timed median). The timed median is a CUPTI
// window (first kernel start to last end, copies and memsets of the call included), the
// profiled time the sum of gpu__time_duration over the call's kernels under ncu's kernel
// replay (caches flushed before each pass, kernels serialized, no overlap between them): the
// two agree within a few percent for a one-kernel call and the profiled sum is smaller when a
// call has gaps or copies. 0.6x leaves room for those; 1.67x (= 1/0.6) for replay overhead and
// clock ramps. A candidate that runs different code under the profiler lands far outside
// (measured on the H200: a wgmma path only under the profiler ran at 0.026x of the timed FFMA
// path).
inline constexpr double kProfileBandLow = 0.6;
inline constexpr double kProfileBandHigh = 1.67;

// Compares the profiled launches with the timed calls' and fills `record`'s time, ratio, band,
// matches and mismatch (the plan's fields are the caller's). The launches must be exactly
// plan.kernels_per_call, each with a name and shape the timed calls launched; when every timed
// call launched the same shapes (counts divisible by the sample count), the profiled call must
// launch each shape as often as one timed call did.
// `compare_shapes` is off for a library in the candidate slot (A/A, a test mode): on the H200 the
// grid ncu reported for cuBLASLt's persistent nvjet GEMM kernel, (2, 66, 1), was not among the
// shapes CUPTI recorded for the timed calls (cause not established); names, count and time
// still count there.
void compare_profiled_call(const std::vector<NcuLaunch>& profiled, const TimedKernels& timed,
                           const ProfilePlan& plan, double timed_median_ms,
                           ProfiledCallRecord& record, bool compare_shapes = true);

// A focused plan's call (profile_plan.h focus_plan; `timed` all the timed calls' kernels): the
// profiled kernels against their own mean CUPTI time per timed call, so that a target kernel
// that is a small part of its call is held to the band by itself. When that misses the band,
// the call rebuilt from the profiled kernels and the other kernels' timed time is compared with
// the timed median (`call_median_ms`), the whole-call test: ncu's replay of a microsecond
// kernel reads about twice its timed time (H200: 2.1 us against 1.0-1.3 us), which its call
// absorbs. So the focused check is never looser than the whole-call one. The record's scope
// says which held: "target_kernels" or "target_kernels_in_call" (then gpu_time_ms holds the
// other kernels' timed time too).
void compare_focused_call(const std::vector<NcuLaunch>& profiled, const TimedKernels& timed,
                          const ProfilePlan& plan, double call_median_ms,
                          ProfiledCallRecord& record);

// The record's plan fields (call number, calls, warm-up, launch skip, kernels).
ProfiledCallRecord profiled_call_record(const ProfilePlan& plan);

}  // namespace ptxb
