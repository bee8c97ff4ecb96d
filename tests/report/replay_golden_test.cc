// Compatibility with what the current release writes: a real run directory (the replay of
// paper-h100 on an H200, bench/results/replay-paper-h100, kernel sources left out) must load in
// `ptxbench report` and give the metrics recorded before the result types became typed
// (testdata/golden/replay-paper-h100/report.json, `ptxbench report RUN --json`), and every
// evaluation result it holds must read back and write out unchanged.
#include <gtest/gtest.h>

#include <filesystem>

#include "eval/eval_types.h"
#include "metrics/metrics.h"
#include "metrics/turn_record.h"
#include "report/report.h"

namespace ptxb {
namespace {

const std::string kGolden = std::string(PTXB_TESTDATA_DIR) + "/golden/replay-paper-h100";
const std::string kRun = kGolden + "/run";

// run_dirs name where the run was loaded from: not part of what is compared.
Json without_run_dirs(Json report) {
  for (auto& group : report["groups"]) group.erase("run_dirs");
  return report;
}

std::vector<std::string> turn_files() {
  std::vector<std::string> files;
  for (const auto& dir : std::filesystem::directory_iterator(kRun + "/turns"))
    for (const auto& file : std::filesystem::directory_iterator(dir.path()))
      if (file.path().extension() == ".json") files.push_back(file.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ReplayGolden, ReportComputesTheRecordedMetrics) {
  auto trajectories = load_run_dirs({kRun});
  ASSERT_TRUE(trajectories.ok()) << trajectories.error().message;
  EXPECT_EQ(trajectories->size(), 5u);
  MetricsOptions options;
  options.turn_limits = {1, 4, 8};
  options.ps = {0, 0.5, 0.8, 1, 1.2, 1.5, 2};
  const Json report = report_to_json(compute_metrics(*trajectories, options), options);
  auto golden = read_json_file(kGolden + "/report.json");
  ASSERT_TRUE(golden.ok()) << golden.error().message;
  EXPECT_EQ(without_run_dirs(report).dump(1), without_run_dirs(*golden).dump(1));
}

TEST(ReplayGolden, EveryEvaluationResultRoundTripsUnchanged) {
  const auto files = turn_files();
  ASSERT_EQ(files.size(), 10u);
  for (const auto& path : files) {
    SCOPED_TRACE(path);
    auto detail = read_json_file(path);
    ASSERT_TRUE(detail.ok()) << detail.error().message;
    auto result = EvalResult::from_json((*detail)["eval"]);
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result->status, PtxbStatus::kPassed);
    // Same document out as in: nothing the release wrote is dropped or changed.
    EXPECT_EQ(result->to_json().dump(1), (*detail)["eval"].dump(1));
    auto record = TurnRecord::from_json((*detail)["record"]);
    ASSERT_TRUE(record.ok()) << record.error().message;
  }
}

TEST(ReplayGolden, AMissingRequiredFieldIsAnErrorNamingItsPath) {
  auto detail = read_json_file(turn_files().front());
  ASSERT_TRUE(detail.ok()) << detail.error().message;
  Json eval = (*detail)["eval"];
  eval["workloads"][0].erase("status");
  auto result = EvalResult::from_json(eval);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("$.workloads[0].status: missing required field"),
            std::string::npos)
      << result.error().message;

  eval = (*detail)["eval"];
  eval["workloads"][0]["candidate_timing"].erase("median_ms");
  result = EvalResult::from_json(eval);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("$.workloads[0].candidate_timing.median_ms"),
            std::string::npos)
      << result.error().message;

  eval = (*detail)["eval"];
  eval["target_instructions"]["verdict"] = 3;
  result = EvalResult::from_json(eval);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("$.target_instructions.verdict: expected a string"),
            std::string::npos)
      << result.error().message;
}

}  // namespace
}  // namespace ptxb
