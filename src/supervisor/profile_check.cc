#include "supervisor/profile_check.h"

#include <algorithm>

#include "core/strings.h"

namespace ptxb {
namespace {

std::string shape_text(const KernelLaunch& launch) {
  return fmt::format("{} grid ({}, {}, {}) block ({}, {}, {})", launch.name, launch.grid[0],
                     launch.grid[1], launch.grid[2], launch.block[0], launch.block[1],
                     launch.block[2]);
}

// The profiled call's launches as shapes with counts.
std::vector<KernelLaunch> profiled_shapes(const std::vector<NcuLaunch>& profiled) {
  std::vector<KernelLaunch> shapes;
  for (const NcuLaunch& launch : profiled) {
    ActivityRecord record;
    record.name = launch.name;
    record.grid = launch.grid;
    record.block = launch.block;
    note_kernel_launch(shapes, record);
  }
  return shapes;
}

// Why the profiled shapes are not the timed calls' ("" when they are).
std::string shape_mismatch(const std::vector<KernelLaunch>& shapes, const TimedKernels& timed) {
  const std::size_t samples = timed.per_call.size();
  const bool uniform =
      samples > 0 && std::all_of(timed.launches.begin(), timed.launches.end(),
                                 [&](const KernelLaunch& l) { return l.count % samples == 0; });
  for (const KernelLaunch& shape : shapes) {
    auto same = std::find_if(timed.launches.begin(), timed.launches.end(),
                             [&](const KernelLaunch& l) { return l.same_shape(shape); });
    if (same == timed.launches.end())
      return "the profiled call launched " + shape_text(shape) + ", which no timed call launched";
    if (uniform && shape.count != same->count / samples)
      return fmt::format("the profiled call launched {} {} times, each timed call {} times",
                         shape_text(shape), shape.count, same->count / samples);
  }
  if (uniform)
    for (const KernelLaunch& timed_shape : timed.launches) {
      const bool seen = std::any_of(shapes.begin(), shapes.end(), [&](const KernelLaunch& s) {
        return s.same_shape(timed_shape);
      });
      if (!seen) return "the profiled call never launched " + shape_text(timed_shape);
    }
  return "";
}

}  // namespace

ProfiledCallRecord profiled_call_record(const ProfilePlan& plan) {
  ProfiledCallRecord record;
  record.call = plan.profiled_call() + 1;
  record.calls = plan.total_calls();
  record.warmup_calls = plan.warmup_calls;
  record.launch_skip = static_cast<std::int64_t>(plan.launch_skip);
  record.kernels = static_cast<int>(plan.kernels_per_call);
  record.scope = plan.functions.empty() ? "call" : "target_kernels";
  return record;
}

namespace {

bool in_band(double ratio) {
  return ratio >= kProfileBandLow && ratio <= kProfileBandHigh;
}

// Why the profiled launches are not one timed call's ("" when they are): their count, then
// their names and shapes.
std::string launch_mismatch(const std::vector<NcuLaunch>& profiled, const TimedKernels& timed,
                            const ProfilePlan& plan, bool compare_shapes) {
  if (profiled.size() != plan.kernels_per_call)
    return fmt::format(
        "ncu profiled {} kernel launches in the chosen call, each timed call launched {}",
        profiled.size(), plan.kernels_per_call);
  return compare_shapes ? shape_mismatch(profiled_shapes(profiled), timed) : "";
}

}  // namespace

void compare_profiled_call(const std::vector<NcuLaunch>& profiled, const TimedKernels& timed,
                           const ProfilePlan& plan, double timed_median_ms,
                           ProfiledCallRecord& record, bool compare_shapes) {
  double gpu_time_ns = 0;
  for (const NcuLaunch& launch : profiled) gpu_time_ns += launch.gpu_time_ns;
  record.gpu_time_ms = gpu_time_ns * 1e-6;
  record.timed_median_ms = timed_median_ms;
  record.ratio = timed_median_ms > 0 ? record.gpu_time_ms / timed_median_ms : 0;
  record.band_low = kProfileBandLow;
  record.band_high = kProfileBandHigh;
  record.matches = false;
  record.mismatch = launch_mismatch(profiled, timed, plan, compare_shapes);
  if (!record.mismatch.empty()) return;
  if (!in_band(record.ratio)) {
    record.mismatch = fmt::format(
        "the profiled {}'s GPU time {:.4f} ms is {:.3f}x the timed {} {:.4f} ms, outside "
        "[{}, {}]: the profiled code is not the timed code",
        record.scope == "call" ? "call" : "kernels", record.gpu_time_ms, record.ratio,
        record.scope == "call" ? "median" : "mean of those kernels", timed_median_ms,
        kProfileBandLow, kProfileBandHigh);
    return;
  }
  record.matches = true;
}

void compare_focused_call(const std::vector<NcuLaunch>& profiled, const TimedKernels& timed,
                          const ProfilePlan& plan, double call_median_ms,
                          ProfiledCallRecord& record) {
  const TimedKernels subset = timed.restricted_to(plan.functions);
  compare_profiled_call(profiled, subset, plan, subset.mean_kernel_ms(), record);
  if (record.matches || !launch_mismatch(profiled, subset, plan, true).empty()) return;
  const double others_ms = std::max(0.0, timed.mean_kernel_ms() - subset.mean_kernel_ms());
  const double call_ratio =
      call_median_ms > 0 ? (record.gpu_time_ms + others_ms) / call_median_ms : 0;
  if (!in_band(call_ratio)) {
    record.mismatch += fmt::format(
        "; with the call's other kernels at their timed {:.4f} ms the call reads {:.3f}x its "
        "timed median, outside too",
        others_ms, call_ratio);
    return;
  }
  record.scope = "target_kernels_in_call";
  record.gpu_time_ms += others_ms;
  record.timed_median_ms = call_median_ms;
  record.ratio = call_ratio;
  record.mismatch.clear();
  record.matches = true;
}

}  // namespace ptxb
