// Interleaved timing's pure parts (eval/interleave.h): the secret pair order, the drift rule,
// the record and its JSON.
#include "eval/interleave.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

TEST(Interleave, PairOrderIsBothSidesInADrawnOrder) {
  std::mt19937_64 rng(20261228);
  int reference_first = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto pair = next_pair_order(rng);
    ASSERT_EQ(pair.size(), 2u);
    EXPECT_NE(pair[0], pair[1]);
    reference_first += pair[0] == TimedSide::kReference;
  }
  // A fair coin: 1000 draws land within 4 sigma (±63) of 500.
  EXPECT_GT(reference_first, 437);
  EXPECT_LT(reference_first, 563);
  // The same secret gives the same order: the trace can be replayed.
  std::mt19937_64 a(7), b(7);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(next_pair_order(a), next_pair_order(b));
}

TEST(Interleave, AReferenceBlockBeyondTheLimitVoidsWithTheNumbers) {
  TimingBlock block;
  block.side = TimedSide::kReference;
  block.first_sample = 10;
  block.samples = 10;
  block.median_ms = 1.025;
  block.sm_clock_mhz_before = 1860;
  block.sm_clock_mhz_after = 1845;
  EXPECT_NEAR(reference_drift(1.025, 1.0), 0.025, 1e-12);
  auto why = drift_violation(block, 1.0, 0.02);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("+2.5 %"), std::string::npos) << *why;
  EXPECT_NE(why->find("samples 11-20"), std::string::npos) << *why;
  EXPECT_NE(why->find("1860-1845 MHz"), std::string::npos) << *why;
  block.median_ms = 0.985;  // -1.5 %: within 2 %
  EXPECT_FALSE(drift_violation(block, 1.0, 0.02).has_value());
  // Faster beyond the limit is flagged, not voided: it can only understate the candidate.
  block.median_ms = 0.97;
  EXPECT_FALSE(drift_violation(block, 1.0, 0.02).has_value());
  InterleaveRecord rec;
  rec.drift_limit = 0.02;
  block.drift = reference_drift(0.97, 1.0);
  rec.blocks.push_back(block);
  EXPECT_TRUE(reference_faster_than_solo(rec));
  rec.blocks.back().drift = -0.01;
  EXPECT_FALSE(reference_faster_than_solo(rec));
  block.side = TimedSide::kCandidate;  // the candidate may drift as it likes
  EXPECT_FALSE(drift_violation(block, 1.0, 0.02).has_value());
}

TEST(Interleave, TheRecordKeepsDriftClocksAndSpreadAndRoundTrips) {
  InterleaveRecord rec;
  rec.block_samples = 10;
  rec.drift_limit = 0.02;
  rec.reference_solo_median_ms = 2.0;
  rec.candidate_freeze = "cgroup";
  add_block(rec, TimingBlock{TimedSide::kReference, 0, 10, 2.02, 1980, 1965, {}, std::nullopt});
  add_block(
      rec,
      TimingBlock{TimedSide::kCandidate, 0, 10, 2.50, 1965, 1950, {"sw_power_cap"}, std::nullopt});
  EXPECT_NEAR(rec.max_abs_drift, 0.01, 1e-12);
  ASSERT_TRUE(rec.blocks[0].drift.has_value());
  EXPECT_FALSE(rec.blocks[1].drift.has_value());
  EXPECT_EQ(rec.sm_clock_mhz_min, 1950u);
  EXPECT_EQ(rec.sm_clock_mhz_max, 1980u);
  EXPECT_FALSE(rec.clock_spread);
  add_block(rec, TimingBlock{TimedSide::kReference, 10, 10, 1.99, 1860, 0, {}, std::nullopt});
  EXPECT_TRUE(rec.clock_spread);  // 1980 - 1860 > 90 MHz; the unreadable 0 is ignored
  EXPECT_EQ(rec.sm_clock_mhz_min, 1860u);
  auto back = InterleaveRecord::from_json(Json::parse(rec.to_json().dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), rec.to_json());
  Json bad = rec.to_json();
  bad["blocks"][0]["side"] = "both";
  EXPECT_FALSE(InterleaveRecord::from_json(bad).ok());
}

}  // namespace
}  // namespace ptxb
