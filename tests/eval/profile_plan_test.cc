// The profile stage's arithmetic and comparison (supervisor/profile_plan.h, profile_check.h):
// which call ncu profiles, the options that select it, and whether what it profiled is what
// was timed.
#include "supervisor/profile_plan.h"

#include <gtest/gtest.h>

#include "analysis/ncu_work.h"

#include "supervisor/profile_check.h"

namespace ptxb {
namespace {

KernelLaunch launch(const char* name, std::uint32_t grid_x, std::uint32_t count = 1) {
  return KernelLaunch{name, {grid_x, 1, 1}, {384, 1, 1}, count};
}

CallReply reply_with(std::vector<KernelLaunch> launches) {
  CallReply reply;
  for (const auto& l : launches) reply.kernel_count += l.count;
  reply.kernel_launches = std::move(launches);
  return reply;
}

// Three timed samples, each: main kernel twice (grid 132), then a reduce kernel (grid 8).
TimedKernels three_samples() {
  TimedKernels timed;
  for (int i = 0; i < 3; ++i)
    timed.add(reply_with({launch("_Z4mainv", 132, 2), launch("_Z6reducev", 8)}));
  return timed;
}

NcuLaunch ncu_launch(const char* name, std::uint32_t grid_x, double ns) {
  return NcuLaunch{name, {grid_x, 1, 1}, {384, 1, 1}, ns};
}

TEST(ProfilePlan, TimedKernelsSumShapesOverSamples) {
  const TimedKernels timed = three_samples();
  EXPECT_EQ(timed.kernels_per_call(), 3u);
  ASSERT_EQ(timed.launches.size(), 2u);
  EXPECT_EQ(timed.launches[0].count, 6u);
  EXPECT_EQ(timed.launches[1].count, 3u);
  TimedKernels varying = timed;
  varying.add(reply_with({launch("_Z4mainv", 132)}));
  EXPECT_FALSE(varying.kernels_per_call().has_value());
  EXPECT_FALSE(TimedKernels{}.kernels_per_call().has_value());
  TimedKernels none;
  none.add(CallReply{});
  EXPECT_FALSE(none.kernels_per_call().has_value());
}

TEST(ProfilePlan, LaunchSkipCountsTheWarmupAndTheCallsBeforeTheChosenOne) {
  // 10 warm-up calls, 5 candidates; random 7 → chosen 7 % 5 = 2 → the 13th call (index 12).
  auto plan = plan_profile(three_samples(), 10, 5, 7);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  EXPECT_EQ(plan->chosen, 2);
  EXPECT_EQ(plan->profiled_call(), 12);
  EXPECT_EQ(plan->total_calls(), 15);
  EXPECT_EQ(plan->kernels_per_call, 3u);
  EXPECT_EQ(plan->launch_skip, 36u);  // 12 calls x 3 kernels before the chosen call's first
  // Every candidate call is reachable, none of the warm-up is.
  for (std::uint64_t r = 0; r < 5; ++r) {
    auto p = plan_profile(three_samples(), 10, 5, r);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->profiled_call(), 10 + static_cast<int>(r));
    EXPECT_EQ(p->launch_skip, (10 + r) * 3);
  }
  EXPECT_FALSE(plan_profile(TimedKernels{}, 10, 5, 0).ok());
  EXPECT_FALSE(plan_profile(three_samples(), 10, 0, 0).ok());
}

TEST(ProfilePlan, NcuOptionsSelectExactlyTheChosenCallsKernels) {
  auto plan = plan_profile(three_samples(), 10, 5, 1);
  ASSERT_TRUE(plan.ok());
  const std::vector<std::string> options = ncu_call_options(*plan, {"_Z4mainv", "_Z3a$b.cv"});
  const std::vector<std::string> expected = {
      "--clock-control",
      "none",
      "--kernel-name-base",
      "mangled",
      "--kernel-name",
      "regex:^(_Z4mainv|_Z3a\\$b\\.cv)$",
      "--launch-skip",
      "33",
      "--launch-count",
      "3",
      "--metrics",
      "inst_executed,thread_inst_executed_true,gpu__time_duration.sum," + work_metrics_option()};
  EXPECT_EQ(options, expected);
  // Without a target family in the SASS: the launch list, the time and the work counters only.
  ProfilePlan counters_only = *plan;
  counters_only.source_counters = false;
  EXPECT_EQ(ncu_call_options(counters_only, {}).back(),
            "gpu__time_duration.sum," + work_metrics_option());
  // Without cubin functions (the library in the candidate slot) every launch counts.
  const std::vector<std::string> unfiltered = ncu_call_options(*plan, {});
  EXPECT_EQ(std::find(unfiltered.begin(), unfiltered.end(), "--kernel-name"), unfiltered.end());
}

// Three samples as above, each launch with its CUPTI time: main 0.4 ms, reduce 0.1 ms.
TimedKernels three_timed_samples() {
  TimedKernels timed;
  for (int i = 0; i < 3; ++i) {
    KernelLaunch main = launch("_Z4mainv", 132, 2);
    main.device_ns = 800'000;
    KernelLaunch reduce = launch("_Z6reducev", 8);
    reduce.device_ns = 100'000;
    timed.add(reply_with({main, reduce}));
  }
  return timed;
}

TEST(ProfilePlan, ASubsetOfTheKernelsIsCountedPerCallWithItsTime) {
  const TimedKernels timed = three_timed_samples();
  EXPECT_NEAR(timed.mean_kernel_ms(), 0.9, 1e-12);
  const TimedKernels main = timed.restricted_to({"_Z4mainv", "_Z7unusedv"});
  EXPECT_EQ(main.kernels_per_call(), 2u);
  ASSERT_EQ(main.launches.size(), 1u);
  EXPECT_EQ(main.launches[0].count, 6u);
  EXPECT_EQ(main.launches[0].device_ns, 2'400'000u);
  EXPECT_NEAR(main.mean_kernel_ms(), 0.8, 1e-12);
  EXPECT_FALSE(timed.restricted_to({"_Z7unusedv"}).kernels_per_call().has_value());
  // A runner that recorded no kernel time gives no mean (the focused band needs one).
  EXPECT_EQ(three_samples().mean_kernel_ms(), 0);
}

TEST(ProfilePlan, AFocusedPlanSkipsAndCountsOnlyTheTargetKernels) {
  const TimedKernels timed = three_timed_samples();
  auto plan = plan_profile(timed, 10, 5, 7);  // the 13th call: index 12
  ASSERT_TRUE(plan.ok());
  const std::optional<ProfilePlan> focused = focus_plan(*plan, timed, {"_Z4mainv", "_Z7unusedv"});
  ASSERT_TRUE(focused.has_value());
  EXPECT_EQ(focused->profiled_call(), 12);
  EXPECT_EQ(focused->kernels_per_call, 2u);
  EXPECT_EQ(focused->launch_skip, 24u);  // 12 calls x 2 main launches
  EXPECT_EQ(focused->functions, std::vector<std::string>{"_Z4mainv"});
  const std::vector<std::string> options = ncu_call_options(*focused, {"_Z4mainv", "_Z6reducev"});
  EXPECT_NE(std::find(options.begin(), options.end(), "regex:^(_Z4mainv)$"), options.end());
  EXPECT_EQ(profiled_call_record(*focused).scope, "target_kernels");
  EXPECT_EQ(profiled_call_record(*plan).scope, "call");
  // Nothing to gain or no fixed count: every kernel is a target, none is, or the times are
  // missing.
  EXPECT_FALSE(focus_plan(*plan, timed, {"_Z4mainv", "_Z6reducev"}).has_value());
  EXPECT_FALSE(focus_plan(*plan, timed, {"_Z7unusedv"}).has_value());
  EXPECT_FALSE(focus_plan(*plan, three_samples(), {"_Z4mainv"}).has_value());
  // The target kernel launched twice in one call and once in another: no launch arithmetic.
  TimedKernels varying = timed;
  KernelLaunch once = launch("_Z4mainv", 132, 1);
  once.device_ns = 400'000;
  KernelLaunch reduce = launch("_Z6reducev", 8, 2);
  reduce.device_ns = 200'000;
  varying.add(reply_with({once, reduce}));
  EXPECT_FALSE(focus_plan(*plan, varying, {"_Z4mainv"}).has_value());
}

TEST(ProfilePlan, WrapperProfilesTheRunnerThenPrintsBothPagesBetweenMarkers) {
  auto plan = plan_profile(three_samples(), 10, 5, 0);
  ASSERT_TRUE(plan.ok());
  const auto argv = ncu_call_wrapper("/opt/ncu dir/ncu", *plan, {"_Z4mainv"});
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_EQ(argv[0], "/bin/sh");
  EXPECT_EQ(argv[1], "-c");
  EXPECT_EQ(argv[3], "ptxbench-profile");  // $0; the runner's command line follows as "$@"
  const std::string& script = argv[2];
  EXPECT_NE(script.find("'/opt/ncu dir/ncu' '--clock-control' 'none'"), std::string::npos);
  EXPECT_NE(script.find("'--launch-skip' '30' '--launch-count' '3'"), std::string::npos);
  EXPECT_NE(script.find("--export \"$d/call\" \"$@\""), std::string::npos);
  EXPECT_NE(script.find("--page source --csv --print-source sass"), std::string::npos);
  // The two imports run side by side; the pages are printed after both ended.
  EXPECT_NE(script.find("wait \"$p\""), std::string::npos);
  EXPECT_NE(script.find("--page raw --csv --print-units base --print-kernel-base mangled"),
            std::string::npos);
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(ProfilePlan, OutputPartsTakeTheLastMarkers) {
  // The runner's own output comes first and may fake markers; the tool's come last.
  const std::string output =
      "@@ptxb-ncu-source\n\"fake\"\n@@ptxb-ncu-end\n"
      "==PROF== Disconnected\n"
      "\n@@ptxb-ncu-profile-exit 0\n"
      "@@ptxb-ncu-source\n\"Kernel Name\",\"k\",\n"
      "@@ptxb-ncu-launches\n\"ID\",\"Kernel Name\"\n"
      "@@ptxb-ncu-end\n";
  const ProfileOutputParts parts = profile_output_parts(output);
  EXPECT_EQ(parts.profile_exit, 0);
  EXPECT_EQ(parts.source, "\"Kernel Name\",\"k\",\n");
  EXPECT_EQ(parts.launches, "\"ID\",\"Kernel Name\"\n");
  EXPECT_TRUE(parts.complete);
  const ProfileOutputParts failed = profile_output_parts("x\n@@ptxb-ncu-profile-exit 9\n");
  EXPECT_EQ(failed.profile_exit, 9);
  EXPECT_FALSE(failed.complete);
  EXPECT_FALSE(profile_output_parts("nothing").profile_exit.has_value());
  // An empty page (no source counters) is empty, not the next part.
  const ProfileOutputParts empty_source = profile_output_parts(
      "\n@@ptxb-ncu-profile-exit 0\n@@ptxb-ncu-source\n@@ptxb-ncu-launches\n\"ID\"\n"
      "@@ptxb-ncu-end\n");
  EXPECT_EQ(empty_source.source, "");
  EXPECT_EQ(empty_source.launches, "\"ID\"\n");
}

class ProfileCheck : public ::testing::Test {
 protected:
  ProfiledCallRecord compare(const std::vector<NcuLaunch>& profiled, double median_ms) {
    auto plan = plan_profile(timed_, 10, 5, 3);
    EXPECT_TRUE(plan.ok());
    ProfiledCallRecord record = profiled_call_record(*plan);
    compare_profiled_call(profiled, timed_, *plan, median_ms, record);
    return record;
  }
  TimedKernels timed_ = three_samples();
};

TEST_F(ProfileCheck, TheTimedKernelsInTheBandMatch) {
  // 2 x 0.45 ms + 0.05 ms = 0.95 ms against a 1.0 ms median: ratio 0.95.
  const ProfiledCallRecord r =
      compare({ncu_launch("_Z4mainv", 132, 450'000), ncu_launch("_Z4mainv", 132, 450'000),
               ncu_launch("_Z6reducev", 8, 50'000)},
              1.0);
  EXPECT_TRUE(r.matches) << r.mismatch;
  EXPECT_DOUBLE_EQ(r.gpu_time_ms, 0.95);
  EXPECT_DOUBLE_EQ(r.ratio, 0.95);
  EXPECT_EQ(r.call, 14);  // 1-based: warm-up 10, chosen 3
  EXPECT_EQ(r.calls, 15);
  EXPECT_EQ(r.launch_skip, 39);
  EXPECT_EQ(r.kernels, 3);
  EXPECT_DOUBLE_EQ(r.band_low, kProfileBandLow);
}

TEST_F(ProfileCheck, ADifferentCodePathUnderTheProfilerIsAMismatch) {
  // The measured exploit: the same kernels, 0.026x the timed time.
  ProfiledCallRecord r =
      compare({ncu_launch("_Z4mainv", 132, 12'000), ncu_launch("_Z4mainv", 132, 12'000),
               ncu_launch("_Z6reducev", 8, 2'000)},
              1.0);
  EXPECT_FALSE(r.matches);
  EXPECT_NE(r.mismatch.find("outside"), std::string::npos) << r.mismatch;
  // Slower than 1.67x too.
  r = compare({ncu_launch("_Z4mainv", 132, 900'000), ncu_launch("_Z4mainv", 132, 900'000),
               ncu_launch("_Z6reducev", 8, 100'000)},
              1.0);
  EXPECT_FALSE(r.matches);
}

TEST_F(ProfileCheck, OtherKernelsCountsOrShapesAreAMismatch) {
  // Another kernel name.
  EXPECT_FALSE(compare({ncu_launch("_Z4mainv", 132, 450'000), ncu_launch("_Z4mainv", 132, 450'000),
                        ncu_launch("_Z5wgmmav", 8, 50'000)},
                       1.0)
                   .matches);
  // Another grid.
  EXPECT_FALSE(compare({ncu_launch("_Z4mainv", 66, 450'000), ncu_launch("_Z4mainv", 132, 450'000),
                        ncu_launch("_Z6reducev", 8, 50'000)},
                       1.0)
                   .matches);
  // One kernel fewer than each timed call launched.
  const ProfiledCallRecord fewer =
      compare({ncu_launch("_Z4mainv", 132, 900'000), ncu_launch("_Z6reducev", 8, 50'000)}, 1.0);
  EXPECT_FALSE(fewer.matches);
  EXPECT_NE(fewer.mismatch.find("2 kernel launches"), std::string::npos) << fewer.mismatch;
  // The right count, but main once and reduce twice.
  EXPECT_FALSE(compare({ncu_launch("_Z4mainv", 132, 450'000), ncu_launch("_Z6reducev", 8, 250'000),
                        ncu_launch("_Z6reducev", 8, 250'000)},
                       1.0)
                   .matches);
}

}  // namespace
TEST(ProfileCheckFocused, TheTargetKernelsAreHeldToTheirOwnTimedTime) {
  const TimedKernels timed = three_timed_samples();  // per call: main 0.8 ms, reduce 0.1 ms
  auto plan = plan_profile(timed, 10, 5, 3);
  ASSERT_TRUE(plan.ok());
  const std::optional<ProfilePlan> focused = focus_plan(*plan, timed, {"_Z4mainv"});
  ASSERT_TRUE(focused.has_value());
  // 2 x 0.42 ms against the main kernel's own 0.8 ms per call: 1.05, inside the band.
  ProfiledCallRecord r = profiled_call_record(*focused);
  compare_focused_call({ncu_launch("_Z4mainv", 132, 420'000), ncu_launch("_Z4mainv", 132, 420'000)},
                       timed, *focused, 0.95, r);
  EXPECT_TRUE(r.matches) << r.mismatch;
  EXPECT_EQ(r.scope, "target_kernels");
  EXPECT_NEAR(r.ratio, 1.05, 1e-9);
  // The target kernel run another way under the profiler (0.03x its timed time) is caught, by
  // its own time and within its call.
  r = profiled_call_record(*focused);
  compare_focused_call({ncu_launch("_Z4mainv", 132, 12'000), ncu_launch("_Z4mainv", 132, 12'000)},
                       timed, *focused, 0.95, r);
  EXPECT_FALSE(r.matches);
  EXPECT_NE(r.mismatch.find("mean of those kernels"), std::string::npos) << r.mismatch;
  EXPECT_NE(r.mismatch.find("outside too"), std::string::npos) << r.mismatch;
  // The left-out kernel in the profiled launches is not a launch the focused plan asked for.
  r = profiled_call_record(*focused);
  compare_focused_call({ncu_launch("_Z4mainv", 132, 420'000), ncu_launch("_Z6reducev", 8, 50'000)},
                       timed, *focused, 0.95, r);
  EXPECT_FALSE(r.matches);
  EXPECT_NE(r.mismatch.find("the profiled call launched"), std::string::npos) << r.mismatch;
}

// Measured on the H200 (EvalGpuTest, 2026-12-03): a 1.0-1.3 us wgmma probe beside a 29 ms SIMT
// kernel read 2.1 us under ncu, 1.7-2.1x its own timed time; within its call it is 1.00003x.
TEST(ProfileCheckFocused, AMicrosecondTargetKernelIsJudgedWithinItsCall) {
  TimedKernels timed;
  for (int i = 0; i < 3; ++i) {
    KernelLaunch gemm = launch("_Z4gemmv", 132);
    gemm.device_ns = 29'350'000;
    KernelLaunch probe = launch("_Z5probev", 1);
    probe.device_ns = 1'100;
    timed.add(reply_with({gemm, probe}));
  }
  auto plan = plan_profile(timed, 10, 5, 0);
  ASSERT_TRUE(plan.ok());
  const std::optional<ProfilePlan> focused = focus_plan(*plan, timed, {"_Z5probev"});
  ASSERT_TRUE(focused.has_value());
  ProfiledCallRecord r = profiled_call_record(*focused);
  compare_focused_call({ncu_launch("_Z5probev", 1, 2'100)}, timed, *focused, 29.352, r);
  EXPECT_TRUE(r.matches) << r.mismatch;
  EXPECT_EQ(r.scope, "target_kernels_in_call");
  EXPECT_NEAR(r.ratio, (0.0021 + 29.35) / 29.352, 1e-9);
}

}  // namespace ptxb
