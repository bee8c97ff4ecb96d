#include "eval/batch_bound.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

TEST(BatchBound, CallsAmortiseTheOverheadToOnePercent) {
  BatchBoundPolicy policy;
  // O = 0.1 ms, t = 0.75 ms: K = ceil(0.1 / 0.0075) = 14 (within 30 ms: 40).
  EXPECT_EQ(batch_calls(0.1, 0.75, policy), 14);
  EXPECT_EQ(batch_calls(0.1, 100.0, policy), policy.min_calls);  // a slow call: two suffice
  EXPECT_EQ(batch_calls(0.1, 0.001, policy), policy.max_calls);  // a tiny one: capped
  EXPECT_EQ(batch_calls(0.1, 0.0, policy), policy.max_calls);    // unknown time: the cap
  // O = 1.3 ms, t = 4.6 ms (causal attention backward): 29 for 1 %, but 30 ms at most: 7.
  EXPECT_EQ(batch_calls(1.3, 4.6, policy), 7);
}

TEST(BatchBound, PerCallBoundSubtractsTheOverhead) {
  EXPECT_DOUBLE_EQ(bound_per_call_ms(10.2, 0.2, 10), 1.0);
  EXPECT_DOUBLE_EQ(bound_per_call_ms(0.1, 0.2, 10), 0.0);  // noise below O: no bound
  EXPECT_DOUBLE_EQ(bound_per_call_ms(5.0, 0.2, 0), 0.0);
}

TEST(BatchBound, WritePhaseVoidOnlyWhenClearlySlower) {
  BatchBoundPolicy policy;  // 2x + 5 ms
  EXPECT_FALSE(write_phase_void(10.0, 10.0, policy));
  EXPECT_FALSE(write_phase_void(24.9, 10.0, policy));
  EXPECT_TRUE(write_phase_void(25.1, 10.0, policy));
}

TEST(BatchBound, CuptiBelowTheMarginUsesTheBoundAndBelowHalfIsForged) {
  BatchBoundPolicy policy;  // m = 0.05, forged below 0.5
  EXPECT_EQ(judge_against_bound(1.00, 1.00, policy), BoundJudgement::kCupti);
  EXPECT_EQ(judge_against_bound(0.96, 1.00, policy), BoundJudgement::kCupti);
  EXPECT_EQ(judge_against_bound(1.30, 1.00, policy), BoundJudgement::kCupti);  // slower: fine
  EXPECT_EQ(judge_against_bound(0.94, 1.00, policy), BoundJudgement::kBound);
  EXPECT_EQ(judge_against_bound(0.51, 1.00, policy), BoundJudgement::kBound);
  EXPECT_EQ(judge_against_bound(0.49, 1.00, policy), BoundJudgement::kForged);
  EXPECT_EQ(judge_against_bound(0.01, 0.0, policy), BoundJudgement::kCupti);  // nothing measured
}

TEST(BatchBound, TheBoundIsScaledByTheReferencesOwnRatioNeverLoosened) {
  // H200 GEMM (2026-12-02): the library's CUPTI median 0.739 ms, its U 0.788 ms.
  EXPECT_NEAR(scaled_bound_ms(0.806, 0.788, 0.739), 0.806 * 0.739 / 0.788, 1e-12);
  EXPECT_DOUBLE_EQ(scaled_bound_ms(0.806, 0.700, 0.739), 0.806);  // r > 1: capped at U
  EXPECT_DOUBLE_EQ(scaled_bound_ms(0.806, std::nullopt, std::nullopt), 0.806);
  // The expert kernel's CUPTI 0.741 ms stands against that bound (0.756 ms, m = 5 %).
  EXPECT_EQ(judge_against_bound(0.741, scaled_bound_ms(0.806, 0.788, 0.739), BatchBoundPolicy{}),
            BoundJudgement::kCupti);
}

TEST(BatchBound, RecordRoundTrips) {
  BatchBoundRecord r;
  r.calls = 14;
  r.overhead_ms = 0.12;
  r.margin = 0.05;
  r.reference_u_ms = 0.76;
  r.reference_cupti_median_ms = 0.755;
  r.write_calibration_ms = 9.5;
  r.u_ms_samples = {0.8, 0.79, 0.81};
  r.u_ms = 0.79;
  r.bound_ms = 0.78;
  r.cupti_median_ms = 0.5;
  r.time_used = "bound";
  r.honest_speedup = 0.96;
  r.write_check = false;
  r.write_check_off = "3 compute processes on the GPU (2 expected)";
  r.cost_ms = 40;
  auto back = BatchBoundRecord::from_json(Json::parse(r.to_json().dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->calls, 14);
  EXPECT_EQ(back->u_ms_samples, r.u_ms_samples);
  EXPECT_EQ(back->reference_u_ms, r.reference_u_ms);
  EXPECT_EQ(back->time_used, "bound");
  EXPECT_EQ(back->honest_speedup, r.honest_speedup);
  EXPECT_FALSE(back->write_check);
  EXPECT_EQ(back->write_check_off, r.write_check_off);
  EXPECT_FALSE(BatchBoundRecord::from_json(Json::object()).ok());
}

}  // namespace
}  // namespace ptxb
