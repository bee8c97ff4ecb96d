// Source excerpts and launch inference on a real fault: the H200 memcheck golden
// (testdata/eval/sanitizer/memcheck_oob.txt) points at kernel.cu:89, the out-of-bounds write of
// testdata/eval/gemm_variants.cu built as variant 3 (the evaluator prepends the variant's
// #define, so kernel.cu line 89 is the file's line 88).
#include "analysis/source_context.h"

#include <gtest/gtest.h>

#include "analysis/sanitizer_report.h"
#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

std::string testdata_text(const std::string& path) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/" + path, 1 << 20);
  EXPECT_TRUE(text.ok()) << path;
  return text.ok() ? text.value() : "";
}

std::string oob_kernel() {
  return "#define PTXB_TEST_VARIANT 3\n" + testdata_text("eval/gemm_variants.cu");
}

TEST(SourceExcerpt, TheSanitizersLineWithFourLinesAround) {
  auto report =
      parse_sanitizer_output(testdata_text("eval/sanitizer/memcheck_oob.txt"), "memcheck");
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_FALSE(report->findings.empty());
  const SanitizerFinding& fault = report->findings.front();
  ASSERT_EQ(fault.file, "kernel.cu");
  ASSERT_EQ(fault.line, 89);
  std::string excerpt = source_excerpt(oob_kernel(), fault.line);
  std::vector<std::string> lines = split_lines(excerpt);
  ASSERT_EQ(lines.size(), 9u) << excerpt;
  EXPECT_TRUE(starts_with(lines[0], "  85 | ")) << lines[0];
  EXPECT_EQ(lines[4], "> 89 |     C[M * N + (int64_t{1} << 31)] = __float2bfloat16(1.0f);");
  EXPECT_TRUE(starts_with(lines[8], "  93 | ")) << lines[8];
}

TEST(SourceExcerpt, ClipsAtTheFileEdgesAndRejectsLinesOutside) {
  EXPECT_EQ(source_excerpt("a\nb\nc\n", 1, 4), "> 1 | a\n  2 | b\n  3 | c\n");
  EXPECT_EQ(source_excerpt("a\nb\nc\n", 3, 1), "  2 | b\n> 3 | c\n");
  EXPECT_EQ(source_excerpt("a\n", 0), "");
  EXPECT_EQ(source_excerpt("a\n", 2), "");
}

TEST(LaunchInference, TheNearestLaunchAboveTheSyncOrOfTheNamedKernel) {
  std::string source =
      "__global__ void pre(float* x) {}\n"                // 1
      "__global__ void main_kernel(float* x) {}\n"        // 2
      "void run(float* x, cudaStream_t s) {\n"            // 3
      "  pre<<<1, 32, 0, s>>>(x);\n"                      // 4
      "  // main_kernel<<<old launch>>>\n"                // 5: a comment, not a launch
      "  cudaLaunchKernelEx(&config, main_kernel, x);\n"  // 6
      "  cudaStreamSynchronize(s);\n"                     // 7
      "}\n";                                              // 8
  EXPECT_EQ(infer_launch_line(source, 7), 6);
  EXPECT_EQ(infer_launch_line(source, 5), 4);
  EXPECT_EQ(infer_launch_line(source, 0), 6);  // the sync was outside the file: from the end
  EXPECT_EQ(infer_launch_line(source, 0, "<unnamed>::pre(float *)"), 4);
  EXPECT_FALSE(infer_launch_line(source, 3).has_value());
  EXPECT_FALSE(infer_launch_line(source, 0, "other_kernel").has_value());
  // The golden fault's kernel: its one launch in run().
  EXPECT_EQ(infer_launch_line(oob_kernel(), 0,
                              "<unnamed>::gemm_tile_kernel(const __nv_bfloat16 *, long)"),
            151);
}

}  // namespace
}  // namespace ptxb
