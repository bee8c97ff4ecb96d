// The debug stage's report: the sanitizer's most precise fault (on the H200 memcheck golden),
// which line the report points at, and the compact text the model reads.
#include "analysis/debug_report.h"

#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

std::string debug_testdata(const std::string& path) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/" + path, 1 << 20);
  EXPECT_TRUE(text.ok()) << path;
  return text.ok() ? text.value() : "";
}

std::size_t occurrences_of(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
    ++count;
  return count;
}

// kernel.cu as the evaluator compiled variant 3 of the test GEMM: memcheck points at line 89.
std::string debug_oob_kernel() {
  return "#define PTXB_TEST_VARIANT 3\n" + debug_testdata("eval/gemm_variants.cu");
}

DebugRecord record_from_goldens() {
  DebugRecord record;
  auto sanitizer =
      parse_sanitizer_output(debug_testdata("eval/sanitizer/memcheck_oob.txt"), "memcheck");
  EXPECT_TRUE(sanitizer.ok());
  if (sanitizer.ok()) record.fault = most_precise_fault(*sanitizer);
  auto gdb = parse_cuda_gdb_output(debug_testdata("eval/cuda_gdb/documented_illegal_address.txt"));
  EXPECT_TRUE(gdb.ok());
  if (gdb.ok()) record.core_dump = CoreDumpRecord{"exception", 4096, *gdb};
  return record;
}

TEST(DebugFault, TheKernelFindingBeforeTheApiErrorsItCaused) {
  auto report =
      parse_sanitizer_output(debug_testdata("eval/sanitizer/memcheck_oob.txt"), "memcheck");
  ASSERT_TRUE(report.ok());
  auto fault = most_precise_fault(*report);
  ASSERT_TRUE(fault.has_value());
  EXPECT_EQ(fault->kind, "Invalid __global__ write of size 2 bytes");
  EXPECT_EQ(fault->line, 89);
  EXPECT_EQ(fault->block, "(0,0,0)");
  EXPECT_EQ(fault->address, "0x7f45e27c0000");
  EXPECT_FALSE(fault->api_error);
  // Only API errors left: the first of them.
  SanitizerReport api_only = *report;
  api_only.findings.erase(api_only.findings.begin());
  auto api = most_precise_fault(api_only);
  ASSERT_TRUE(api.has_value());
  EXPECT_TRUE(api->api_error);
  EXPECT_NE(api->kind.find("cudaStreamSynchronize"), std::string::npos) << api->kind;
  EXPECT_FALSE(most_precise_fault(SanitizerReport{}).has_value());
}

TEST(DebugLocation, SanitizerThenCudaGdbThenTheLaunch) {
  DebugRecord record = record_from_goldens();
  record.launch = LaunchSite{"gemm_tile_kernel", 110};
  EXPECT_EQ(choose_location(record, "kernel.cu")->line, 89);
  EXPECT_EQ(choose_location(record, "kernel.cu")->source, "sanitizer");
  record.fault.reset();
  // cuda-gdb's innermost kernel.cu frame (store_tile at 42), not the kernel's own (89).
  EXPECT_EQ(choose_location(record, "kernel.cu")->line, 42);
  EXPECT_EQ(choose_location(record, "kernel.cu")->source, "cuda-gdb");
  record.core_dump->cuda_gdb->frames.clear();
  EXPECT_EQ(choose_location(record, "kernel.cu")->line, 89);  // the exception's own line
  record.core_dump.reset();
  EXPECT_EQ(choose_location(record, "kernel.cu")->source, "launch");
  record.launch.reset();
  EXPECT_FALSE(choose_location(record, "kernel.cu").has_value());
}

TEST(DebugSummary, EachLocationOnceWithItsSourceLines) {
  DebugRecord record = record_from_goldens();
  record.points_at = choose_location(record, "kernel.cu");
  record.notes.push_back("cuda-gdb: example note");
  const std::string source = debug_oob_kernel();
  const std::string text = render_debug_summary(record, source, "kernel.cu");
  EXPECT_TRUE(starts_with(text, "points at kernel.cu:89 (from sanitizer)\n")) << text;
  EXPECT_NE(text.find("kernel.cu:89: Invalid __global__ write of size 2 bytes in "
                      "<unnamed>::gemm_tile_kernel (block (0,0,0), thread (0,0,0)), address "
                      "0x7f45e27c0000"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cuda-gdb (core dump on exception): Warp Illegal Address"),
            std::string::npos);
  // Line 89 is shown once (the sanitizer's and frame #1's), line 42 once.
  EXPECT_EQ(occurrences_of(text, "> 89 |"), 1u) << text;
  EXPECT_EQ(occurrences_of(text, "> 42 |"), 1u) << text;
  EXPECT_NE(text.find("note: cuda-gdb: example note\n"), std::string::npos);
  // A budget of one excerpt: only the first location gets its lines.
  const std::string short_text = render_debug_summary(record, source, "kernel.cu", 1);
  EXPECT_EQ(occurrences_of(short_text, "\n> "), 1u) << short_text;
}

TEST(DebugRecord, RoundTripsThroughJson) {
  DebugRecord record = record_from_goldens();
  record.launch = LaunchSite{"", 7};
  record.points_at = choose_location(record, "kernel.cu");
  record.notes = {"a", "b"};
  record.summary = "text";
  record.elapsed_ms = 12.5;
  auto back = DebugRecord::from_json(record.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), record.to_json());
  EXPECT_FALSE(DebugRecord::from_json(Json{{"notes", Json::array()}}).ok());  // no summary
  Json bad = record.to_json();
  bad["points_at"]["line"] = "x";
  EXPECT_FALSE(DebugRecord::from_json(bad).ok());
}

}  // namespace
}  // namespace ptxb
