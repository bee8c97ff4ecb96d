#include "analysis/ncu_launches.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

std::string testdata(const std::string& name) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/" + name, 1u << 20);
  EXPECT_TRUE(text.ok()) << name;
  return text.ok() ? *text : "";
}

// The raw page's layout (testdata/eval/ncu/raw_launches_synthetic.csv) is written after ncu
// 2025.3's CSV conventions, not captured: the device run (docs/eval.md) checks it against
// the real tool.
TEST(NcuLaunches, ReadsNameShapeAndTimeByColumnName) {
  auto launches =
      parse_ncu_launches_csv(testdata("eval/ncu/raw_launches_synthetic.csv"), "raw.csv");
  ASSERT_TRUE(launches.ok()) << launches.error().message;
  ASSERT_EQ(launches->size(), 1u);
  const NcuLaunch& launch = (*launches)[0];
  EXPECT_EQ(launch.name, "_ZN12_GLOBAL__N_116gemm_tile_kernelEPK13__nv_bfloat16S2_PS0_lll");
  EXPECT_EQ(launch.block, (std::array<std::uint32_t, 3>{384, 1, 1}));
  EXPECT_EQ(launch.grid, (std::array<std::uint32_t, 3>{132, 1, 1}));
  EXPECT_DOUBLE_EQ(launch.gpu_time_ns, 1234567.0);
}

TEST(NcuLaunches, SkipsMessagesAndProgramOutputAndKeepsEveryLaunch) {
  const std::string text =
      "==PROF== Disconnected from process 4242\n"
      "ptxbench-runner: some log line\n"
      "\"ID\",\"Kernel Name\",\"Grid Size\",\"Block Size\",\"gpu__time_duration.sum\"\n"
      "\"\",\"\",\"\",\"\",\"nsecond\"\n"
      "\"0\",\"_Z1av\",\"(2, 3, 4)\",\"(32, 1, 1)\",\"1500.5\"\n"
      "\"1\",\"_Z1bv\",\"7\",\"(64, 2, 1)\",\"10\"\n";
  auto launches = parse_ncu_launches_csv(text, "raw");
  ASSERT_TRUE(launches.ok()) << launches.error().message;
  ASSERT_EQ(launches->size(), 2u);
  EXPECT_EQ((*launches)[0].grid, (std::array<std::uint32_t, 3>{2, 3, 4}));
  EXPECT_DOUBLE_EQ((*launches)[0].gpu_time_ns, 1500.5);
  EXPECT_EQ((*launches)[1].grid, (std::array<std::uint32_t, 3>{7, 1, 1}));
  EXPECT_EQ((*launches)[1].name, "_Z1bv");
}

TEST(NcuLaunches, RefusesWhatCannotBeRead) {
  // No header at all (ncu profiled nothing): never "no launches".
  EXPECT_FALSE(parse_ncu_launches_csv("==PROF== No kernels were profiled.\n", "raw").ok());
  // A header without the time column.
  EXPECT_FALSE(
      parse_ncu_launches_csv("\"ID\",\"Kernel Name\",\"Grid Size\",\"Block Size\"\n", "raw").ok());
  const std::string header =
      "\"ID\",\"Kernel Name\",\"Grid Size\",\"Block Size\",\"gpu__time_duration.sum\"\n";
  // Times in another unit than nanoseconds (--print-units base was not in effect).
  EXPECT_FALSE(parse_ncu_launches_csv(header + "\"\",\"\",\"\",\"\",\"usecond\"\n", "raw").ok());
  EXPECT_FALSE(
      parse_ncu_launches_csv(header + "\"0\",\"_Z1av\",\"(1, 1)x\",\"(1, 1, 1)\",\"1\"\n", "raw")
          .ok());
  EXPECT_FALSE(parse_ncu_launches_csv(
                   header + "\"0\",\"_Z1av\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"n/a\"\n", "raw")
                   .ok());
  EXPECT_FALSE(parse_ncu_launches_csv(header + "\"0\",\"_Z1av\",\"(1, 1, 1)\"\n", "raw").ok());
}

TEST(NcuLaunches, LaunchDims) {
  EXPECT_EQ(*parse_launch_dims("(128, 2, 1)"), (std::array<std::uint32_t, 3>{128, 2, 1}));
  EXPECT_EQ(*parse_launch_dims("256"), (std::array<std::uint32_t, 3>{256, 1, 1}));
  EXPECT_FALSE(parse_launch_dims("(1, 2, 3, 4)").ok());
  EXPECT_FALSE(parse_launch_dims("()").ok());
  EXPECT_FALSE(parse_launch_dims("(-1, 1, 1)").ok());
}

}  // namespace
}  // namespace ptxb
