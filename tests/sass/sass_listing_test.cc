// The instruction-by-instruction SASS listing (sass/sass_listing.h) the profile stage maps
// Nsight Compute's per-address counters onto.
#include "sass/sass_listing.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

constexpr const char* kTwoArchitectures = R"(
Fatbin elf code:
================
arch = sm_90a
	code for sm_90a
		Function : _Z4gemmv
	.headerflags	@"EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */
                                                                          /* 0x000fe20000000800 */
        /*0010*/              @!P0 UTMALDG.2D [UR8], [UR4] ;              /* 0x00000008040075b4 */
                                                                          /* 0x0001e20008019000 */
        /*0020*/                   HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0 ;  /* 0x0 */
        /*0030*/                   EXIT ;                                 /* 0x000000000000794d */
		..........
	code for sm_80
		Function : _Z4gemmv
        /*0000*/                   MOV R1, c[0x0][0x28] ;                 /* 0x0 */
)";

TEST(SassListing, KeepsEachInstructionOfTheArchitectureWithItsOffset) {
  auto listing = parse_sass_listing(kTwoArchitectures, "sm_90a", "k.sass");
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->size(), 1u);
  const std::vector<SassInstruction>& gemm = listing->at("_Z4gemmv");
  ASSERT_EQ(gemm.size(), 4u);
  EXPECT_EQ(gemm[0].offset, 0u);
  EXPECT_EQ(gemm[0].text, "LDC R1, c[0x0][0x28]");
  EXPECT_EQ(gemm[1].offset, 0x10u);
  EXPECT_EQ(gemm[1].text, "@!P0 UTMALDG.2D [UR8], [UR4]");
  EXPECT_EQ(gemm[2].text, "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0");
  EXPECT_EQ(gemm[3].offset, 0x30u);
  // Without an architecture, the same function twice is an error, not a silent choice.
  auto both = parse_sass_listing(kTwoArchitectures, "", "k.sass");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.error().message.find("listed twice"), std::string::npos);
  EXPECT_FALSE(parse_sass_listing(kTwoArchitectures, "sm_100a", "k.sass").ok());
  EXPECT_FALSE(parse_sass_listing("not a listing", "", "k.sass").ok());
}

TEST(SassListing, OffsetsOutOfOrderAreAnError) {
  const std::string text =
      "\tcode for sm_90a\n\t\tFunction : k\n        /*0010*/ NOP ;\n        /*0000*/ EXIT ;\n";
  auto listing = parse_sass_listing(text, "sm_90a", "k.sass");
  ASSERT_FALSE(listing.ok());
  EXPECT_NE(listing.error().message.find("k.sass:4"), std::string::npos) << listing.error().message;
}

TEST(SassListing, ReadsARealCuobjdumpListing) {
  // cuobjdump -sass of bench/ncu_passes/probe.cu (nvcc 13.0, sm_90a, captured on the H200).
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/eval/ncu/probe_h200.sass", 1u << 20);
  ASSERT_TRUE(text.ok());
  auto listing = parse_sass_listing(*text, "sm_90a", "probe_h200.sass");
  ASSERT_TRUE(listing.ok()) << listing.error().message;
  ASSERT_EQ(listing->size(), 3u);
  const auto& work = listing->at("_Z4workILi1EEvPfi");
  EXPECT_EQ(work.front().offset, 0u);
  EXPECT_EQ(work[7].text, "@P0 EXIT");
  EXPECT_EQ(work.back().offset, (work.size() - 1) * 16);  // 16-byte instructions, none skipped
}

}  // namespace
}  // namespace ptxb
