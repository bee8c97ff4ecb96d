// Golden tests: real `cuobjdump -sass` listings (cuobjdump 13.2) of the test kernels.
#include "sass/sass_analysis.h"

#include <gtest/gtest.h>

#include "golden_util.h"

namespace ptxb {
namespace {

std::vector<SassKernel> parse_golden(const std::string& name) {
  auto kernels = parse_cuobjdump_sass(testing::read_golden(name), name);
  EXPECT_TRUE(kernels.ok()) << (kernels.ok() ? "" : kernels.error().message);
  return kernels.ok() ? *kernels : std::vector<SassKernel>{};
}

int family(const SassKernel* kernel, const std::string& name) {
  if (!kernel) return -1;
  auto found = kernel->family_counts.find(name);
  return found == kernel->family_counts.end() ? 0 : found->second;
}

TEST(SassFamilies, OpcodeClassification) {
  EXPECT_EQ(sass_family_of("HGMMA"), "GMMA");
  EXPECT_EQ(sass_family_of("IGMMA"), "GMMA");
  EXPECT_EQ(sass_family_of("UTMALDG"), "TMA");
  EXPECT_EQ(sass_family_of("UTMASTG"), "TMA");
  EXPECT_EQ(sass_family_of("UTMAREDG"), "TMA");
  EXPECT_EQ(sass_family_of("UTMAPF"), std::nullopt);
  EXPECT_EQ(sass_family_of("UTMACCTL"), std::nullopt);
  EXPECT_EQ(sass_family_of("UBLKCP"), std::nullopt);
  EXPECT_EQ(sass_family_of("UTCHMMA"), "UTC");
  EXPECT_EQ(sass_family_of("UTCATOMSWS"), "UTC");
  EXPECT_EQ(sass_family_of("LDTM"), "LDTM");
  EXPECT_EQ(sass_family_of("STTM"), "STTM");
  EXPECT_EQ(sass_family_of("FFMA"), std::nullopt);
  EXPECT_EQ(sass_family_of("LDL"), std::nullopt);
}

TEST(SassAnalysis, FamiliesAttributedToTheirKernel) {
  const auto kernels = parse_golden("hopper_two_kernels.sass");
  ASSERT_EQ(kernels.size(), 2u);
  const SassSummary summary = summarize_sass(kernels, "sm_90a");
  const SassKernel* wgmma = summary.find("_Z12wgmma_kernelPfmm");
  const SassKernel* tma = summary.find("_Z15tma_load_kernel14CUtensorMap_stPf");
  EXPECT_EQ(family(wgmma, "GMMA"), 1);
  EXPECT_EQ(family(wgmma, "TMA"), 0);
  EXPECT_EQ(family(tma, "TMA"), 1);
  EXPECT_EQ(family(tma, "GMMA"), 0);
  EXPECT_EQ(tma->arch, "sm_90a");
  EXPECT_EQ(tma->opcode_histogram.at("UTMALDG"), 1);
  EXPECT_TRUE(summary.target_present);
  EXPECT_EQ(summary.qualifying_families_found, (std::vector<std::string>{"GMMA", "TMA"}));
}

TEST(SassAnalysis, PlainFfmaKernelHasNoTargetFamily) {
  const auto kernels = parse_golden("ffma.sass");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_TRUE(kernels[0].family_counts.empty());
  EXPECT_GE(kernels[0].opcode_histogram.count("FFMA"), 1u);
  EXPECT_FALSE(summarize_sass(kernels, "sm_90a").target_present);
}

TEST(SassAnalysis, PrefetchAndBulkCopyAreNotTma) {
  const auto kernels = parse_golden("tma_prefetch_and_bulk_copy.sass");
  const SassSummary summary = summarize_sass(kernels, "sm_90a");
  const SassKernel* prefetch = summary.find("_Z15prefetch_kernel14CUtensorMap_st");
  const SassKernel* copy = summary.find("_Z16bulk_copy_kernelPKfPf");
  ASSERT_NE(prefetch, nullptr);
  ASSERT_NE(copy, nullptr);
  EXPECT_EQ(prefetch->opcode_histogram.at("UTMAPF"), 1);
  EXPECT_EQ(copy->opcode_histogram.at("UBLKCP"), 1);
  EXPECT_TRUE(prefetch->family_counts.empty());
  EXPECT_TRUE(copy->family_counts.empty());
  EXPECT_FALSE(summary.target_present);
}

TEST(SassAnalysis, BlackwellTensorMemory) {
  const auto kernels = parse_golden("tcgen05.sass");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].arch, "sm_100a");
  EXPECT_EQ(family(&kernels[0], "UTC"),
            3);  // alloc retry loop (2x UTCATOMSWS.FIND_AND_SET) + dealloc
  EXPECT_EQ(family(&kernels[0], "LDTM"), 1);
  const SassSummary blackwell = summarize_sass(kernels, "sm_100a");
  EXPECT_TRUE(blackwell.target_present);
  EXPECT_EQ(blackwell.qualifying_families_found, (std::vector<std::string>{"UTC", "LDTM"}));
}

TEST(SassAnalysis, HopperFamiliesDoNotQualifyOnBlackwell) {
  const SassSummary summary = summarize_sass(parse_golden("hopper_two_kernels.sass"), "sm_100a");
  EXPECT_FALSE(summary.target_present);
  EXPECT_EQ(summary.family_totals.at("GMMA"), 1);
}

TEST(SassAnalysis, LocalMemoryTraffic) {
  const SassSummary summary = summarize_sass(parse_golden("perf_warnings.sass"), "sm_90a");
  const SassKernel* spill = summary.find("_Z12spill_kernelPKiPf");
  ASSERT_NE(spill, nullptr);
  EXPECT_GT(spill->local_stores, 0);  // the 2 KiB local array
  EXPECT_GT(spill->local_loads, 0);
}

TEST(SassAnalysis, PredicatedInstructionCountsItsOpcode) {
  auto kernels = parse_cuobjdump_sass(
      "\t\tFunction : k\n"
      "        /*0040*/               @!P0 UTMASTG.2D [UR4], [UR6] ;      /* 0x0000000604007 */\n"
      "                                                                     /* 0x000fe20008000 "
      "*/\n",
      "inline");
  ASSERT_TRUE(kernels.ok());
  EXPECT_EQ(kernels->at(0).instruction_count, 1);
  EXPECT_EQ(kernels->at(0).family_counts.at("TMA"), 1);
}

TEST(SassAnalysis, EmptyDumpIsAnError) {
  auto kernels = parse_cuobjdump_sass("\nFatbin elf code:\n", "empty.sass");
  ASSERT_FALSE(kernels.ok());
  EXPECT_NE(kernels.error().message.find("empty.sass"), std::string::npos);
}

TEST(SassAnalysis, JsonRoundTrip) {
  const SassSummary summary = summarize_sass(parse_golden("hopper_two_kernels.sass"), "sm_90a");
  const Json json = sass_summary_to_json(summary);
  EXPECT_EQ(sass_summary_to_json(sass_summary_from_json(json)), json);
}

}  // namespace
}  // namespace ptxb
