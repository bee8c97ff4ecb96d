// design.md §3.7 metrics on the golden run directories, every expectation worked out by hand.
//
// testdata/runs/golden_gemm (model-x, gemm, sm_90a), turns by trajectory (s = speedup, DP =
// dynamic_present, SA = static_absent, ?? = unknown):
//   no-hint           t0: 1 COMPILE_ERROR | 2 PASSED s0.8 DP | 3 PASSED s1.0 DP
//                     t1: 1 PASSED s1.0 ?? | 2 NO_CODE
//   cluster-multicast t0: 1 PASSED s1.0 DP | 2 PASSED s1.0 DP | 3 REWARD_HACK (s9.0, ignored)
//                         | 4 INFRA_ERROR
//                     t1: (declared in trajectories.jsonl, no turns)
//                     t2: 1 INCORRECT_NUMERICAL | 2 PASSED s1.5 SA | 3 FORBIDDEN | 4 MEMORY_ERROR
// testdata/runs/golden_mha (model-x, mha fwd):
//   no-hint t0: 1 TIMEOUT | 2 RUNTIME_ERROR;  t1: 1 PASSED s=null DP | 2 INCORRECT_SHAPE
#include <gtest/gtest.h>

#include "metrics/metrics.h"

namespace ptxb {
namespace {

const std::string kRuns = std::string(PTXB_TESTDATA_DIR) + "/runs";
// p = 1.0 is the tie case: every s = 1.0 turn must NOT count (Fast_p needs s > p).
const std::vector<double> kPs = {0.5, 1.0, 1.2};
constexpr double kEps = 1e-12;

class MetricsGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = load_run_dirs({kRuns + "/golden_gemm", kRuns + "/golden_mha"});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    trajectories_ = std::move(loaded).value();
    options_.turn_limits = {1, 2, 4, 8};  // 8 exceeds every trajectory (max 4 turns)
    options_.ps = kPs;
    groups_ = compute_metrics(trajectories_, options_);
    ASSERT_EQ(groups_.size(), 2u);
  }
  // Groups sort by model, definition: gemm first.
  const GroupMetrics& gemm() const { return groups_[0]; }
  const GroupMetrics& mha() const { return groups_[1]; }
  // Variants sort by name: cluster-multicast = 0, no-hint = 1.
  const WindowMetrics& variant(int limit_index, int variant_index) const {
    return gemm().limits[limit_index].per_variant[variant_index];
  }
  int outcome(const WindowMetrics& m, Outcome which) const {
    return m.outcomes[static_cast<std::size_t>(which)];
  }

  std::vector<Trajectory> trajectories_;
  MetricsOptions options_;
  std::vector<GroupMetrics> groups_;
};

TEST_F(MetricsGolden, GroupsAndVariants) {
  EXPECT_EQ(gemm().definition, "gemm_n7168_k5120");
  EXPECT_EQ(gemm().workload_name, "gemm_n7168_k5120_M8192");
  EXPECT_EQ(gemm().n_trajectories, 5);
  EXPECT_EQ(gemm().variants, (std::vector<std::string>{"cluster-multicast", "no-hint"}));
  EXPECT_EQ(mha().definition, "mha_with_lse_d128");
}

TEST_F(MetricsGolden, NoHintVariantByTurnLimit) {
  // ≤1: N = 2 × 1 = 2; t0.1 CE, t1.1 PASSED s1.0 ??.
  const WindowMetrics& k1 = variant(0, 1);
  EXPECT_EQ(k1.n_turns, 2);
  EXPECT_NEAR(k1.turn_correctness, 1.0 / 2, kEps);   // ΣC = 1
  EXPECT_NEAR(k1.inst_turn_correctness, 0.0, kEps);  // unknown counts as not executed
  EXPECT_EQ(k1.best_speedup, 1.0);
  EXPECT_FALSE(k1.inst_best_speedup.has_value());  // "—"
  EXPECT_NEAR(k1.fast_p[0], 1.0 / 2, kEps);        // 1.0 > 0.5
  EXPECT_NEAR(k1.fast_p[1], 0.0, kEps);            // tie: 1.0 > 1.0 is false
  EXPECT_EQ(k1.n_unknown_checks, 1);
  EXPECT_EQ(k1.n_unknown_correct, 1);
  EXPECT_NEAR(k1.trajectory_rate, 1.0 / 2, kEps);
  EXPECT_NEAR(k1.inst_trajectory_rate, 0.0, kEps);

  // ≤2: N = 4; + t0.2 PASSED s0.8 DP, t1.2 NO_CODE. ΣC = 2, ΣCI = 1.
  const WindowMetrics& k2 = variant(1, 1);
  EXPECT_NEAR(k2.turn_correctness, 2.0 / 4, kEps);
  EXPECT_NEAR(k2.inst_turn_correctness, 1.0 / 4, kEps);
  EXPECT_EQ(k2.best_speedup, 1.0);
  EXPECT_EQ(k2.inst_best_speedup, 0.8);
  EXPECT_NEAR(k2.fast_p[0], 2.0 / 4, kEps);       // 0.8 and 1.0 > 0.5
  EXPECT_NEAR(k2.fast_inst_p[0], 1.0 / 4, kEps);  // only 0.8 has DP
  EXPECT_NEAR(k2.trajectory_rate, 2.0 / 2, kEps);
  EXPECT_NEAR(k2.inst_trajectory_rate, 1.0 / 2, kEps);
  EXPECT_EQ(outcome(k2, Outcome::kNoCode), 1);

  // ≤4: N = 2 × 4 = 8 although the trajectories hold 3 + 2 turns: 3 slots are `missing`.
  // + t0.3 PASSED s1.0 DP (ties t1.1's 1.0 for best). ΣC = 3, ΣCI = 2.
  const WindowMetrics& k4 = variant(2, 1);
  EXPECT_EQ(k4.n_turns, 8);
  EXPECT_NEAR(k4.turn_correctness, 3.0 / 8, kEps);
  EXPECT_NEAR(k4.inst_turn_correctness, 2.0 / 8, kEps);
  EXPECT_EQ(k4.best_speedup, 1.0);
  EXPECT_EQ(k4.inst_best_speedup, 1.0);
  EXPECT_NEAR(k4.fast_p[0], 3.0 / 8, kEps);
  EXPECT_NEAR(k4.fast_inst_p[0], 2.0 / 8, kEps);
  EXPECT_NEAR(k4.fast_p[1], 0.0, kEps);
  EXPECT_EQ(outcome(k4, Outcome::kMissing), 3);
  EXPECT_EQ(outcome(k4, Outcome::kCorrect), 3);
  EXPECT_EQ(outcome(k4, Outcome::kCompileError), 1);
}

TEST_F(MetricsGolden, ClusterMulticastVariantWithEmptyTrajectory) {
  // ≤1: N = 3 × 1 (t1 has no turns but counts); t0.1 PASSED s1.0 DP, t2.1 numerical.
  const WindowMetrics& k1 = variant(0, 0);
  EXPECT_EQ(k1.n_turns, 3);
  EXPECT_NEAR(k1.turn_correctness, 1.0 / 3, kEps);
  EXPECT_NEAR(k1.inst_turn_correctness, 1.0 / 3, kEps);
  EXPECT_EQ(outcome(k1, Outcome::kMissing), 1);
  EXPECT_EQ(outcome(k1, Outcome::kNumericalError), 1);

  // ≤2: N = 6; + t0.2 PASSED s1.0 DP, t2.2 PASSED s1.5 SA. ΣC = 3, ΣCI = 2.
  const WindowMetrics& k2 = variant(1, 0);
  EXPECT_NEAR(k2.turn_correctness, 3.0 / 6, kEps);
  EXPECT_NEAR(k2.inst_turn_correctness, 2.0 / 6, kEps);
  EXPECT_EQ(k2.best_speedup, 1.5);
  EXPECT_EQ(k2.inst_best_speedup, 1.0);      // 1.5 lacks target instructions
  EXPECT_NEAR(k2.fast_p[1], 1.0 / 6, kEps);  // only 1.5 > 1.0
  EXPECT_NEAR(k2.fast_p[2], 1.0 / 6, kEps);  // 1.5 > 1.2
  EXPECT_NEAR(k2.fast_inst_p[1], 0.0, kEps);
  EXPECT_NEAR(k2.trajectory_rate, 2.0 / 3, kEps);
  EXPECT_NEAR(k2.inst_trajectory_rate, 1.0 / 3, kEps);

  // ≤4: N = 12; + REWARD_HACK (its 9.0 speedup must not count), INFRA, FORBIDDEN, MEMORY.
  const WindowMetrics& k4 = variant(2, 0);
  EXPECT_NEAR(k4.turn_correctness, 3.0 / 12, kEps);
  EXPECT_EQ(k4.best_speedup, 1.5);
  EXPECT_EQ(k4.n_infra, 1);
  EXPECT_EQ(outcome(k4, Outcome::kIntegrityFailure), 1);
  EXPECT_EQ(outcome(k4, Outcome::kInfraError), 1);
  EXPECT_EQ(outcome(k4, Outcome::kForbidden), 1);
  EXPECT_EQ(outcome(k4, Outcome::kMemoryError), 1);
  EXPECT_EQ(outcome(k4, Outcome::kMissing), 4);  // the empty t1
  int total = 0;
  for (int count : k4.outcomes) total += count;
  EXPECT_EQ(total, k4.n_turns);
}

TEST_F(MetricsGolden, SpreadOverVariantsUsesZeroForMissingBestSpeedup) {
  // ≤1 inst best: cluster-multicast 1.0, no-hint none → 0 inside the mean: (1.0 + 0) / 2.
  const VariantSpread& k1 = gemm().limits[0].over_variants;
  ASSERT_TRUE(k1.inst_best_speedup.has_value());
  EXPECT_NEAR(k1.inst_best_speedup->mean, 0.5, kEps);
  EXPECT_NEAR(k1.inst_best_speedup->min, 0.0, kEps);
  EXPECT_NEAR(k1.inst_best_speedup->max, 1.0, kEps);
  // ≤2 inst turn correctness: 2/6 and 1/4 → mean (1/3 + 1/4) / 2 = 7/24.
  const VariantSpread& k2 = gemm().limits[1].over_variants;
  EXPECT_NEAR(k2.inst_turn_correctness.mean, 7.0 / 24, kEps);
  EXPECT_NEAR(k2.inst_turn_correctness.min, 1.0 / 4, kEps);
  EXPECT_NEAR(k2.inst_turn_correctness.max, 1.0 / 3, kEps);
  // ≤2 best speedup 1.5 and 1.0 → mean 1.25; Fast_1.0: 1/6 and 0 → mean 1/12.
  EXPECT_NEAR(k2.best_speedup->mean, 1.25, kEps);
  EXPECT_NEAR(k2.fast_p[1].mean, 1.0 / 12, kEps);
  EXPECT_NEAR(k2.fast_p[1].max, 1.0 / 6, kEps);
  // mha has one variant and no speedup at all: spread is "—", not 0.
  EXPECT_FALSE(mha().limits[1].over_variants.best_speedup.has_value());
}

TEST_F(MetricsGolden, PooledOverVariants) {
  // ≤1: N = 5; ΣC = 1 (no-hint t1) + 1 (cm t0) = 2; ΣCI = 1; trajectories 2/5.
  const WindowMetrics& k1 = gemm().limits[0].pooled;
  EXPECT_EQ(k1.n_turns, 5);
  EXPECT_NEAR(k1.turn_correctness, 2.0 / 5, kEps);
  EXPECT_NEAR(k1.inst_turn_correctness, 1.0 / 5, kEps);
  EXPECT_NEAR(k1.trajectory_rate, 2.0 / 5, kEps);
  // ≤4: N = 20; ΣC = 3 + 3 = 6; ΣCI = 2 + 2 = 4; Fast_1.0 = 1/20 (the 1.5).
  const WindowMetrics& k4 = gemm().limits[2].pooled;
  EXPECT_NEAR(k4.turn_correctness, 6.0 / 20, kEps);
  EXPECT_NEAR(k4.inst_turn_correctness, 4.0 / 20, kEps);
  EXPECT_NEAR(k4.fast_p[1], 1.0 / 20, kEps);
  EXPECT_NEAR(k4.trajectory_rate, 4.0 / 5, kEps);
  EXPECT_NEAR(k4.inst_trajectory_rate, 2.0 / 5, kEps);  // both t0s
  EXPECT_EQ(k4.n_unknown_checks, 1);
  // ≤8 exceeds every trajectory: N = 5 × 8 = 40; 13 turns exist → 27 missing; ΣC still 6.
  const WindowMetrics& k8 = gemm().limits[3].pooled;
  EXPECT_EQ(k8.n_turns, 40);
  EXPECT_NEAR(k8.turn_correctness, 6.0 / 40, kEps);
  EXPECT_EQ(k8.outcomes[static_cast<std::size_t>(Outcome::kMissing)], 27);
}

TEST_F(MetricsGolden, CorrectTurnWithoutSpeedupIsCorrectButNeverFast) {
  // mha ≤2: N = 4; t1.1 PASSED with DP but speedup null: ΣC = ΣCI = 1.
  const WindowMetrics& k2 = mha().limits[1].pooled;
  EXPECT_NEAR(k2.turn_correctness, 1.0 / 4, kEps);
  EXPECT_NEAR(k2.inst_turn_correctness, 1.0 / 4, kEps);
  EXPECT_FALSE(k2.best_speedup.has_value());
  EXPECT_NEAR(k2.fast_p[0], 0.0, kEps);
  EXPECT_EQ(k2.outcomes[static_cast<std::size_t>(Outcome::kTimeout)], 1);
  EXPECT_EQ(k2.outcomes[static_cast<std::size_t>(Outcome::kRuntimeError)], 1);
  EXPECT_EQ(k2.outcomes[static_cast<std::size_t>(Outcome::kNumericalError)], 1);  // SHAPE
}

TEST(MetricsWindow, NoTrajectoriesGivesZeroNotNaN) {
  WindowMetrics metrics = compute_window({}, 4, kPs);
  EXPECT_EQ(metrics.n_turns, 0);
  EXPECT_EQ(metrics.turn_correctness, 0.0);
  EXPECT_EQ(metrics.fast_p.size(), kPs.size());
}

TEST(MetricsOutcome, EveryStatusHasOneOutcome) {
  TurnRecord turn;
  EXPECT_EQ(classify_turn(turn), Outcome::kNoCode);
  turn.status = PtxbStatus::kInvalidReference;
  EXPECT_EQ(classify_turn(turn), Outcome::kInfraError);
  turn.status = PtxbStatus::kIncorrectDtype;
  EXPECT_EQ(classify_turn(turn), Outcome::kNumericalError);
  EXPECT_EQ(outcome_name(Outcome::kIntegrityFailure), "integrity_failure");
}

}  // namespace
}  // namespace ptxb
