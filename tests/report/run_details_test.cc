// Provenance and per-turn details from the replay model's recorded H200 run
// (bench/results/replay-paper-h100: plan.json, summary.json, turns/<trajectory>/turnN.json), and
// the turn-limit rule that keeps a report's windows inside the run's turns.
#include "report/run_details.h"

#include <gtest/gtest.h>

#include "../support/tree_paths.h"
#include "metrics/metrics.h"

namespace ptxb {
namespace {

std::string replay_run() {
  return tree::source_dir() + "/bench/results/replay-paper-h100";
}

TEST(RunProvenance, ReadsPlanSummaryAndTheGpuOfTheTurns) {
  auto loaded = load_run_dirs({replay_run()});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  RunProvenance run = load_provenance(replay_run(), loaded.value());
  EXPECT_EQ(run.harness_version, "0.1.0+fef2eb6");
  EXPECT_EQ(run.planned_turns, 2);
  EXPECT_EQ(run.suite, "paper-h100");
  EXPECT_EQ(run.date, "2026-11-29T18:02:31Z");
  EXPECT_EQ(run.gpu, "NVIDIA H200");
  EXPECT_EQ(run.recorded_turns, 10);
  EXPECT_EQ(run.gpu_skipped_turns, 0);
  EXPECT_TRUE(run.notes.empty());
  EXPECT_EQ(run_turn_count({run}, loaded.value()), 2);
}

TEST(RunProvenance, AGoldenDirectoryWithoutPlanFallsBackToTheRecords) {
  std::string dir = std::string(PTXB_TESTDATA_DIR) + "/runs/golden_gemm";
  auto loaded = load_run_dirs({dir});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  RunProvenance run = load_provenance(dir, loaded.value());
  EXPECT_FALSE(run.planned_turns);
  EXPECT_TRUE(run.harness_version.empty());
  EXPECT_EQ(run.notes.size(), 1u);
  EXPECT_EQ(run_turn_count({run}, loaded.value()), 4);  // gemm's longest trajectory
}

TEST(TurnLimits, NeverBeyondTheRunsTurns) {
  // The paper's ≤1/≤4/≤8 on a 2-turn run: ≤8 would count 6 unplanned turns per trajectory as
  // failures (turn correctness 0.25 where every turn passed).
  EXPECT_EQ(limits_within_run({1, 4, 8}, 2), (std::vector<int>{1, 2}));
  EXPECT_EQ(limits_within_run({1, 4, 8}, 8), (std::vector<int>{1, 4, 8}));
  EXPECT_EQ(limits_within_run({8, 4, 1}, 5), (std::vector<int>{1, 4, 5}));
  EXPECT_EQ(limits_within_run({4, 2}, 0), (std::vector<int>{2, 4}));  // unknown: as asked
}

TEST(TurnDetails, VerdictsFeedbackCountsAndAResolvedKernel) {
  auto loaded = load_run_dirs({replay_run()});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const Trajectory* gemm = nullptr;
  for (const Trajectory& trajectory : loaded.value())
    if (trajectory.key.definition == "gemm_n7168_k5120") gemm = &trajectory;
  ASSERT_NE(gemm, nullptr);
  int resolved = 0;
  auto details = load_turn_details(*gemm, [&](const Json& ref) -> Result<std::string> {
    ++resolved;
    EXPECT_EQ(ref["kernel_file"], fmt::format("turn{}.cu", resolved));
    return std::string("not the evaluated kernel\n");
  });
  ASSERT_EQ(details.size(), 2u);
  EXPECT_EQ(resolved, 2);
  const TurnDetail& second = details.at(2);
  EXPECT_EQ(second.eval_message, "correct; 0.7312 ms vs reference 0.7313 ms: speedup 1.000x");
  EXPECT_EQ(second.compile_status, "OK");
  EXPECT_EQ(second.inst_verdict, "dynamic_present");
  ASSERT_EQ(second.families.size(), 2u);
  EXPECT_EQ(second.families[0].family, "GMMA");
  EXPECT_EQ(second.families[0].static_count, 4);
  EXPECT_EQ(second.families[0].executed, 4587520);
  EXPECT_EQ(second.families[1].family, "TMA");
  EXPECT_EQ(second.families[1].executed, 344064);
  EXPECT_EQ(second.feedback.rfind("## Compile\nstatus: OK\n", 0), 0u);
  EXPECT_EQ(second.started, "2026-11-29T17:59:26Z");
  // The resolver's text is not what was evaluated: the sha256 check refuses it.
  EXPECT_TRUE(second.source.empty());
  EXPECT_NE(second.source_note.find("sha256 differs"), std::string::npos) << second.source_note;

  auto failing = load_turn_details(*gemm, [](const Json&) -> Result<std::string> {
    return make_error("report", "no solutions folder");
  });
  EXPECT_NE(failing.at(1).source_note.find("no solutions folder"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
