// Profiler hints from a raw page in Nsight Compute's documented CSV format. The input,
// testdata/eval/ncu/hints_synthetic.csv, is written by hand (no H200 recording of these metrics
// exists yet): two launches of an attention backward, the long one memory-bound with MIO
// throttle stalls and load bank conflicts. Every expected sentence is worked out from its cells.
#include "analysis/ncu_hints.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

const std::string kHints = std::string(PTXB_TESTDATA_DIR) + "/eval/ncu/hints_synthetic.csv";

std::vector<NcuLaunchMetrics> synthetic_launches() {
  auto text = read_file(kHints, 1 << 20);
  EXPECT_TRUE(text.ok());
  auto launches = parse_ncu_launches_csv(text.value(), "hints_synthetic.csv");
  EXPECT_TRUE(launches.ok()) << launches.error().message;
  return launches.ok() ? hint_metrics_of(*launches) : std::vector<NcuLaunchMetrics>{};
}

TEST(NcuHintsParse, EveryMetricColumnOfEachLaunchIncludingTheLaunchAttributes) {
  auto launches = synthetic_launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].kernel, "_Z9bwd_dq_dkPK13__nv_bfloat16");
  EXPECT_EQ(launches[0].values.at("gpu__time_duration.sum"), 2400000.0);
  EXPECT_EQ(launches[0].values.at("dram__bytes_read.sum"), 1250000000.0);
  EXPECT_EQ(launches[0].values.at("sm__maximum_warps_per_active_cycle_pct"), 18.75);
  EXPECT_EQ(launches[0].values.at("launch__registers_per_thread"), 168.0);  // a launch attribute
  EXPECT_EQ(launches[0].values.count("Block Size"), 0u);                    // not a metric column
  // "n/a" leaves the metric out instead of failing the whole page.
  EXPECT_EQ(launches[1].values.count(
                "smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio"),
            0u);
}

TEST(NcuHintsSentences, SpillsFirstThenTheLongestLaunchInFiveSentences) {
  auto sentences = profiler_hint_sentences(synthetic_launches(), {{"bwd_dq_dk", 96, 96}});
  ASSERT_EQ(sentences.size(), 5u);
  EXPECT_EQ(sentences[0],
            "ptxas spilled registers in bwd_dq_dk: 96 B of spill stores and 96 B of spill loads "
            "go through local memory; cut live registers (smaller accumulator tiles per thread) "
            "or give this warpgroup more with setmaxnreg.");
  // 2.4 of 3.0 ms: 80 %. SM 38.2 %, memory 81.4 % ≥ 60 %: memory-bound.
  EXPECT_EQ(sentences[1],
            "In bwd_dq_dk (80 % of the call's GPU time): Compute (SM) "
            "throughput is 38 % of peak and memory throughput 81 % of peak: the kernel is "
            "memory-bound; cut the bytes moved (reuse tiles in shared memory, TMA multicast "
            "across a cluster) before tuning the math.");
  // Stalls without selected/not_selected: 0.4 + 1.2 + 6.7 + 0.7 = 9.0; MIO 6.7/9 = 74 %,
  // long scoreboard 1.2/9 = 13 %.
  EXPECT_EQ(sentences[2],
            "74 % of warp stall cycles are MIO throttle (then long scoreboard 13 %): the "
            "shared-memory and special-function instruction queue is full: fewer, wider "
            "shared-memory accesses (ldmatrix, 16-byte vectors).");
  // Loads 1.2 M of 3 M wavefronts (40 %); stores 0 of 0.8 M stay unmentioned.
  EXPECT_EQ(sentences[3],
            "40 % of shared-memory load wavefronts are bank conflicts (1200000 of 3000000): "
            "swizzle or pad the shared-memory layout so that the 32 lanes of a warp hit "
            "distinct banks.");
  // Limits: registers 1, shared memory 2, warps 5, blocks 32 blocks per SM.
  EXPECT_EQ(sentences[4],
            "Achieved occupancy is 12 % of the SM's warps (theoretical 19 %), limited by "
            "registers to 1 block per SM (168 registers per thread).");
}

TEST(NcuHintsSentences, WithoutSpillsTheDramTrafficIsTheFifth) {
  auto sentences = profiler_hint_sentences(synthetic_launches(), {{"bwd_dq_dk", 0, 0}});
  ASSERT_EQ(sentences.size(), 5u);
  EXPECT_EQ(sentences[4],
            "DRAM traffic is 1.25 GB read and 310.0 MB written with an L2 hit rate of 55 %.");
  EXPECT_EQ(profiler_hint_sentences(synthetic_launches(), {}, 3).size(), 3u);
}

TEST(NcuHintsSentences, ALatencyBoundSingleLaunchIsNotNamed) {
  auto launches = synthetic_launches();
  ASSERT_EQ(launches.size(), 2u);
  auto sentences = profiler_hint_sentences({launches[1]}, {});
  ASSERT_EQ(sentences.size(), 4u);  // no bank conflicts
  EXPECT_EQ(sentences[0],
            "Compute (SM) throughput is 20 % of peak and memory throughput 35 % of peak: "
            "neither is near its peak, so the kernel waits on latency; keep more work in "
            "flight (deeper pipeline, overlap of loads, MMAs and the epilogue).");
  // 2.0 of 2.3 stall cycles: 87 %; the others are under 10 % each.
  EXPECT_EQ(sentences[1],
            "87 % of warp stall cycles are long scoreboard: waiting on global or local memory: "
            "load further ahead (more pipeline stages, TMA) or remove spills.");
  EXPECT_EQ(sentences[2],
            "Achieved occupancy is 60 % of the SM's warps (theoretical 100 %), limited by "
            "registers to 8 blocks per SM (40 registers per thread).");
  EXPECT_EQ(sentences[3],
            "DRAM traffic is 120.0 MB read and 8.0 MB written with an L2 hit rate of 10 %.");
  EXPECT_TRUE(profiler_hint_sentences({}, {}).empty());
}

// The attention forward rung 1 on the H200: 59 % SM and 39 % memory, between the thresholds.
TEST(NcuHintsSentences, BetweenTheThresholdsTheSentenceStillAdvises) {
  NcuLaunchMetrics launch;
  launch.kernel = "_Z10fwd_kernelv";
  launch.values = {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", 59.2},
                   {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", 39.4}};
  auto sentences = profiler_hint_sentences({launch}, {});
  ASSERT_EQ(sentences.size(), 1u);
  EXPECT_EQ(sentences[0],
            "Compute (SM) throughput is 59 % of peak and memory throughput 39 % of peak: neither "
            "unit is the limit yet; what holds the warps back is in the stall reasons (overlap "
            "the softmax or epilogue with the MMAs, fewer barriers per tile).");
}

}  // namespace
}  // namespace ptxb
