// Energy per call's arithmetic (eval/energy.h) against hand-computed cases.
#include "eval/energy.h"
#include "eval/paper_timing.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

TEST(Energy, NetJoulesPerCallSubtractsTheIdlePower) {
  // 1.2 s of calls drew 900 J; idle was 75 W, so 90 J of it is idle; 600 calls: 1.35 J each.
  EXPECT_NEAR(net_joules_per_call(900, 75, 1.2, 600), 1.35, 1e-12);
  EXPECT_EQ(net_joules_per_call(900, 75, 1.2, 0), 0);
}

TEST(Energy, CounterPeriodAndIdleWattsComeFromTheChanges) {
  // Polled every ms; the counter moves every 20 ms by 1.6 J at 80 W.
  std::vector<EnergyPoll> polls;
  std::uint64_t mj = 5'000'000;
  for (int t = 0; t <= 100; ++t) {
    if (t > 0 && t % 20 == 5) mj += 1600;
    polls.push_back({static_cast<double>(t), mj, 0});
  }
  ASSERT_TRUE(counter_period_ms(polls).has_value());
  EXPECT_NEAR(*counter_period_ms(polls), 20.0, 1e-12);
  ASSERT_TRUE(watts_between_changes(polls).has_value());
  EXPECT_NEAR(*watts_between_changes(polls), 80.0, 1e-12);  // 4 × 1.6 J over 80 ms
  // A counter that never moves tells nothing.
  std::vector<EnergyPoll> flat = {{0, 7, 0}, {1, 7, 0}, {2, 7, 0}};
  EXPECT_FALSE(counter_period_ms(flat).has_value());
  EXPECT_FALSE(watts_between_changes(flat).has_value());
}

TEST(Energy, TheActiveWindowIsCutAtTheCountersChanges) {
  // Batches of 10 calls every 5 ms; the counter moves every 100 ms (at t = 30, 130, ...) by what
  // 100 ms at 700 W (70 J) gives. Between the first and the last change (30 -> 930 ms) run 1800
  // calls and 630 J.
  EnergySide side;
  side.idle_watts = 100;
  std::vector<EnergyPoll> polls;
  std::uint64_t mj = 1'000'000;
  for (int t = 0, calls = 0; t <= 1000; t += 5, calls += 10) {
    if (t % 100 == 30) mj += 70'000;
    polls.push_back({static_cast<double>(t), mj, static_cast<std::uint64_t>(calls)});
  }
  ASSERT_TRUE(energy_between_changes(polls, side));
  EXPECT_NEAR(side.seconds, 0.9, 1e-12);
  EXPECT_NEAR(side.joules, 630, 1e-9);  // 9 further changes of 70 J
  EXPECT_EQ(side.calls, 1800u);         // 10 calls per 5 ms over 900 ms
  EXPECT_NEAR(side.joules_per_call, (630 - 100 * 0.9) / 1800, 1e-12);
  EXPECT_FALSE(energy_between_changes({{0, 5, 0}, {10, 5, 10}}, side));
}

TEST(PaperTiming, TrialMedianDropsTheWarmupAndTheMeanAveragesTrials) {
  std::vector<std::uint64_t> ns(10, 9'000'000);  // slow warm-up calls: not counted
  for (int i = 0; i < 50; ++i) ns.push_back(1'000'000 + (i % 2) * 20'000);  // 1.00 / 1.02 ms
  auto median = paper_trial_median_ms(ns);
  ASSERT_TRUE(median.ok()) << median.error().message;
  EXPECT_NEAR(*median, 1.01, 1e-12);  // 25 of each: the midpoint
  EXPECT_NEAR(paper_mean_ms({1.0, 1.1, 1.3}), 3.4 / 3, 1e-12);
  ns.pop_back();
  EXPECT_FALSE(paper_trial_median_ms(ns).ok());  // 59 calls: not the recipe
  ns.push_back(0);
  EXPECT_FALSE(paper_trial_median_ms(ns).ok());  // a timed call without GPU activity
}

TEST(Energy, TheRecordRoundTrips) {
  EnergyRecord rec;
  rec.counter_period_ms = 20;
  rec.reference = EnergySide{600, 1.2, 900, 75, 1.35};
  rec.candidate = EnergySide{500, 1.1, 880, 75, 1.595};
  rec.ratio = 1.595 / 1.35;
  auto back = EnergyRecord::from_json(Json::parse(rec.to_json().dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), rec.to_json());
}

}  // namespace
}  // namespace ptxb
