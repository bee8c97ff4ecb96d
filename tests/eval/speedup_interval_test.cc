#include "eval/speedup_interval.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

TEST(SpeedupInterval, ConstantSamplesGiveAPointInterval) {
  auto interval = bootstrap_speedup({2e6, 2e6, 2e6}, {1e6, 1e6, 1e6});
  ASSERT_TRUE(interval.has_value());
  EXPECT_DOUBLE_EQ(interval->low, 2.0);
  EXPECT_DOUBLE_EQ(interval->high, 2.0);
  EXPECT_EQ(interval->resamples, kBootstrapResamples);
  EXPECT_EQ(interval->seed, kBootstrapSeed);
}

// By hand: the reference is always 2; a resample of the candidate's {1, 2} is {1,1} (median 1,
// probability 1/4), {1,2} or {2,1} (median 1.5, 1/2) or {2,2} (median 2, 1/4). The speedup is
// 2, 4/3 or 1 with those probabilities: the 2.5th percentile is 1 and the 97.5th is 2, and
// about half of the resamples give 4/3.
TEST(SpeedupInterval, TwoSampleCaseMatchesTheHandComputedPercentiles) {
  auto interval = bootstrap_speedup({2.0}, {1.0, 2.0});
  ASSERT_TRUE(interval.has_value());
  EXPECT_DOUBLE_EQ(interval->low, 1.0);
  EXPECT_DOUBLE_EQ(interval->high, 2.0);
}

// n deterministic, spread samples per side: the reference around 1005, the candidate around
// candidate_base + 8.
CoupleSamples spread_samples(int n, double candidate_base) {
  CoupleSamples c;
  for (int i = 0; i < n; ++i) {
    c.reference_ns.push_back(1000.0 + (i * 37 % 11));
    c.candidate_ns.push_back(candidate_base + (i * 53 % 17));
  }
  return c;
}

TEST(SpeedupInterval, FixedSeedGivesTheSameIntervalAndContainsTheSpeedup) {
  const auto [reference, candidate] = spread_samples(50, 800.0);
  auto a = bootstrap_speedup(reference, candidate);
  auto b = bootstrap_speedup(reference, candidate);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->low, b->low);
  EXPECT_EQ(a->high, b->high);
  EXPECT_LT(a->low, a->high);
  EXPECT_LT(a->low, 1005.0 / 808.0);
  EXPECT_GT(a->high, 1005.0 / 808.0);
}

TEST(SpeedupInterval, NoSamplesNoInterval) {
  EXPECT_FALSE(bootstrap_speedup({}, {1.0}).has_value());
  EXPECT_FALSE(bootstrap_speedup({1.0}, {}).has_value());
  EXPECT_FALSE(bootstrap_speedup({1.0}, {0.0}).has_value());
}

TEST(SpeedupInterval, RoundTrips) {
  SpeedupInterval v{0.97, 1.01, 0.95, 2000, 42};
  auto back = SpeedupInterval::from_json(Json::parse(v.to_json().dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->low, 0.97);
  EXPECT_EQ(back->seed, 42u);
  EXPECT_FALSE(SpeedupInterval::from_json(Json::object()).ok());
}

TEST(SpeedupInterval, OneCoupleIsTheRatioOfPooledMedians) {
  const auto [reference, candidate] = spread_samples(30, 900.0);
  auto pooled = bootstrap_speedup(reference, candidate);
  auto coupled = bootstrap_couple_speedup({CoupleSamples{reference, candidate}});
  ASSERT_TRUE(pooled && coupled);
  EXPECT_EQ(pooled->low, coupled->low);
  EXPECT_EQ(pooled->high, coupled->high);
}

// By hand: three couples, the reference always 2. Couples 1 and 2 have the candidate at 1
// (ratio 2); couple 3's candidate ran in a clock dip, {2, 2} (ratio 1). Pooled, the candidate's
// median over {1, 1, 1, 1, 2, 2} is 1 and the speedup 2 here, but with two dipped samples of six
// in a side of 4+2 the pooled median sits on the boundary; the couples' median is 2 whatever
// couple 3 says, and so is every resample's (couples 1 and 2 always give 2).
TEST(SpeedupInterval, TheMedianOfCouplesIgnoresOneDippedCouple) {
  const std::vector<CoupleSamples> couples = {
      {{2.0, 2.0}, {1.0, 1.0}}, {{2.0, 2.0}, {1.0, 1.0}}, {{2.0, 2.0}, {2.0, 2.0}}};
  EXPECT_DOUBLE_EQ(*couple_speedup(couples), 2.0);
  auto interval = bootstrap_couple_speedup(couples);
  ASSERT_TRUE(interval.has_value());
  EXPECT_DOUBLE_EQ(interval->low, 2.0);
  EXPECT_DOUBLE_EQ(interval->high, 2.0);
  // Pooled, three dipped samples of six move the speedup: medians 2 / 1.5.
  EXPECT_DOUBLE_EQ(*couple_speedup({{{2.0, 2.0, 2.0}, {1.0, 1.0, 1.0, 2.0, 2.0, 2.0}}}), 2.0 / 1.5);
}

// By hand, two couples (the median of two is their mean): couple 1's ratio is always 2/1 = 2;
// couple 2 has the reference at 2 and the candidate {1, 2}, whose resample medians are 1, 1.5
// or 2 with probabilities 1/4, 1/2, 1/4, so its ratio is 2, 4/3 or 1 and the mean of the two
// couples 2, 5/3 or 3/2: the 2.5th percentile is 3/2 and the 97.5th 2.
TEST(SpeedupInterval, TwoCouplesMatchTheHandComputedPercentiles) {
  const std::vector<CoupleSamples> couples = {{{2.0}, {1.0}}, {{2.0}, {1.0, 2.0}}};
  EXPECT_DOUBLE_EQ(*couple_speedup(couples), (2.0 + 2.0 / 1.5) / 2);
  auto interval = bootstrap_couple_speedup(couples);
  ASSERT_TRUE(interval.has_value());
  EXPECT_DOUBLE_EQ(interval->low, 1.5);
  EXPECT_DOUBLE_EQ(interval->high, 2.0);
}

TEST(SpeedupInterval, ACoupleWithoutSamplesHasNoSpeedup) {
  EXPECT_FALSE(couple_speedup({}).has_value());
  EXPECT_FALSE(couple_speedup({{{1.0}, {1.0}}, {{1.0}, {}}}).has_value());
  EXPECT_FALSE(bootstrap_couple_speedup({{{1.0}, {}}}).has_value());
}

TEST(SpeedupInterval, CoupleRatiosAndTheLowestCandidateMedian) {
  const std::vector<CoupleSamples> couples = {{{2.0, 2.0}, {1.0, 3.0, 1.0}}, {{4.0}, {0.5, 0.5}}};
  EXPECT_EQ(*couple_ratios(couples), (std::vector<double>{2.0, 8.0}));
  EXPECT_DOUBLE_EQ(lowest_candidate_median_ns(couples), 0.5);
  // A couple whose candidate median is 0 has no ratio (and is below any floor).
  const std::vector<CoupleSamples> zero = {{{2.0}, {1.0}}, {{2.0}, {0.0, 0.0, 1.0}}};
  EXPECT_FALSE(couple_ratios(zero).has_value());
  EXPECT_DOUBLE_EQ(lowest_candidate_median_ns(zero), 0.0);
}

}  // namespace
}  // namespace ptxb
