// The failure kernels of testdata/debug (bench/debug_bench.sh evaluates them on the H200): each
// names, on its first line, the kernel.cu line the debug report must point at and the status,
// and marks that line `// FAULT`, so the header cannot drift from the code.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "core/fs.h"
#include "core/strings.h"
#include "trace/trace.h"

namespace ptxb {
namespace {

TEST(DebugKernels, EachNamesItsFaultLineAndAStatusTheStageExplains) {
  const std::regex header(R"(^// expect: kernel\.cu:(\d+) (\w+) \(.+\)$)");
  int kernels = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(PTXB_TESTDATA_DIR) + "/debug")) {
    if (entry.path().extension() != ".cu") continue;
    ++kernels;
    const std::string name = entry.path().filename().string();
    auto text = read_file(entry.path().string(), 1 << 20);
    ASSERT_TRUE(text.ok()) << name;
    const std::vector<std::string> lines = split_lines(*text);
    std::smatch match;
    ASSERT_FALSE(lines.empty()) << name;
    ASSERT_TRUE(std::regex_match(lines[0], match, header)) << name << ": " << lines[0];
    const int line = std::stoi(match[1].str());
    const auto status = parse_ptxb_status(match[2].str());
    ASSERT_TRUE(status.has_value()) << name;
    EXPECT_TRUE(*status == PtxbStatus::kRuntimeError || *status == PtxbStatus::kMemoryError ||
                *status == PtxbStatus::kTimeout)
        << name;
    ASSERT_LE(line, static_cast<int>(lines.size())) << name;
    EXPECT_TRUE(ends_with(trim(lines[line - 1]), "// FAULT")) << name << ":" << line;
    int markers = 0;
    for (const auto& l : lines) markers += ends_with(trim(l), "// FAULT") ? 1 : 0;
    EXPECT_EQ(markers, 1) << name;
  }
  EXPECT_GE(kernels, 10);
}

}  // namespace
}  // namespace ptxb
