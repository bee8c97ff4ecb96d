// Interleaved timing's pure parts (eval/interleave.h): the secret pair order, the drift rule,
// the record and its JSON.
#include "eval/interleave.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

TEST(Interleave, CoupleOrderIsMirroredAndDrawn) {
  constexpr TimedSide R = TimedSide::kReference;
  std::mt19937_64 rng(20261228);
  int reference_first = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto couple = next_couple_order(rng);
    ASSERT_EQ(couple.size(), 4u);
    // A mirror: each side twice, the second pair the first reversed.
    EXPECT_NE(couple[0], couple[1]);
    EXPECT_EQ(couple[0], couple[3]);
    EXPECT_EQ(couple[1], couple[2]);
    reference_first += couple[0] == R;
  }
  // A fair coin: 1000 draws land within 4 sigma (±63) of 500.
  EXPECT_GT(reference_first, 437);
  EXPECT_LT(reference_first, 563);
  // The same secret gives the same order: the trace can be replayed.
  std::mt19937_64 a(7), b(7);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(next_couple_order(a), next_couple_order(b));
}

// Why the mirror: under a clock that falls linearly, block k of equal work takes 1 + k·d. In
// R C C R both sides sum to (0 + 3)d and (1 + 2)d, the same; in two random pairs R C, R C the
// reference would get (0 + 2)d against (1 + 3)d.
TEST(Interleave, AMirroredCoupleCancelsALinearDrift) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 8; ++trial) {
    const auto couple = next_couple_order(rng);
    double ref = 0, cand = 0;
    for (int k = 0; k < 4; ++k) (couple[k] == TimedSide::kReference ? ref : cand) += 1 + 0.01 * k;
    EXPECT_NEAR(ref, cand, 1e-12);
  }
}

TimingBlock reference_block(double median_ms, std::uint32_t before, std::uint32_t after) {
  TimingBlock block;
  block.side = TimedSide::kReference;
  block.first_sample = 10;
  block.samples = 10;
  block.median_ms = median_ms;
  block.sm_clock_mhz_before = before;
  block.sm_clock_mhz_after = after;
  return block;
}

TEST(Interleave, AReferenceBlockBeyondTheLimitVoidsWithTheNumbers) {
  InterleaveRecord rec;
  rec.drift_limit = 0.02;
  rec.reference_solo_median_ms = 1.0;
  rec.reference_solo_sm_clock_mhz = 1980;
  add_block(rec, reference_block(1.025, 1980, 1980));
  auto why = drift_violation(rec);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("+2.5 %"), std::string::npos) << *why;
  EXPECT_NE(why->find("samples 11-20"), std::string::npos) << *why;
  EXPECT_NE(why->find("1980-1980 MHz"), std::string::npos) << *why;
  EXPECT_NE(why->find("at 1980 MHz"), std::string::npos) << *why;
  EXPECT_NEAR(reference_drift(1.025, 1.0), 0.025, 1e-12);
  rec.blocks.clear();
  add_block(rec, reference_block(0.985, 1980, 1980));  // -1.5 %: within 2 %
  EXPECT_FALSE(drift_violation(rec).has_value());
  EXPECT_FALSE(reference_faster_than_solo(rec));
  // Faster beyond the limit is flagged, not voided: it can only understate the candidate.
  add_block(rec, reference_block(0.97, 1980, 1980));
  EXPECT_FALSE(drift_violation(rec).has_value());
  EXPECT_TRUE(reference_faster_than_solo(rec));
  TimingBlock cand = reference_block(2.0, 1980, 1980);
  cand.side = TimedSide::kCandidate;  // the candidate may drift as it likes
  add_block(rec, cand);
  EXPECT_FALSE(drift_violation(rec).has_value());
  EXPECT_FALSE(rec.blocks.back().drift.has_value());
}

TEST(Interleave, AReferenceSlowerRightAfterTheCandidateVoids) {
  InterleaveRecord rec;
  rec.drift_limit = 0.02;
  rec.reference_solo_median_ms = 1.0;
  rec.reference_solo_sm_clock_mhz = 1980;
  // The reference blocks after a candidate block take 1.5 % longer than the solo calibration,
  // the others 1 % less: each within the solo rule's 2 %.
  auto add = [&](double ms, bool after_candidate) {
    TimingBlock b = reference_block(ms, 1980, 1980);
    b.after_candidate = after_candidate;
    add_block(rec, b);
    EXPECT_FALSE(drift_violation(rec).has_value());
  };
  add(1.015, true);
  EXPECT_FALSE(rec.after_candidate_slowdown.has_value());  // one group only so far
  add(1.000, false);
  ASSERT_TRUE(rec.after_candidate_slowdown.has_value());
  EXPECT_NEAR(*rec.after_candidate_slowdown, 0.015, 1e-12);
  EXPECT_FALSE(after_candidate_violation(rec).has_value());
  // Against each other they are 2.5 % apart: work the candidate left on the GPU.
  add(0.990, false);
  add(0.990, false);
  add(1.015, true);
  EXPECT_NEAR(*rec.after_candidate_slowdown, 1.015 / 0.99 - 1, 1e-12);
  auto why = after_candidate_violation(rec);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("+2.5 %"), std::string::npos) << *why;
  EXPECT_NE(why->find("right after the candidate"), std::string::npos) << *why;
}

TEST(Interleave, TheRecordKeepsDriftClocksAndSpreadAndRoundTrips) {
  InterleaveRecord rec;
  rec.block_samples = 10;
  rec.drift_limit = 0.02;
  rec.reference_solo_median_ms = 2.0;
  rec.candidate_freeze = "cgroup";
  add_block(rec, TimingBlock{TimedSide::kReference, 0, 10, 2.02, 1980, 1965, {}});
  add_block(rec, TimingBlock{TimedSide::kCandidate, 0, 10, 2.50, 1965, 1950, {"sw_power_cap"}});
  EXPECT_NEAR(rec.max_abs_drift, 0.01, 1e-12);
  ASSERT_TRUE(rec.blocks[0].drift.has_value());
  EXPECT_FALSE(rec.blocks[1].drift.has_value());
  EXPECT_EQ(rec.sm_clock_mhz_min, 1950u);
  EXPECT_EQ(rec.sm_clock_mhz_max, 1980u);
  EXPECT_FALSE(rec.clock_spread);
  add_block(rec, TimingBlock{TimedSide::kReference, 10, 10, 1.99, 1860, 0, {}, true});
  EXPECT_TRUE(rec.clock_spread);  // 1980 - 1860 > 90 MHz; the unreadable 0 is ignored
  EXPECT_EQ(rec.sm_clock_mhz_min, 1860u);
  auto back = InterleaveRecord::from_json(Json::parse(rec.to_json().dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), rec.to_json());
  Json bad = rec.to_json();
  bad["blocks"][0]["side"] = "both";
  EXPECT_FALSE(InterleaveRecord::from_json(bad).ok());
}

// The couples of an evaluation: blocks in groups of four, each side's samples located by
// first_sample / samples in that side's list.
TEST(Interleave, CoupleSamplesGroupBlocksInFoursAndTakeEachSidesSamples) {
  constexpr TimedSide R = TimedSide::kReference, C = TimedSide::kCandidate;
  InterleaveRecord rec;
  // Couple 1: R C C R, couple 2: C R R C; 2 samples per block.
  const TimedSide order[] = {R, C, C, R, C, R, R, C};
  int next[2] = {0, 0};
  for (TimedSide side : order) {
    int& n = next[side == R ? 0 : 1];
    rec.blocks.push_back(TimingBlock{side, n, 2, 1.0});
    n += 2;
  }
  const std::vector<double> ref = {10, 11, 12, 13, 14, 15, 16, 17};
  const std::vector<double> cand = {20, 21, 22, 23, 24, 25, 26, 27};
  auto couples = couple_samples(rec, ref, cand);
  ASSERT_TRUE(couples.ok()) << couples.error().message;
  ASSERT_EQ(couples->size(), 2u);
  EXPECT_EQ((*couples)[0].reference_ns, (std::vector<double>{10, 11, 12, 13}));
  EXPECT_EQ((*couples)[0].candidate_ns, (std::vector<double>{20, 21, 22, 23}));
  EXPECT_EQ((*couples)[1].reference_ns, (std::vector<double>{14, 15, 16, 17}));
  EXPECT_EQ((*couples)[1].candidate_ns, (std::vector<double>{24, 25, 26, 27}));

  // A block past its side's samples, a partial couple, a couple of three reference blocks: errors.
  EXPECT_FALSE(couple_samples(rec, ref, {20, 21}).ok());
  InterleaveRecord partial = rec;
  partial.blocks.pop_back();
  EXPECT_FALSE(couple_samples(partial, ref, cand).ok());
  InterleaveRecord lopsided = rec;
  lopsided.blocks[1].side = R;
  EXPECT_FALSE(couple_samples(lopsided, ref, cand).ok());
  EXPECT_FALSE(couple_samples(InterleaveRecord{}, ref, cand).ok());
}

TEST(Interleave, CoupleSpeedupsRoundTrip) {
  InterleaveRecord rec;
  rec.block_samples = 10;
  rec.couple_speedups = {0.99, 1.01, 1.0};
  auto back = InterleaveRecord::from_json(Json::parse(rec.to_json().dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->couple_speedups, rec.couple_speedups);
  EXPECT_FALSE(InterleaveRecord{}.to_json().contains("couple_speedups"));
}

}  // namespace
}  // namespace ptxb
