// --ptx-dedup's filter (adapt/ptx_leakage.h) with a PTX source that maps kernel names to the
// nvcc goldens of testdata/adapt/ptx/ (ptx_normalize_test.cc says what each one is): the
// compile stage itself is the real one only on the CLI path.
#include <gtest/gtest.h>

#include "adapt/ptx_leakage.h"
#include "core/fs.h"
#include "run_dir_fixture.h"

namespace ptxb::adapt {
namespace {

// "golden:NAME" compiles to testdata/adapt/ptx/NAME.ptx; anything else is a compile error.
Result<std::string> golden_ptx_of(const std::string& task, const std::string& source) {
  EXPECT_EQ(task, "gemm_n7168_k5120");
  if (!source.starts_with("golden:")) return make_error("compile", "{}: does not compile", source);
  return read_file(std::string(PTXB_TESTDATA_DIR) + "/adapt/ptx/" + source.substr(7) + ".ptx",
                   1u << 20);
}

SftExample row(const std::string& id, const std::string& fixed, const std::string& wrong = "") {
  SftExample e;
  e.id = id;
  e.kind = wrong.empty() ? "kernelgen" : "fixit";
  e.task = "gemm_n7168_k5120";
  e.fixed_kernel = fixed;
  e.wrong_kernel = wrong;
  return e;
}

TEST(PtxLeakage, DropsRowsWhoseKernelCompilesToATestKernelsPtx) {
  const std::string tmp = make_temp_directory("ptxb-ptx-leakage").value();
  testing::write_fixture_run(tmp + "/heldout", "gemm_n7168_k5120",
                             {{"t0", 1, "PASSED", "golden:base"},
                              {"t1", 1, "PASSED", "golden:fence"},
                              {"t2", 1, "COMPILE_ERROR", "void run() { oops( }"}});
  auto result = drop_ptx_collisions(
      {row("renamed-copy", "golden:renamed"), row("tile16", "golden:tile16"),
       row("fixit-from-test", "golden:tile16", "golden:base"), row("no-ptx", "void run() {}")},
      {tmp + "/heldout"}, golden_ptx_of);
  ASSERT_TRUE(result.ok()) << result.error().message;
  std::vector<std::string> kept;
  for (const SftExample& e : result->kept) kept.push_back(e.id);
  EXPECT_EQ(kept, (std::vector<std::string>{"tile16", "no-ptx"}));
  ASSERT_EQ(result->drops.size(), 2u);
  const std::string base_file = tmp + "/heldout/turns/student__gemm_n7168_k5120__base__t0/turn1.cu";
  EXPECT_EQ(result->drops[0]["id"], "renamed-copy");
  EXPECT_EQ(result->drops[0]["collides_with"], base_file);
  // A Fixit row is checked by its failing kernel too: a test kernel must not be the prompt.
  EXPECT_EQ(result->drops[1]["id"], "fixit-from-test");
  EXPECT_EQ(result->drops[1]["collides_with"], base_file);
  const Json counts{{"test_kernels", 2}, {"test_kernels_without_ptx", 1}, {"rows_without_ptx", 1}};
  EXPECT_EQ(result->counts, counts);
  remove_tree(tmp);
}

}  // namespace
}  // namespace ptxb::adapt
