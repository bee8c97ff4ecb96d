// compute-sanitizer report parsing. Golden inputs: real memcheck output of the self-contained
// runner (H200, 2026-11-29) in testdata/eval/sanitizer/; racecheck and failure cases are
// handcrafted in the same line format.
#include "analysis/sanitizer_report.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

std::string read_sample(const std::string& name) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/eval/sanitizer/" + name, 1u << 20);
  EXPECT_TRUE(text.ok()) << (text.ok() ? "" : text.error().message);
  return text.ok() ? *text : std::string();
}

SanitizerReport parse_ok(const std::string& text, const std::string& tool) {
  auto report = parse_sanitizer_output(text, tool);
  EXPECT_TRUE(report.ok()) << (report.ok() ? "" : report.error().message);
  return report.ok() ? *report : SanitizerReport{};
}

constexpr const char* kGemmKernel =
    "<unnamed>::gemm_tile_kernel(const __nv_bfloat16 *, const __nv_bfloat16 *, __nv_bfloat16 *, "
    "long, long, long)";

TEST(SanitizerReport, MemcheckOutOfBoundsWrite) {
  const SanitizerReport report = parse_ok(read_sample("memcheck_oob.txt"), "memcheck");
  EXPECT_EQ(report.tool, "memcheck");
  EXPECT_EQ(report.error_count, 6);
  EXPECT_TRUE(report.target_failed);
  ASSERT_EQ(report.findings.size(), 6u);

  const SanitizerFinding& write = report.findings[0];
  EXPECT_EQ(write.kind, "Invalid __global__ write of size 2 bytes");
  EXPECT_EQ(write.kernel, kGemmKernel);
  EXPECT_EQ(write.file, "kernel.cu");
  EXPECT_EQ(write.line, 89);
  EXPECT_EQ(write.thread, "(0,0,0)");
  EXPECT_EQ(write.block, "(0,0,0)");
  EXPECT_EQ(write.detail,
            "Access to 0x7f45e27c0000 is out of bounds; and is 3,283,877,377 bytes after the "
            "nearest allocation at 0x7f451ec00000 of size 512 bytes");
  EXPECT_FALSE(write.api_error);

  for (std::size_t i = 1; i < report.findings.size(); ++i) {
    EXPECT_TRUE(report.findings[i].api_error) << i;
    EXPECT_TRUE(report.findings[i].kernel.empty()) << i;
  }
  EXPECT_EQ(report.findings[1].kind,
            "cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on CUDA API "
            "call to cudaStreamSynchronize");
}

TEST(SanitizerReport, SummaryPutsTheKernelFindingFirstAndFoldsRepeats) {
  const SanitizerReport report = parse_ok(read_sample("memcheck_oob.txt"), "memcheck");
  const std::string api =
      "CUDA API error: cudaErrorLaunchFailure (error 719) due to \"unspecified launch failure\" on "
      "CUDA API call to ";
  EXPECT_EQ(report.summary(10),
            "memcheck: 6 errors; the program failed\n"
            "kernel.cu:89: Invalid __global__ write of size 2 bytes (thread (0,0,0) block "
            "(0,0,0)): out of bounds, 3,283,877,377 bytes after the nearest allocation of size "
            "512 bytes\n" +
                api + "cudaStreamSynchronize\n" + api + "cudaProfilerStop\n" + api +
                "cudaFree (3 times)\n");
  EXPECT_EQ(report.summary(1),
            "memcheck: 6 errors; the program failed\n"
            "kernel.cu:89: Invalid __global__ write of size 2 bytes (thread (0,0,0) block "
            "(0,0,0)): out of bounds, 3,283,877,377 bytes after the nearest allocation of size "
            "512 bytes\n"
            "... and 3 more\n");
}

TEST(SanitizerReport, CleanRun) {
  const SanitizerReport report = parse_ok(read_sample("memcheck_clean.txt"), "memcheck");
  EXPECT_EQ(report.error_count, 0);
  EXPECT_TRUE(report.findings.empty());
  EXPECT_FALSE(report.target_failed);
  EXPECT_EQ(report.summary(5), "memcheck: no errors\n");
}

TEST(SanitizerReport, ApiErrorPrintedFirstStillRanksLast) {
  const std::string text =
      "========= COMPUTE-SANITIZER\n"
      "========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA "
      "API call to cudaMemcpyAsync.\n"
      "=========     Host Frame: [0x2f2a7] in libcuda.so.1\n"
      "========= \n"
      "========= Invalid __shared__ read of size 4 bytes\n"
      "=========     at scale_kernel(float *)+0x70\n"
      "=========     by thread (5,0,0) in block (2,0,0)\n"
      "=========     Address 0x400 is out of bounds\n"
      "=========     Device Frame: load_tile(float *) in tile.cuh:12\n"
      "========= \n"
      "========= ERROR SUMMARY: 2 errors\n";
  const SanitizerReport report = parse_ok(text, "memcheck");
  ASSERT_EQ(report.findings.size(), 2u);
  EXPECT_TRUE(report.findings[0].api_error);
  EXPECT_TRUE(report.findings[0].detail.empty());  // backtrace frames are not detail
  const SanitizerFinding& read = report.findings[1];
  // No line info on the "at" line: the kernel comes from it, file:line from the device frame.
  EXPECT_EQ(read.kernel, "scale_kernel(float *)");
  EXPECT_EQ(read.file, "tile.cuh");
  EXPECT_EQ(read.line, 12);
  EXPECT_EQ(read.detail, "Address 0x400 is out of bounds");
  EXPECT_EQ(report.summary(5),
            "memcheck: 2 errors\n"
            "tile.cuh:12: Invalid __shared__ read of size 4 bytes (thread (5,0,0) block "
            "(2,0,0)): out of bounds\n"
            "CUDA API error: cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA "
            "API call to cudaMemcpyAsync\n");
}

// Handcrafted in racecheck's layout: the first access is on the message line, the second on the
// indented one, and the summary line is racecheck's own.
TEST(SanitizerReport, RacecheckHazard) {
  const std::string text =
      "========= COMPUTE-SANITIZER\n"
      "========= Error: Race reported between Write access at reduce_kernel(float *)+0x1f0 in "
      "reduce.cu:31\n"
      "=========     and Read access at reduce_kernel(float *)+0x230 in reduce.cu:35 [248 "
      "hazards]\n"
      "========= \n"
      "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";
  const SanitizerReport report = parse_ok(text, "racecheck");
  EXPECT_EQ(report.tool, "racecheck");
  EXPECT_EQ(report.error_count, 1);
  ASSERT_EQ(report.findings.size(), 1u);
  const SanitizerFinding& race = report.findings[0];
  EXPECT_EQ(race.kind, "Error: Race reported between Write access");
  EXPECT_EQ(race.kernel, "reduce_kernel(float *)");
  EXPECT_EQ(race.file, "reduce.cu");
  EXPECT_EQ(race.line, 31);
  EXPECT_EQ(race.detail,
            "and Read access at reduce_kernel(float *)+0x230 in reduce.cu:35 [248 hazards]");
  EXPECT_NE(report.summary(3).find("reduce.cu:31: Error: Race reported between Write access: "),
            std::string::npos)
      << report.summary(3);
}

TEST(SanitizerReport, MissingBannerOrSummaryIsAnError) {
  for (const std::string text :
       {"", "garbage\nmore garbage\n", "ptxbench-runner: self-contained call completed\n",
        "========= ERROR SUMMARY: 0 errors\n"}) {
    auto report = parse_sanitizer_output(text, "memcheck");
    ASSERT_FALSE(report.ok()) << text;
    EXPECT_NE(report.error().message.find("banner"), std::string::npos) << report.error().message;
  }
  // The tool died before its summary: not a clean run.
  auto cut = parse_sanitizer_output(
      "========= COMPUTE-SANITIZER\n========= Invalid __global__ read of size 4 bytes\n",
      "memcheck");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.error().message.find("ERROR SUMMARY"), std::string::npos);

  auto unreadable = parse_sanitizer_output(
      "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: many errors\n", "initcheck");
  ASSERT_FALSE(unreadable.ok());
  EXPECT_NE(unreadable.error().message.find("initcheck output:2:"), std::string::npos)
      << unreadable.error().message;
}

// memcheck stopped by the debug stage's time limit (H200, 2026-12-02, testdata/debug/
// shared_oob_write.cu: every thread of a large grid writes out of bounds): the banner and the
// first findings, no summary, the last message cut. kMayBeCut still locates the fault; the
// default refuses it, so no verdict can read a cut output as clean.
TEST(SanitizerReport, OutputCutByTheTimeLimitStillLocatesTheFault) {
  const std::string text = read_sample("memcheck_cut_shared_oob.txt");
  ASSERT_FALSE(parse_sanitizer_output(text, "memcheck").ok());
  auto report = parse_sanitizer_output(text, "memcheck", SanitizerEnd::kMayBeCut);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->error_count, -1);
  ASSERT_GE(report->findings.size(), 5u);
  const SanitizerFinding& first = report->findings.front();
  EXPECT_EQ(first.kind, "Invalid __shared__ write of size 4 bytes");
  EXPECT_EQ(first.file, "kernel.cu");
  EXPECT_EQ(first.line, 19);
  EXPECT_EQ(first.block, "(8,0,0)");
  // Without its banner it is still not sanitizer output.
  EXPECT_FALSE(
      parse_sanitizer_output(text.substr(text.find('\n') + 1), "memcheck", SanitizerEnd::kMayBeCut)
          .ok());
}

TEST(SanitizerReport, JsonShape) {
  const Json json = parse_ok(read_sample("memcheck_oob.txt"), "memcheck").to_json();
  EXPECT_EQ(json["tool"], "memcheck");
  EXPECT_EQ(json["error_count"], 6);
  EXPECT_EQ(json["target_failed"], true);
  ASSERT_EQ(json["findings"].size(), 6u);
  EXPECT_EQ(json["findings"][0]["file"], "kernel.cu");
  EXPECT_EQ(json["findings"][0]["line"], 89);
  EXPECT_EQ(json["findings"][0]["api_error"], false);
  EXPECT_EQ(json["findings"][5]["api_error"], true);
}

TEST(SanitizerReport, Argv) {
  EXPECT_EQ(
      sanitizer_argv("compute-sanitizer", "racecheck", {"ptxbench-runner", "--so", "k.so"}),
      (std::vector<std::string>{"compute-sanitizer", "--tool", "racecheck", "--error-exitcode", "9",
                                "--show-backtrace", "device", "ptxbench-runner", "--so", "k.so"}));
}

}  // namespace
}  // namespace ptxb
