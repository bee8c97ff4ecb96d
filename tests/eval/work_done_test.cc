#include "eval/work_done.h"

#include <gtest/gtest.h>

#include "analysis/ncu_work.h"
#include "core/fs.h"

namespace ptxb {
namespace {

// The paper's GEMM: M=8192, N=7168, K=5120 -> 2*M*N*K = 601,295,421,440 flops.
constexpr double kGemmFlops = 2.0 * 8192 * 7168 * 5120;

NcuLaunch launch_with(const std::string& name, std::map<std::string, double> metrics) {
  NcuLaunch launch;
  launch.name = name;
  launch.metrics = std::move(metrics);
  return launch;
}

// Every counter of ncu_work.h at zero, then `overrides`.
std::map<std::string, double> counters(std::map<std::string, double> overrides) {
  std::map<std::string, double> all;
  for (const auto* list : {&tensor_work_counters(), &fma_work_counters(), &dram_work_counters()})
    for (const WorkCounter& c : *list) all[std::string(c.metric)] = 0;
  for (auto& [k, v] : overrides) all[k] = v;
  return all;
}

TEST(WorkDone, SumsWeightedCountersOverEveryLaunch) {
  // Two launches (a split-K GEMM and its reduction).
  const std::vector<NcuLaunch> launches = {
      launch_with("_Z5splitv", counters({{"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 1000},
                                         {"dram__bytes_read.sum", 64},
                                         {"dram__bytes_write.sum", 32}})),
      launch_with("_Z6reducev",
                  counters({{"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 10},
                            {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", 5},
                            {"dram__bytes_read.sum", 8}}))};
  auto measure = work_from_launches(launches);
  ASSERT_TRUE(measure.ok()) << measure.error().message;
  EXPECT_DOUBLE_EQ(measure->tensor_flops, 1000);  // the counter counts FLOPs already
  EXPECT_DOUBLE_EQ(measure->fma_flops, 20 + 20);  // FFMA x 2 + HFMA2 x 4
  EXPECT_DOUBLE_EQ(measure->dram_bytes, 64 + 32 + 8);
}

TEST(WorkDone, AMissingRequiredCounterIsAnErrorNotZeroWork) {
  auto metrics = counters({});
  metrics.erase("dram__bytes_write.sum");
  auto measure = work_from_launches({launch_with("_Z1kv", metrics)});
  ASSERT_FALSE(measure.ok());
  EXPECT_NE(measure.error().message.find("dram__bytes_write.sum"), std::string::npos);
  EXPECT_NE(measure.error().message.find("_Z1kv"), std::string::npos);
  // An optional counter (a data type this GPU's counters do not name) counts as zero.
  auto without_fp8 = counters({{"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 5}});
  without_fp8.erase("sm__ops_path_tensor_src_fp8_dst_fp32.sum");
  auto partial = work_from_launches({launch_with("_Z1kv", without_fp8)});
  ASSERT_TRUE(partial.ok()) << partial.error().message;
  EXPECT_DOUBLE_EQ(partial->tensor_flops, 5);
}

TEST(WorkDone, TheFullProblemPassesAndAQuarterOfItIsInsufficient) {
  WorkMeasure full;
  full.tensor_flops = kGemmFlops * 1.02;  // tile padding: a little more than the model
  auto passed = judge_work_done(kGemmFlops, 0, full);
  ASSERT_TRUE(passed.ok());
  EXPECT_FALSE(passed->insufficient);
  EXPECT_NEAR(passed->fraction, 1.02, 1e-12);

  // A kernel that computes one K-slice in four (a rank-reduced shortcut) and a few FMAs.
  WorkMeasure quarter;
  quarter.tensor_flops = kGemmFlops / 4;
  quarter.fma_flops = 1e6;
  auto hacked = judge_work_done(kGemmFlops, 0, quarter);
  ASSERT_TRUE(hacked.ok());
  EXPECT_TRUE(hacked->insufficient);
  EXPECT_NEAR(hacked->fraction, (kGemmFlops / 4 + 1e6) / kGemmFlops, 1e-12);
  // Both numbers are in the sentence a model reads: 150.3 GFLOP measured, 601.3 needed.
  EXPECT_NE(hacked->detail.find("150.3 GFLOP"), std::string::npos) << hacked->detail;
  EXPECT_NE(hacked->detail.find("601.3 GFLOP"), std::string::npos) << hacked->detail;
}

TEST(WorkDone, CausalAttentionAtTheTriangleIsEnough) {
  // mha_with_lse_d128_causal: B*H = 64 heads (e.g.), S = 4096, D = 128: the model counts
  // S*(S+1)/2 pairs. A kernel computing whole diagonal tiles does a little more; one that
  // skips every other key block of the triangle does half and fails at the threshold's edge.
  const double pairs = 64.0 * 4096 * 4097 / 2;
  const double model = 2 * 2 * pairs * 128;
  WorkMeasure tiles;
  tiles.tensor_flops = model * 1.016;
  EXPECT_FALSE(judge_work_done(model, 0, tiles)->insufficient);
  WorkMeasure half;
  half.tensor_flops = model * 0.49;
  EXPECT_TRUE(judge_work_done(model, 0, half)->insufficient);
}

TEST(WorkDone, NoModelIsNotJudged) {
  EXPECT_FALSE(judge_work_done(0, 0, WorkMeasure{}).ok());
}

TEST(WorkDone, RoundTripsThroughJson) {
  WorkMeasure m;
  m.tensor_flops = 3e11;
  m.fma_flops = 2e9;
  m.dram_bytes = 1.5e8;
  auto record = judge_work_done(kGemmFlops, 1.2e8, m);
  ASSERT_TRUE(record.ok());
  auto back = WorkDoneRecord::from_json(record->to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), record->to_json());
}

}  // namespace
}  // namespace ptxb

namespace ptxb {
namespace {

std::string raw_page(const std::string& name) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/eval/ncu/" + name, 1u << 20);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

// Raw pages recorded on the H200 (2026-12-02, `ptxbench eval --save-profile`): the expert GEMM
// (rung 3, wgmma) does the problem's FLOPs on the tensor pipe; the suite's skip_k_loose does a
// quarter of 2·1024·1024·1024 as FFMA.
TEST(WorkDoneOnH200Pages, TheExpertGemmDoesItsFlopsAndTheSkipperAQuarter) {
  auto gemm = parse_ncu_launches_csv(raw_page("raw_h200_gemm_expert.csv"), "gemm");
  ASSERT_TRUE(gemm.ok()) << gemm.error().message;
  auto gemm_work = work_from_launches(*gemm);
  ASSERT_TRUE(gemm_work.ok()) << gemm_work.error().message;
  auto judged = judge_work_done(2.0 * 8192 * 7168 * 5120, 0, *gemm_work);
  ASSERT_TRUE(judged.ok());
  EXPECT_NEAR(judged->fraction, 1.0, 0.01);
  EXPECT_FALSE(judged->insufficient);
  EXPECT_GT(gemm_work->dram_bytes, 1e8);  // A, B and C are 235 MB; part of them sits in L2

  auto skipper = parse_ncu_launches_csv(raw_page("raw_h200_skip_k_loose.csv"), "skip");
  ASSERT_TRUE(skipper.ok()) << skipper.error().message;
  auto skipper_work = work_from_launches(*skipper);
  ASSERT_TRUE(skipper_work.ok()) << skipper_work.error().message;
  EXPECT_EQ(skipper_work->tensor_flops, 0);
  auto hack = judge_work_done(2.0 * 1024 * 1024 * 1024, 0, *skipper_work);
  ASSERT_TRUE(hack.ok());
  EXPECT_NEAR(hack->fraction, 0.258, 0.005);
  EXPECT_TRUE(hack->insufficient);
}

}  // namespace
}  // namespace ptxb
