// Golden tests: real `-Xptxas -v` output of ptxas 13.0 for the kernels in testdata/compile/kernels.
#include "sass/ptxas_report.h"

#include <gtest/gtest.h>

#include "golden_util.h"

namespace ptxb {
namespace {

TEST(PtxasReport, TwoHopperKernels) {
  const PtxasReport report =
      parse_ptxas_report(testing::read_golden("hopper_two_kernels.ptxas.log"));
  ASSERT_EQ(report.kernels.size(), 2u);
  const auto* tma = report.find("_Z15tma_load_kernel14CUtensorMap_stPf");
  ASSERT_NE(tma, nullptr);
  EXPECT_EQ(tma->arch, "sm_90a");
  EXPECT_TRUE(tma->is_entry);
  EXPECT_EQ(tma->registers, 10);
  EXPECT_EQ(tma->barriers, 1);
  EXPECT_EQ(tma->shared_bytes, 1032);  // 16x16 floats + the 8-byte mbarrier
  EXPECT_EQ(tma->spill_store_bytes, 0);
  const auto* wgmma = report.find("_Z12wgmma_kernelPfmm");
  ASSERT_NE(wgmma, nullptr);
  EXPECT_EQ(wgmma->registers, 30);
  EXPECT_EQ(wgmma->shared_bytes, 0);
  EXPECT_TRUE(report.diagnostics.empty());
}

TEST(PtxasReport, PerformanceLossWarningsAndStack) {
  const PtxasReport report = parse_ptxas_report(testing::read_golden("perf_warnings.ptxas.log"));
  // C7508 names no function; C7514 names the wgmma kernel; C7519 is informational.
  std::vector<std::string> codes;
  for (const auto& d : report.diagnostics) codes.push_back(d.code);
  EXPECT_EQ(codes, (std::vector<std::string>{"C7519", "C7514", "C7508"}));
  const auto unattributed = report.unattributed();
  ASSERT_EQ(unattributed.size(), 1u);
  EXPECT_EQ(unattributed[0].code, "C7508");
  EXPECT_TRUE(unattributed[0].performance_loss);
  EXPECT_NE(unattributed[0].message.find("'setmaxnreg' ignored"), std::string::npos);

  const auto* wgmma = report.find("_Z18wgmma_spill_kernelPfmm");
  ASSERT_NE(wgmma, nullptr);
  ASSERT_EQ(wgmma->diagnostics.size(), 2u);
  EXPECT_EQ(wgmma->diagnostics[1].code, "C7514");
  EXPECT_TRUE(wgmma->diagnostics[1].performance_loss);
  EXPECT_FALSE(wgmma->diagnostics[0].performance_loss);

  const auto* spill = report.find("_Z12spill_kernelPKiPf");
  ASSERT_NE(spill, nullptr);
  EXPECT_EQ(spill->stack_frame_bytes, 2048);
  EXPECT_EQ(spill->cumulative_stack_bytes, 2048);
  EXPECT_EQ(spill->registers, 64);

  // The non-inlined device function gets "Function properties" but no "Compiling entry".
  const auto* helper = report.find("_Z6opaquef");
  ASSERT_NE(helper, nullptr);
  EXPECT_FALSE(helper->is_entry);
  EXPECT_EQ(report.kernels.size(), 4u);
}

// The advisories the compile output and the profiler hints show: "Potential Performance Loss"
// ones and an injected warpgroup.wait (C7517, measured to cost speed); not an injected
// warpgroup.arrive (C7519, a fence).
TEST(PtxasReport, SlowsTheKernel) {
  const PtxasReport report = parse_ptxas_report(testing::read_golden("perf_warnings.ptxas.log"));
  ASSERT_EQ(report.diagnostics.size(), 3u);
  EXPECT_FALSE(slows_the_kernel(report.diagnostics[0]));  // C7519
  EXPECT_TRUE(slows_the_kernel(report.diagnostics[1]));   // C7514
  EXPECT_TRUE(slows_the_kernel(report.diagnostics[2]));   // C7508
  const PtxasReport waited = parse_ptxas_report(
      "ptxas info    : (C7517) warpgroup.wait is injected in around line 639 by compiler to "
      "allow use of registers defined by GMMA in function '_Z3dqkPf'\n"
      "ptxas info    : Compiling entry function '_Z3dqkPf' for 'sm_90a'\n");
  ASSERT_EQ(waited.diagnostics.size(), 1u);
  EXPECT_EQ(waited.diagnostics[0].code, "C7517");
  EXPECT_FALSE(waited.diagnostics[0].performance_loss);  // ptxas's own words do not say so
  EXPECT_TRUE(slows_the_kernel(waited.diagnostics[0]));
  const auto* kernel = waited.find("_Z3dqkPf");
  ASSERT_NE(kernel, nullptr);
  EXPECT_EQ(kernel->diagnostics.size(), 1u);
}

TEST(PtxasReport, BlackwellKernel) {
  const PtxasReport report = parse_ptxas_report(testing::read_golden("tcgen05.ptxas.log"));
  ASSERT_EQ(report.kernels.size(), 1u);
  EXPECT_EQ(report.kernels[0].arch, "sm_100a");
  EXPECT_EQ(report.kernels[0].registers, 12);
  EXPECT_EQ(report.kernels[0].shared_bytes, 4);
}

TEST(PtxasReport, SpillsLocalMemoryAndConstantBanks) {
  // Format of older ptxas versions and of kernels that spill (hand-written in the same format).
  const PtxasReport report = parse_ptxas_report(
      "ptxas info    : Compiling entry function '_Z1kv' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z1kv\n"
      "    24 bytes stack frame, 16 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 392 bytes cmem[0], 8 "
      "bytes lmem\n"
      "ptxas warning : Registers are spilled to local memory in function '_Z1kv', 16 bytes spill "
      "stores\n");
  ASSERT_EQ(report.kernels.size(), 1u);
  const auto& k = report.kernels[0];
  EXPECT_EQ(k.registers, 255);
  EXPECT_EQ(k.spill_store_bytes, 16);
  EXPECT_EQ(k.spill_load_bytes, 12);
  EXPECT_EQ(k.local_bytes, 8);
  EXPECT_EQ(k.shared_bytes, 4096);
  ASSERT_EQ(k.constant_bytes.size(), 1u);
  EXPECT_EQ(k.constant_bytes[0].first, "cmem[0]");
  EXPECT_EQ(k.constant_bytes[0].second, 392);
  ASSERT_EQ(k.diagnostics.size(), 1u);  // the warning names the kernel
}

TEST(PtxasReport, JsonRoundTrip) {
  const PtxasReport report = parse_ptxas_report(testing::read_golden("perf_warnings.ptxas.log"));
  const Json json = ptxas_report_to_json(report);
  EXPECT_EQ(ptxas_report_to_json(ptxas_report_from_json(json)), json);
}

TEST(PtxasReport, IgnoresNonPtxasLines) {
  const PtxasReport report =
      parse_ptxas_report("kernel.cu(3): warning #550-D: variable set but never used\n");
  EXPECT_TRUE(report.kernels.empty());
  EXPECT_TRUE(report.diagnostics.empty());
}

// Found by fuzz_tool_output (issue 21): a kernel name with bytes that are not UTF-8 (the
// candidate chooses its names) made the compile result's JSON dump throw.
TEST(PtxasReport, InvalidUtf8InTheLogStillDumpsAsJson) {
  const std::string log =
      "ptxas info    : Compiling entry function '_Z3k\x90\xff' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z3k\x90\xff\n"
      "ptxas info    : Used 32 registers\n";
  const PtxasReport report = parse_ptxas_report(log);
  ASSERT_EQ(report.kernels.size(), 1u);
  EXPECT_EQ(report.kernels[0].name, "_Z3k\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_NO_THROW((void)ptxas_report_to_json(report).dump());
}

}  // namespace
}  // namespace ptxb
