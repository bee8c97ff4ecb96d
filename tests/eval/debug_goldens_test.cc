// The debug stage's goldens recorded on the H200 (bench/debug_bench.sh, testdata/debug/h200/):
// for each failure kernel of testdata/debug, the evaluation's result (its debug record with the
// tools' raw outputs) and the feedback text the model read. The CPU checks that
//   - the verdict is the one the kernel's `expect:` header names, and the report points at its
//     FAULT line (or, where the hardware reports a neighbour, within the two lines
//     debug_bench_summary.py calls "near");
//   - the recorded raw outputs still parse to the same fault (compute-sanitizer, also when its
//     output was cut by the time limit) and the same cuda-gdb reading;
//   - the feedback rendered from the result is byte for byte the recorded one
//     (PTXB_UPDATE_GOLDEN=1 rewrites the .feedback.txt files after a deliberate format change).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <set>

#include "analysis/cuda_gdb_report.h"
#include "analysis/sanitizer_report.h"
#include "core/fs.h"
#include "core/json_io.h"
#include "core/strings.h"
#include "eval/eval_types.h"
#include "eval/feedback.h"
#include "trace/trace.h"

namespace ptxb {
namespace {

const std::string kDebugDir = std::string(PTXB_TESTDATA_DIR) + "/debug";

struct Expectation {
  int line = 0;
  std::string status;
};

Expectation expectation_of(const std::string& kernel) {
  auto text = read_file(kDebugDir + "/" + kernel + ".cu", 1 << 20);
  EXPECT_TRUE(text.ok()) << kernel;
  std::smatch match;
  const std::string first = text.ok() ? split_lines(*text).front() : "";
  const std::regex header(R"(^// expect: kernel\.cu:(\d+) (\w+) )");
  if (!std::regex_search(first, match, header)) {
    ADD_FAILURE() << kernel << ": no expect header";
    return {};
  }
  return {std::stoi(match[1].str()), match[2].str()};
}

// The hang whose dump the H200 does not resolve: a kernel spinning on global memory. Its
// user-triggered core dump holds no device (cuda-gdb 13.0 fails `m_num_devices > 0`), and so
// does the same kernel in a standalone program outside the harness (2026-12-02, 1 or 64 blocks,
// with or without __nanosleep; a 68,672-byte dump written within 0.1 s of the trigger), while the
// mbarrier deadlock's dump holds its kernel. memcheck does not run on a hang. The report points
// at the launch (LaunchSite::hang); remove a kernel from here once it points at its loop.
const std::set<std::string> kHangsLocatedAtTheLaunchOnly = {"global_spin_hang"};

TEST(DebugGoldens, EachH200RecordPointsAtItsFaultAndRendersTheRecordedFeedback) {
  int kernels = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDebugDir + "/h200")) {
    const std::string file = entry.path().filename().string();
    if (!ends_with(file, ".result.json")) continue;
    const std::string kernel = file.substr(0, file.size() - std::string(".result.json").size());
    SCOPED_TRACE(kernel);
    ++kernels;
    auto text = read_file(entry.path().string(), 4 << 20);
    ASSERT_TRUE(text.ok());
    auto json = parse_json(*text, file);
    ASSERT_TRUE(json.ok()) << json.error().message;
    auto result = EvalResult::from_json(*json);
    ASSERT_TRUE(result.ok()) << result.error().message;
    const Expectation want = expectation_of(kernel);
    EXPECT_EQ(ptxb_status_name(result->status), want.status);
    ASSERT_TRUE(result->debug.has_value());
    const DebugRecord& debug = *result->debug;
    const std::string feedback = render_feedback(*result);
    const std::string golden_path = kDebugDir + "/h200/" + kernel + ".feedback.txt";
    if (std::getenv("PTXB_UPDATE_GOLDEN"))  // regenerate after a deliberate format change
      ASSERT_TRUE(write_file_atomic(golden_path, feedback).ok());
    auto golden = read_file(golden_path, 1 << 20);
    ASSERT_TRUE(golden.ok()) << golden_path;
    EXPECT_EQ(feedback, *golden);
    if (kHangsLocatedAtTheLaunchOnly.count(kernel)) {
      EXPECT_EQ(result->status, PtxbStatus::kTimeout);
      ASSERT_TRUE(debug.points_at.has_value());
      EXPECT_EQ(debug.points_at->source, "launch") << "located now: take it off the list";
      EXPECT_NE(feedback.find("## Debug"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(debug.points_at.has_value()) << "the report points nowhere";
    EXPECT_LE(std::abs(debug.points_at->line - want.line), 2)
        << "points at " << debug.points_at->line << " (" << debug.points_at->source
        << "), the fault is at " << want.line;

    // The raw outputs still parse to what the stage read from them.
    if (debug.fault && !debug.fault->api_error && !debug.sanitizer_output.empty() &&
        debug.sanitizer_output.find("COMPUTE-SANITIZER") != std::string::npos) {
      auto report =
          parse_sanitizer_output(debug.sanitizer_output, "memcheck", SanitizerEnd::kMayBeCut);
      ASSERT_TRUE(report.ok()) << report.error().message;
      auto fault = most_precise_fault(*report);
      ASSERT_TRUE(fault.has_value());
      EXPECT_EQ(fault->line, debug.fault->line);
      EXPECT_EQ(fault->kind, debug.fault->kind);
    }
    if (debug.core_dump && debug.core_dump->cuda_gdb) {
      auto reading = parse_cuda_gdb_output(debug.cuda_gdb_output);
      ASSERT_TRUE(reading.ok()) << reading.error().message;
      EXPECT_EQ(reading->exception, debug.core_dump->cuda_gdb->exception);
      EXPECT_EQ(reading->block, debug.core_dump->cuda_gdb->block);
    }

    EXPECT_NE(
        feedback.find("## Debug\npoints at kernel.cu:" + std::to_string(debug.points_at->line)),
        std::string::npos)
        << feedback;
  }
  EXPECT_GE(kernels, 10) << "testdata/debug/h200 holds the goldens of bench/debug_bench.sh";
}

}  // namespace
}  // namespace ptxb
