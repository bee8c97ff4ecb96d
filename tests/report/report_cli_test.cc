// End-to-end: `ptxbench report` on the golden runs as a user runs it.
#include <gtest/gtest.h>

#include "../cli/cli_test_util.h"
#include "core/fs.h"
#include "core/json_io.h"

namespace ptxb {
namespace {

const std::string kReportCliRuns = std::string(PTXB_TESTDATA_DIR) + "/runs";

TEST(ReportCli, TablesForTwoRunDirectories) {
  ProcessResult result =
      testing::run_cli({"report", kReportCliRuns + "/golden_gemm", kReportCliRuns + "/golden_mha"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  // Default limits ≤1/≤4/≤8, but no trajectory has more than 4 turns (and these runs have no
  // plan): ≤8 would count 4 never-planned turns per trajectory, so the windows are ≤1/≤4 and
  // gemm's pooled inst turn correctness reads 1/5, 4/20.
  EXPECT_NE(result.stdout_text.find("| 5 | 0.200 / 0.200 |"), std::string::npos)
      << result.stdout_text;
  EXPECT_NE(result.stdout_text.find("turn correctness ≤1/≤4 |"), std::string::npos);
  EXPECT_NE(result.stdout_text.find("mha_with_lse_d128_S4096"), std::string::npos);
}

TEST(ReportCli, TurnLimitsStopAtTheRunsPlannedTurns) {
  // The replay model's H200 run: 2 planned turns, every one PASSED with the target instructions.
  // Before, ≤8 printed 0.250 here.
  ProcessResult result = testing::run_cli(
      {"report", std::string(PTXB_SOURCE_DIR) + "/bench/results/replay-paper-h100"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_NE(result.stdout_text.find("| replay | gemm_n7168_k5120_M8192 | sm_90a | 1 | "
                                    "1.000 / 1.000 |"),
            std::string::npos)
      << result.stdout_text;
  EXPECT_EQ(result.stdout_text.find("0.250"), std::string::npos);
}

TEST(ReportCli, JsonWithCustomLimitsCsvAndHtmlFiles) {
  auto dir = make_temp_directory("ptxb-report-test");
  ASSERT_TRUE(dir.ok());
  ProcessResult result = testing::run_cli(
      {"report", kReportCliRuns + "/golden_gemm", "--json", "--turn-limits", "4,2", "--fast-p",
       "1.0", "--csv", dir.value() + "/csv", "--html", dir.value() + "/report.html"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  auto json = parse_json(result.stdout_text, "report --json");
  ASSERT_TRUE(json.ok()) << json.error().message;
  EXPECT_EQ(json.value()["turn_limits"], Json::parse("[2, 4]"));  // sorted
  const Json& k2 = json.value()["groups"][0]["turn_limits"][0]["pooled"];
  EXPECT_EQ(k2["n_turns"], 10);
  EXPECT_EQ(k2["fast_p"][0]["value"], 0.1);  // the 1.5 of 10 slots
  for (const char* name :
       {"correctness_rate.csv", "best_speedup.csv", "arch_instruction_correctness.csv",
        "reasoning_tokens_vs_performance.csv", "metrics.csv"})
    EXPECT_TRUE(path_exists(dir.value() + "/csv/" + name)) << name;
  auto html = read_file(dir.value() + "/report.html", 1 << 20);
  ASSERT_TRUE(html.ok()) << html.error().message;
  EXPECT_NE(html.value().find("<path class=\"band\""), std::string::npos);
  remove_tree(dir.value());
}

TEST(ReportCli, BadInputsFailWithOneLine) {
  ProcessResult missing = testing::run_cli({"report", kReportCliRuns + "/no_such_run"});
  EXPECT_EQ(missing.exit_code, 2);  // CLI11's existing-directory check: usage error
  ProcessResult no_turns = testing::run_cli({"report", std::string(PTXB_TESTDATA_DIR)});
  EXPECT_EQ(no_turns.exit_code, 1);
  EXPECT_NE(no_turns.stderr_text.find("turns.jsonl"), std::string::npos) << no_turns.stderr_text;
  ProcessResult bad_limit =
      testing::run_cli({"report", kReportCliRuns + "/golden_gemm", "--turn-limits", "0"});
  EXPECT_EQ(bad_limit.exit_code, 2);
}

}  // namespace
}  // namespace ptxb
