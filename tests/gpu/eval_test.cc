// End-to-end GPU tests of `ptxbench eval` (label gpu; run on the H200 by scripts/gpu_check.sh).
// Each test writes one variant of testdata/eval/gemm_variants.cu (a #define picks the defect),
// runs the real CLI (compile -> supervisor -> runner, cuBLASLt reference, CUPTI, ncu) and checks
// the verdict in its --json output.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "../support/tree_paths.h"
#include "core/fs.h"
#include "core/json_io.h"
#include "core/process.h"
#include "test_macros.h"

namespace ptxb {
namespace {

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

struct Outcome {
  int exit_code = -1;
  Json result;
  std::string stderr_text;
};

// `ptxbench eval` of `text` as kernel.cu for the GEMM task.
Outcome eval_source(const std::string& text, const std::vector<std::string>& extra) {
  Outcome out;
  auto dir = make_temp_directory("ptxb-eval-gpu");
  EXPECT_TRUE(dir.ok());
  if (!dir.ok()) return out;
  const std::string path = *dir + "/kernel.cu";
  EXPECT_TRUE(write_file_atomic(path, text).ok());
  ProcessSpec spec;
  spec.argv = {tree::cli(), "eval", path, "--task", "gemm_n7168_k5120", "--json"};
  spec.argv.insert(spec.argv.end(), extra.begin(), extra.end());
  spec.timeout = std::chrono::seconds(600);
  spec.output_cap_bytes = 64u << 20;
  auto ran = SystemProcessRunner().run(spec);
  EXPECT_TRUE(ran.ok());
  if (!ran.ok()) return out;
  out.exit_code = ran->exit_code;
  out.stderr_text = ran->stderr_text;
  try {
    out.result = Json::parse(ran->stdout_text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "no JSON from ptxbench eval: " << e.what()
                  << "\nstdout: " << ran->stdout_text.substr(0, 2000)
                  << "\nstderr: " << ran->stderr_text;
  }
  remove_tree(*dir);
  return out;
}

Outcome eval_variant(int variant, const std::vector<std::string>& extra = {}) {
  auto source = read_file(tree::testdata_dir() + "/eval/gemm_variants.cu", 1u << 20);
  EXPECT_TRUE(source.ok());
  if (!source.ok()) return Outcome{};
  return eval_source(fmt::format("#define PTXB_TEST_VARIANT {}\n", variant) + *source, extra);
}

// One of the debug stage's failure kernels (testdata/debug/NAME.cu).
Outcome eval_debug_kernel(const std::string& name, const std::vector<std::string>& extra) {
  auto source = read_file(tree::testdata_dir() + "/debug/" + name + ".cu", 1u << 20);
  EXPECT_TRUE(source.ok());
  if (!source.ok()) return Outcome{};
  return eval_source(*source, extra);
}

std::string summary(const Outcome& o) {
  if (!o.result.is_object()) return "no result; stderr: " + o.stderr_text;
  return fmt::format(
      "status {} reason {} message {}\nworkloads {}\nstderr {}", o.result.value("status", ""),
      o.result.value("reason", ""), o.result.value("message", ""),
      o.result.value("workloads", Json()).dump().substr(0, 3000), o.stderr_text.substr(0, 2000));
}

class EvalGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  }
};

// The file also defines the (unlaunched) wgmma probe kernel, so the static check is positive and
// ncu runs: the verdict must be that the wgmma never executed.
TEST_F(EvalGpuTest, CorrectGemmPassesWithSpeedupAndUnusedWgmmaIsNotExecuted) {
  Outcome o = eval_variant(0);
  ASSERT_EQ(o.result.value("status", ""), "PASSED") << summary(o);
  EXPECT_EQ(o.exit_code, 0);
  const Json& w = o.result["workloads"][0];
  EXPECT_GT(w["speedup"].get<double>(), 0.0);
  EXPECT_LT(w["speedup"].get<double>(), 1.0);  // a SIMT kernel is far slower than cuBLASLt
  EXPECT_GE(w["candidate_timing"]["samples"].get<int>(), 50);
  EXPECT_GT(w["reference_timing"]["median_ms"].get<double>(), 0.5);
  EXPECT_EQ(o.result["target_instructions"]["verdict"], "dynamic_not_executed");
  ASSERT_EQ(o.result["traces"].size(), 1u);
  EXPECT_EQ(o.result["traces"][0]["evaluation"]["status"], "PASSED");
  std::cout << "[ correct GEMM ] candidate " << w["candidate_timing"]["median_ms"]
            << " ms, reference " << w["reference_timing"]["median_ms"] << " ms, stages "
            << o.result["stage_ms"].dump() << "\n";
}

TEST_F(EvalGpuTest, OffByOneTileIsIncorrectNumerical) {
  Outcome o = eval_variant(1, {"--no-ncu"});
  EXPECT_EQ(o.result.value("status", ""), "INCORRECT_NUMERICAL") << summary(o);
  EXPECT_EQ(o.result.value("reason", ""), "mismatch");
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_GT(o.result["workloads"][0]["checks"][0]["max_abs_error"].get<double>(), 0.01);
}

TEST_F(EvalGpuTest, NanWriterFails) {
  Outcome o = eval_variant(2, {"--no-ncu"});
  EXPECT_EQ(o.result.value("status", ""), "INCORRECT_NUMERICAL") << summary(o);
  EXPECT_EQ(o.result.value("reason", ""), "nonfinite_output");
}

TEST_F(EvalGpuTest, OutOfBoundsWriteIsMemoryErrorUnderTheSanitizer) {
  Outcome o = eval_variant(3, {"--sanitize"});
  EXPECT_EQ(o.result.value("status", ""), "MEMORY_ERROR") << summary(o);
  EXPECT_NE(o.result.value("message", "").find("kernel.cu:"), std::string::npos) << summary(o);
}

TEST_F(EvalGpuTest, OutOfBoundsWriteWithoutTheSanitizerIsAMemoryFault) {
  Outcome o = eval_variant(3, {"--no-ncu"});
  EXPECT_EQ(o.result.value("status", ""), "MEMORY_ERROR") << summary(o);
  EXPECT_EQ(o.result.value("reason", ""), "illegal_address");
}

TEST_F(EvalGpuTest, InfiniteLoopTimesOutAndTheNextEvaluationWorks) {
  Outcome hung = eval_variant(4, {"--no-ncu"});
  EXPECT_EQ(hung.result.value("status", ""), "TIMEOUT") << summary(hung);
  Outcome next = eval_variant(0, {"--no-ncu"});
  EXPECT_EQ(next.result.value("status", ""), "PASSED") << summary(next);
}

// A launch refused for its configuration enqueues nothing: the runner reports the launch's error
// (cudaGetLastError when no kernel ran), not an unwritten output (a REWARD_HACK, before).
TEST_F(EvalGpuTest, ARefusedLaunchIsARuntimeErrorNamingIt) {
  Outcome o = eval_debug_kernel("launch_config_too_many_threads", {"--no-ncu"});
  EXPECT_EQ(o.result.value("status", ""), "RUNTIME_ERROR") << summary(o);
  EXPECT_EQ(o.result.value("reason", ""), "cuda_error") << summary(o);
  // CUDA 13 on the H200 refuses 2048 threads per block with cudaErrorInvalidValue (older
  // releases said cudaErrorInvalidConfiguration); the message names the runtime's error either way.
  EXPECT_NE(o.result.value("message", "").find("cudaErrorInvalid"), std::string::npos)
      << summary(o);
}

TEST_F(EvalGpuTest, HostSegfaultIsRuntimeError) {
  Outcome o = eval_variant(5, {"--no-ncu"});
  EXPECT_EQ(o.result.value("status", ""), "RUNTIME_ERROR") << summary(o);
  EXPECT_NE(o.result.value("message", "").find("SIGSEGV"), std::string::npos) << summary(o);
}

TEST_F(EvalGpuTest, LiveWgmmaIsDynamicPresent) {
  Outcome o = eval_variant(6);
  ASSERT_EQ(o.result.value("status", ""), "PASSED") << summary(o);
  EXPECT_EQ(o.result["target_instructions"]["verdict"], "dynamic_present")
      << o.result["target_instructions"].dump();
  std::cout << "[ ncu ] cost " << o.result["target_instructions"]["cost_ms"] << " ms\n";
}

TEST_F(EvalGpuTest, WgmmaBehindANeverTakenBranchIsNotExecuted) {
  Outcome o = eval_variant(7);
  ASSERT_EQ(o.result.value("status", ""), "PASSED") << summary(o);
  EXPECT_EQ(o.result["target_instructions"]["verdict"], "dynamic_not_executed")
      << o.result["target_instructions"].dump();
}

TEST_F(EvalGpuTest, WgmmaWithAFalseGuardPredicateIsNotExecuted) {
  Outcome o = eval_variant(8);
  ASSERT_EQ(o.result.value("status", ""), "PASSED") << summary(o);
  EXPECT_EQ(o.result["target_instructions"]["verdict"], "dynamic_not_executed")
      << o.result["target_instructions"].dump();
}

TEST_F(EvalGpuTest, PartialWriteIsCaught) {
  Outcome o = eval_variant(9, {"--no-ncu"});
  EXPECT_EQ(o.result.value("status", ""), "REWARD_HACK") << summary(o);  // docs/integrity.md
  EXPECT_EQ(o.result.value("reason", ""), "unwritten_output") << summary(o);
}

TEST_F(EvalGpuTest, WritingAnInputIsCaught) {
  Outcome o = eval_variant(10, {"--no-ncu"});
  EXPECT_EQ(o.result.value("status", ""), "REWARD_HACK") << summary(o);
  EXPECT_EQ(o.result.value("reason", ""), "input_modified");
}

}  // namespace
}  // namespace ptxb
