// Golden tests: PTX emitted by nvcc 13.0 (--keep) for the test kernels.
#include "sass/ptx_families.h"

#include <gtest/gtest.h>

#include "golden_util.h"

namespace ptxb {
namespace {

int count(const PtxFamilyCounts& counts, const std::string& function, const std::string& prefix) {
  for (const auto& f : counts.functions)
    if (f.name == function) {
      auto found = f.counts.find(prefix);
      return found == f.counts.end() ? 0 : found->second;
    }
  return -1;
}

TEST(PtxFamilies, HopperKernelsPerEntry) {
  const auto counts = count_ptx_families(testing::read_golden("hopper_two_kernels.ptx"));
  // wgmma.fence, wgmma.mma_async, wgmma.commit_group, wgmma.wait_group
  EXPECT_EQ(count(counts, "_Z12wgmma_kernelPfmm", "wgmma."), 4);
  EXPECT_EQ(count(counts, "_Z12wgmma_kernelPfmm", "cp.async.bulk.tensor"), 0);
  EXPECT_EQ(count(counts, "_Z15tma_load_kernel14CUtensorMap_stPf", "cp.async.bulk.tensor"), 1);
  // init, arrive.expect_tx, try_wait (after the "wait:" label)
  EXPECT_EQ(count(counts, "_Z15tma_load_kernel14CUtensorMap_stPf", "mbarrier."), 3);
  EXPECT_EQ(counts.totals.at("wgmma."), 4);
}

TEST(PtxFamilies, PrefetchIsNotATensorCopy) {
  const auto counts = count_ptx_families(testing::read_golden("tma_prefetch_and_bulk_copy.ptx"));
  EXPECT_EQ(counts.totals.count("cp.async.bulk.tensor"), 0u);
  EXPECT_EQ(count(counts, "_Z16bulk_copy_kernelPKfPf", "mbarrier."), 3);
}

TEST(PtxFamilies, SetmaxnregAndTcgen05) {
  const auto hopper = count_ptx_families(testing::read_golden("perf_warnings.ptx"));
  EXPECT_EQ(count(hopper, "_Z17setmaxnreg_kernelPf", "setmaxnreg."), 1);
  const auto blackwell = count_ptx_families(testing::read_golden("tcgen05.ptx"));
  // alloc, relinquish_alloc_permit, ld, wait::ld, dealloc
  EXPECT_EQ(count(blackwell, "_Z11tmem_kernelPj", "tcgen05."), 5);
}

TEST(PtxFamilies, PredicatesLabelsAndComments) {
  const auto counts = count_ptx_families(
      ".visible .entry k(\n)\n{\n"
      "  // wgmma.mma_async in a comment does not count\n"
      "  @%p1 wgmma.fence.sync.aligned;\n"
      "  loop: mbarrier.try_wait.parity.shared::cta.b64 p, [r], 0;\n"
      "}\n"
      ".func (.param .b32 ret) helper(\n)\n{\n  "
      "tcgen05.commit.cta_group::1.mbarrier::arrive::one.b64 [r];\n}\n");
  EXPECT_EQ(count(counts, "k", "wgmma."), 1);
  EXPECT_EQ(count(counts, "k", "mbarrier."), 1);
  EXPECT_EQ(count(counts, "helper", "tcgen05."), 1);
  EXPECT_FALSE(counts.functions[1].is_entry);
}

}  // namespace
}  // namespace ptxb
