// cuda-gdb's batch output over a core dump. The sample,
// testdata/eval/cuda_gdb/documented_illegal_address.txt, is written in the format of NVIDIA's
// cuda-gdb documentation: the development machines have no cuda-gdb, so recorded goldens from
// the H200 are still to come (docs/eval.md).
#include "analysis/cuda_gdb_report.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

std::string sample() {
  auto text = read_file(
      std::string(PTXB_TESTDATA_DIR) + "/eval/cuda_gdb/documented_illegal_address.txt", 1 << 20);
  EXPECT_TRUE(text.ok());
  return text.ok() ? text.value() : "";
}

TEST(CudaGdbReport, ExceptionPcFocusAndFrames) {
  auto report = parse_cuda_gdb_output(sample());
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->exception, "Warp Illegal Address");
  EXPECT_EQ(report->pc, "0x7f8e4ab7a430");
  EXPECT_EQ(report->exception_file, "kernel.cu");
  EXPECT_EQ(report->exception_line, 89);
  EXPECT_EQ(report->block, "(3,1,0)");
  EXPECT_EQ(report->thread, "(17,0,0)");
  ASSERT_EQ(report->frames.size(), 2u);
  EXPECT_EQ(report->frames[0].function, "store_tile");
  EXPECT_EQ(report->frames[0].line, 42);
  EXPECT_EQ(report->frames[0].launch, "");
  EXPECT_EQ(report->frames[1].function, "gemm_tile_kernel");
  EXPECT_EQ(report->frames[1].launch, "<<<(56,64,1),(256,1,1)>>>");
  EXPECT_EQ(report->frames[1].file, "kernel.cu");
  EXPECT_EQ(report->frames[1].line, 89);
}

TEST(CudaGdbReport, RendersFramesWithTheirSourceLines) {
  auto report = parse_cuda_gdb_output(sample());
  ASSERT_TRUE(report.ok());
  std::string source;
  for (int i = 1; i <= 100; ++i) source += "line " + std::to_string(i) + "\n";
  std::string text = report->render(source);
  EXPECT_EQ(text.rfind("CUDA exception: Warp Illegal Address (block (3,1,0), thread (17,0,0)) at "
                       "kernel.cu:89\n#0 store_tile at kernel.cu:42\n  38 | line 38\n",
                       0),
            0u)
      << text;
  EXPECT_NE(text.find("> 42 | line 42\n"), std::string::npos) << text;
  EXPECT_NE(text.find("#1 gemm_tile_kernel<<<(56,64,1),(256,1,1)>>> at kernel.cu:89\n"),
            std::string::npos);
  EXPECT_NE(text.find("> 89 | line 89\n"), std::string::npos);
}

TEST(CudaGdbReport, ALiveStopAndAnUnreadableDump) {
  auto live = parse_cuda_gdb_output(
      "Thread 1 \"ptxbench-runner\" received signal CUDA_EXCEPTION_14, Warp Illegal Address.\n"
      "[Switching focus to CUDA kernel 0, grid 1, block (0,0,0), thread (5,0,0), device 0]\n"
      "0x00007fffd3a4c6c0 in k<<<(1,1,1),(32,1,1)>>> () at kernel.cu:7\n"
      "#0  0x00007fffd3a4c6c0 in k<<<(1,1,1),(32,1,1)>>> () at kernel.cu:7\n");
  ASSERT_TRUE(live.ok()) << live.error().message;
  EXPECT_EQ(live->exception, "Warp Illegal Address");
  EXPECT_EQ(live->thread, "(5,0,0)");
  ASSERT_EQ(live->frames.size(), 1u);
  EXPECT_EQ(live->frames[0].function, "k");
  auto unreadable = parse_cuda_gdb_output("Failed to open GPU coredump: No such file\n");
  ASSERT_FALSE(unreadable.ok());
  EXPECT_NE(unreadable.error().message.find("no CUDA exception"), std::string::npos);
}

}  // namespace
}  // namespace ptxb

namespace ptxb {
namespace {

TEST(CudaGdbReport, AHangDumpWithABareFrameAndTheInstruction) {
  auto text = read_file(
      std::string(PTXB_TESTDATA_DIR) + "/eval/cuda_gdb/synthetic_hang_user_dump.txt", 1 << 20);
  ASSERT_TRUE(text.ok());
  auto report = parse_cuda_gdb_output(*text);
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->exception, "");
  EXPECT_EQ(report->block, "(0,0,0)");
  ASSERT_EQ(report->frames.size(), 2u);
  EXPECT_EQ(report->frames[0].function, "mbar_wait");
  EXPECT_EQ(report->frames[0].line, 27);
  // No location printed: kept, with the launch shape, and no file.
  EXPECT_EQ(report->frames[1].function, "wait_kernel");
  EXPECT_EQ(report->frames[1].launch, "<<<(1,1,1),(128,1,1)>>>");
  EXPECT_EQ(report->frames[1].file, "");
  EXPECT_EQ(report->pc, "0x7fffd3a7c2b0");
  EXPECT_EQ(report->instruction, "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R3 ;");
  EXPECT_EQ(report->innermost_in("kernel.cu"), &report->frames[0]);
  EXPECT_EQ(report->kernel_frame(), &report->frames[1]);
  EXPECT_EQ(report->innermost_in("other.cu"), nullptr);
}

// The batch command asks twice (cuda_gdb_argv): a dump without a focus answers the first "bt"
// with no stack and the second, after the focus switch, with the device frames; a dump with a
// focus answers both, and the first (the faulting thread's) is kept.
TEST(CudaGdbReport, KeepsTheFirstBacktraceOfTheTwo) {
  const std::string no_focus_first =
      "Opening GPU coredump: /s/core_1.nvcudmp\n"
      "No stack.\n"
      "No registers.\n"
      "[Switching focus to CUDA kernel 0, grid 3, block (0,0,0), thread (0,0,0), device 0, sm 0, "
      "warp 0, lane 0]\n"
      "#0  0x00007fffd3a7c2b0 in spin<<<(64,1,1),(128,1,1)>>> (flag=0x7f00) at kernel.cu:17\n"
      "=> 0x7fffd3a7c2b0 <_Z4spinPi+48>:\tLDG.E.STRONG.GPU R0, [R2.64] ;\n";
  auto hang = parse_cuda_gdb_output(no_focus_first);
  ASSERT_TRUE(hang.ok()) << hang.error().message;
  ASSERT_EQ(hang->frames.size(), 1u);
  EXPECT_EQ(hang->frames[0].line, 17);
  EXPECT_EQ(hang->block, "(0,0,0)");
  EXPECT_EQ(hang->instruction, "LDG.E.STRONG.GPU R0, [R2.64] ;");

  const std::string twice =
      "CUDA Exception: Warp Illegal Address\n"
      "#0  0x00007fffd3a7c100 in store<<<(8,1,1),(256,1,1)>>> (p=0x0) at kernel.cu:21\n"
      "=> 0x7fffd3a7c100 <_Z5storePf+64>:\tSTG.E [R2.64], R5 ;\n"
      "#0  0x00007fffd3a7c0f0 in store<<<(8,1,1),(256,1,1)>>> (p=0x0) at kernel.cu:20\n"
      "=> 0x7fffd3a7c0f0 <_Z5storePf+48>:\tIMAD R5, R0, R3, RZ ;\n";
  auto fault = parse_cuda_gdb_output(twice);
  ASSERT_TRUE(fault.ok()) << fault.error().message;
  ASSERT_EQ(fault->frames.size(), 1u);
  EXPECT_EQ(fault->frames[0].line, 21);
  EXPECT_EQ(fault->instruction, "STG.E [R2.64], R5 ;");
}

std::string h200_sample(const std::string& kernel) {
  auto text =
      read_file(std::string(PTXB_TESTDATA_DIR) + "/eval/cuda_gdb/h200_" + kernel + ".txt", 1 << 20);
  EXPECT_TRUE(text.ok()) << kernel;
  return text.ok() ? *text : std::string();
}

// Recorded on the H200 (cuda-gdb 13.0, 2026-12-02, bench/debug_bench.sh over testdata/debug):
// the exception's function between the PC and its line, the build folder in the frame's file,
// a line of an inlined cuda_bf16.hpp helper with the kernel.cu line it was inlined from.
TEST(CudaGdbReport, H200ExceptionDumpsWithInlinedHelpersAndBuildPaths) {
  auto null_read = parse_cuda_gdb_output(h200_sample("null_pointer_read"));
  ASSERT_TRUE(null_read.ok()) << null_read.error().message;
  EXPECT_EQ(null_read->exception, "Warp Illegal Address");
  EXPECT_EQ(null_read->pc, "0x7fb96f7a0140");
  EXPECT_EQ(null_read->exception_file, "kernel.cu");
  EXPECT_EQ(null_read->exception_line, 16);
  EXPECT_EQ(null_read->block, "(8,0,0)");
  ASSERT_EQ(null_read->frames.size(), 1u);
  EXPECT_EQ(null_read->frames[0].function, "(anonymous namespace)::first_column");
  EXPECT_EQ(null_read->frames[0].file, "kernel.cu");
  EXPECT_EQ(null_read->frames[0].line, 16);
  EXPECT_EQ(null_read->instruction, "SHF.L.U32 R0,R6,0x10,RZ");

  auto wgmma = parse_cuda_gdb_output(h200_sample("wgmma_bad_descriptor"));
  ASSERT_TRUE(wgmma.ok()) << wgmma.error().message;
  EXPECT_EQ(wgmma->exception, "Warp Out-of-range Address");
  EXPECT_EQ(wgmma->exception_line, 25);
  ASSERT_EQ(wgmma->frames.size(), 1u);
  EXPECT_EQ(wgmma->frames[0].file, "kernel.cu");  // not /tmp/ptxb-cache/staging/.../kernel.cu
  EXPECT_EQ(wgmma->frames[0].line, 28);
  EXPECT_EQ(wgmma->instruction, "WARPGROUP.DEPBAR.LE gsb0,0x0");
}

// The H200's user-triggered dumps of the two hang kernels: one without a kernel, one on which
// cuda-gdb 13.0 fails an internal assertion. Both are errors that say so, not empty readings.
TEST(CudaGdbReport, H200HangDumpsThatHoldNothingSaySo) {
  auto empty = parse_cuda_gdb_output(h200_sample("mbarrier_deadlock"));
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.error().message.find("holds no CUDA kernel"), std::string::npos)
      << empty.error().message;
  auto crashed = parse_cuda_gdb_output(h200_sample("global_spin_hang"));
  ASSERT_FALSE(crashed.ok());
  EXPECT_NE(crashed.error().message.find("m_num_devices > 0"), std::string::npos)
      << crashed.error().message;
}

// The same mbarrier hang once the trigger waited for the dump to be closed (H200, 2026-12-02
// 15:25 UTC): the PC is in `wait_phase`, a helper of kernel.cu inlined at line 31. The frame
// keeps the helper's own line (the try_wait loop the warp spins in) and the call's line.
TEST(CudaGdbReport, H200HangInAnInlinedHelperOfTheKernelFileKeepsTheHelpersLine) {
  auto hang = parse_cuda_gdb_output(h200_sample("mbarrier_deadlock_complete_dump"));
  ASSERT_TRUE(hang.ok()) << hang.error().message;
  EXPECT_EQ(hang->exception, "");
  EXPECT_EQ(hang->block, "(0,0,0)");
  ASSERT_EQ(hang->frames.size(), 1u);
  EXPECT_EQ(hang->frames[0].function, "(anonymous namespace)::wait_kernel");
  EXPECT_EQ(hang->frames[0].file, "kernel.cu");
  EXPECT_EQ(hang->frames[0].line, 19);
  EXPECT_EQ(hang->frames[0].inlined_at, 31);
  EXPECT_EQ(hang->instruction, "@!P0 BRA 0x7ff6b77a01c0");
  auto back = DebugFrame::from_json(hang->frames[0].to_json());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->inlined_at, 31);
}

TEST(CudaGdbReport, RoundTripsThroughJsonAndBuildsTheBatchCommand) {
  auto text = read_file(
      std::string(PTXB_TESTDATA_DIR) + "/eval/cuda_gdb/documented_illegal_address.txt", 1 << 20);
  ASSERT_TRUE(text.ok());
  auto report = parse_cuda_gdb_output(*text);
  ASSERT_TRUE(report.ok());
  auto back = CudaGdbReport::from_json(report->to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), report->to_json());
  EXPECT_EQ(back->frames.at(1).launch, "<<<(56,64,1),(256,1,1)>>>");
  EXPECT_FALSE(CudaGdbReport::from_json(Json{{"exception", "x"}}).ok());  // frames required
  const auto argv = cuda_gdb_argv("/cuda/bin/cuda-gdb", "/s/core_1.nvcudmp");
  EXPECT_EQ(argv.front(), "/cuda/bin/cuda-gdb");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-nx"), argv.end());
  EXPECT_NE(std::find(argv.begin(), argv.end(), "target cudacore /s/core_1.nvcudmp"), argv.end());
  EXPECT_EQ(argv.back(), "x/i $pc");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "cuda kernel 0 block 0,0,0 thread 0,0,0"),
            argv.end());
}

}  // namespace
}  // namespace ptxb
