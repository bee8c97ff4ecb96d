// Rendering of the golden runs: markdown tables in the paper's layout, CSV columns, JSON.
// The numbers come from tests/metrics/metrics_test.cc, where each is worked out by hand.
#include <gtest/gtest.h>

#include "core/strings.h"
#include "report/html_report.h"
#include "report/report.h"

namespace ptxb {
namespace {

const std::string kRuns = std::string(PTXB_TESTDATA_DIR) + "/runs";

class ReportGolden : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = load_run_dirs({kRuns + "/golden_gemm", kRuns + "/golden_mha"});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    trajectories_ = std::move(loaded).value();
    options_.turn_limits = {1, 2, 4};
    groups_ = compute_metrics(trajectories_, options_);
  }
  std::string csv(const std::string& name) const {
    for (const auto& [file, contents] : render_csv_files(groups_, trajectories_, options_))
      if (file == name) return contents;
    ADD_FAILURE() << "no " << name;
    return "";
  }

  std::vector<Trajectory> trajectories_;
  MetricsOptions options_;
  std::vector<GroupMetrics> groups_;
};

TEST_F(ReportGolden, MarkdownPutsTargetInstructionFigureFirstAndUnrestrictedBelow) {
  std::string text = render_markdown(groups_, options_);
  // gemm pooled turn correctness: inst 1/5, 3/10, 4/20 = 0.200 / 0.300 / 0.200 over ≤1/≤2/≤4;
  // unrestricted 2/5, 5/10, 6/20 = 0.400 / 0.500 / 0.300 on the next row, in brackets.
  std::string first = "| model-x | gemm_n7168_k5120_M8192 | sm_90a | 5 | 0.200 / 0.300 / 0.200 |";
  std::string second = "|  |  |  |  | (0.400 / 0.500 / 0.300) |";
  auto at = text.find(first);
  ASSERT_NE(at, std::string::npos) << text;
  auto next_line = text.find('\n', at) + 1;
  EXPECT_EQ(text.compare(next_line, second.size(), second), 0) << text;
  // Best speedup: inst 1.0 at every limit; unrestricted 1.0 / 1.5 / 1.5.
  EXPECT_NE(text.find("| 1.000 / 1.000 / 1.000 |"), std::string::npos);
  EXPECT_NE(text.find("(1.000 / 1.500 / 1.500)"), std::string::npos);
  // mha never measured a speedup: "—" at every limit.
  EXPECT_NE(text.find("(— / — / —)"), std::string::npos);
  // The variant table carries the spread rows.
  EXPECT_NE(text.find("| model-x | gemm_n7168_k5120_M8192 | sm_90a | mean |"), std::string::npos);
  EXPECT_NE(text.find("| cluster-multicast |"), std::string::npos);
}

TEST_F(ReportGolden, MarkdownOutcomeRowSumsToAllTurnSlots) {
  std::string text = render_markdown(groups_, options_);
  // gemm ≤4 pooled: no_code 1, forbidden 1, compile 1, memory 1, runtime 0, timeout 0,
  // numerical 1, integrity 1, correct 6, infra 1, missing 7 (= 20 slots), unknown checks 1.
  EXPECT_NE(text.find("| model-x | gemm_n7168_k5120_M8192 | sm_90a | 1 | 1 | 1 | 1 | 0 | 0 | 1 | "
                      "1 | 6 | 1 | 7 | 1 |"),
            std::string::npos)
      << text;
}

TEST_F(ReportGolden, CsvColumnsFollowTheReferenceImplementation) {
  std::vector<std::string> lines = split_lines(csv("correctness_rate.csv"));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "model,arch,workload,workload_name,definition,exp_dir,turn_limit,n_trajectories,"
            "correct,correctness_rate");
  // gemm ≤1: 2 of 5 trajectories have a correct turn.
  EXPECT_EQ(lines[1],
            "model-x,sm_90a,94920358-01a8-4c5b-9209-3103fd490e94,gemm_n7168_k5120_M8192,"
            "gemm_n7168_k5120," +
                kRuns + "/golden_gemm,1,5,2,0.4");

  std::string best = csv("best_speedup.csv");
  EXPECT_NE(best.find("/golden_gemm,4,5,1.5\n"), std::string::npos) << best;
  EXPECT_NE(best.find("/golden_mha,4,2,\n"), std::string::npos) << best;  // none → empty

  // ≤4 gemm: 2 trajectories correct with dynamic_present (2/5), 6 correct turns, 1 unknown.
  std::string inst = csv("arch_instruction_correctness.csv");
  EXPECT_NE(inst.find("/golden_gemm,4,5,2,0.4,6,1\n"), std::string::npos) << inst;

  std::vector<std::string> tokens = split_lines(csv("reasoning_tokens_vs_performance.csv"));
  EXPECT_EQ(tokens[0],
            "model,arch,workload,workload_name,definition,exp_dir,variant,trajectory_id,turn,"
            "reasoning_tokens,correctness,speedup,speedup_low,speedup_high,target_instructions,"
            "correct_with_arch,status,energy_ratio,also_reference_speedup");
  EXPECT_EQ(tokens.size(), 1u + 13u + 4u);  // header + every turn of both runs
  bool found = false;
  for (const std::string& line : tokens)
    found |= ends_with(line, ",no-hint,t0,2,200,1,0.8,,,dynamic_present,1,PASSED,,");
  EXPECT_TRUE(found);
}

// --also-reference: a turn's speedup over the second reference, in the last column; the record
// carries it through turns.jsonl (absent, and the cell empty, without it).
TEST_F(ReportGolden, CsvCarriesTheSecondReferencesSpeedupWherePresent) {
  TurnRecord& turn = trajectories_.at(0).turns.at(0);
  turn.also_reference_speedup = 0.875;
  auto back = TurnRecord::from_json(turn.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->also_reference_speedup, 0.875);
  EXPECT_FALSE(trajectories_.at(0).turns.at(1).to_json().contains("also_reference_speedup"));
  bool found = false;
  for (const std::string& line : split_lines(csv("reasoning_tokens_vs_performance.csv")))
    found |= ends_with(line, ",0.875");
  EXPECT_TRUE(found);
}

TEST_F(ReportGolden, MetricsCsvHoldsCurvesPerScope) {
  std::string metrics = csv("metrics.csv");
  // ≤2 gemm Fast_1.0: pooled 1/10, cluster-multicast 1/6, mean over variants 1/12.
  EXPECT_NE(metrics.find(",2,pooled,fast_p,1,0.1\n"), std::string::npos);
  EXPECT_NE(metrics.find(",2,variant:cluster-multicast,fast_p,1," + fmt::format("{}", 1.0 / 6)),
            std::string::npos);
  EXPECT_NE(metrics.find(",2,mean,fast_p,1," + fmt::format("{}", 1.0 / 12)), std::string::npos);
}

TEST_F(ReportGolden, JsonCarriesEveryLimitAndVariant) {
  Json json = report_to_json(groups_, options_);
  ASSERT_EQ(json["groups"].size(), 2u);
  const Json& gemm = json["groups"][0];
  EXPECT_EQ(gemm["turn_limits"].size(), 3u);
  EXPECT_EQ(gemm["turn_limits"][0]["over_variants"]["inst_best_speedup"]["mean"], 0.5);
  EXPECT_TRUE(gemm["turn_limits"][0]["per_variant"]["no-hint"]["inst_best_speedup"].is_null());
  EXPECT_EQ(gemm["turn_limits"][2]["pooled"]["outcomes"]["missing"], 7);
}

}  // namespace
}  // namespace ptxb

namespace ptxb {
namespace {

TEST(ReportHtml, SelfContainedWithOneSvgPerPlotAndBands) {
  auto loaded = load_run_dirs({kRuns + "/golden_gemm", kRuns + "/golden_mha"});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  MetricsOptions options;
  options.turn_limits = {1, 2, 4};
  std::vector<GroupMetrics> groups = compute_metrics(loaded.value(), options);
  std::string html = render_html(groups, loaded.value(), options);
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto at = html.find(needle); at != std::string::npos; at = html.find(needle, at + 1)) ++n;
    return n;
  };
  // Two groups × five plots (Fast^Inst_p, Fast_p, correct turns and speedup by turn, outcomes).
  EXPECT_EQ(count("<svg "), 10u);
  // Bands only where there are several prompt variants: gemm has two, mha one.
  EXPECT_EQ(count("<path class=\"band\""), 2u);
  EXPECT_EQ(count("<polyline class=\"pooled\""), 4u);
  // Nothing fetched from elsewhere: no URL, script or external stylesheet (no viewer asked).
  EXPECT_EQ(count("http"), 0u);
  EXPECT_EQ(count("<script"), 0u);
  EXPECT_EQ(count("<link"), 0u);
  // The matrix: one cell per model × task × arch.
  EXPECT_EQ(count("<td class=\"cell\""), 2u);
  // The tables are embedded with the golden values (pooled gemm inst turn correctness).
  EXPECT_NE(html.find("<td>0.200 / 0.300 / 0.200</td>"), std::string::npos);
  EXPECT_EQ(count("<table "), 4u);  // the matrix and the three metric tables
  // gemm turn 2 is correct in 3 of 5 trajectories (no-hint t0, cm t0, cm t2).
  EXPECT_NE(html.find("<title>turn 2: 3/5</title>"), std::string::npos);
  // Each plot's visible heading is its title, with the task's name.
  EXPECT_NE(html.find("font-weight=\"bold\">gemm_n7168_k5120: Fast_p (≤4 turns)</text>"),
            std::string::npos);
  // Every plot with axes labels both; the 1× line is labelled.
  EXPECT_EQ(count("data-axis=\"y\""), 8u);
  EXPECT_EQ(count("data-axis=\"x\""), 10u);
  EXPECT_EQ(count("1× = library"), 2u);
}

TEST(ReportHtml, FastPIsAStepFunction) {
  // One trajectory, one correct turn at 1.1× with the target instructions: Fast^Inst_p (the
  // first plot) is 1 for p < 1.1 and 0 above, so the pooled line holds 1 up to p = 1.2 and
  // drops there vertically.
  auto turns = parse_turns_jsonl(
      R"({"model":"m","arch":"sm_90a","definition":"d","workload":"w","variant":"v",)"
      R"("trajectory":"t0","turn":1,"status":"PASSED","speedup":1.1,)"
      R"("target_instructions":"dynamic_present"})"
      "\n",
      "inline");
  ASSERT_TRUE(turns.ok()) << turns.error().message;
  Trajectory trajectory{turns->front().key, "w", "", turns.value()};
  MetricsOptions options;
  options.turn_limits = {1};
  options.ps = {1.0, 1.2, 1.5};
  std::vector<Trajectory> all = {trajectory};
  std::string html = render_html(compute_metrics(all, options), all, options);
  const std::string prefix = "<polyline class=\"pooled\" points=\"";
  auto at = html.find(prefix);
  ASSERT_NE(at, std::string::npos);
  at += prefix.size();
  std::string points = html.substr(at, html.find('"', at) - at);
  std::vector<std::string> xy = split(points, ' ');
  // p = 1.0 (x 52), 1.2 (x 52 + 354 · 0.4 = 193.6), 1.5 (x 406); y 24 is 1, y 194 is 0: five
  // vertices, the drop at p = 1.2 vertical.
  ASSERT_EQ(xy.size(), 5u) << points;
  EXPECT_EQ(xy[0], "52.00,24.00");
  EXPECT_EQ(xy[1], "193.60,24.00");
  EXPECT_EQ(xy[2], "193.60,194.00");
  EXPECT_EQ(xy[4], "406.00,194.00");
  EXPECT_EQ(html.find("class=\"band\""), std::string::npos);  // one variant: no band
}

TEST(ReportHtml, NoTrajectoriesStillMakesAPage) {
  std::string html = render_html({}, {}, MetricsOptions{});
  EXPECT_NE(html.find("No trajectories."), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
