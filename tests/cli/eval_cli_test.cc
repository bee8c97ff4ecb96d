// End-to-end: `ptxbench eval` on a machine without a GPU (CI): compile and static analysis run,
// the GPU stages are reported as skipped with the reason, and the exit code says "incomplete".
// (On a GPU machine the same commands run the full evaluation: tests/gpu/eval_test.cc.)
#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/json_io.h"
#include "core/process.h"
#include "core/version.h"
#include "env/gpu_probe.h"

namespace ptxb {
namespace {

ProcessResult run_eval(std::vector<std::string> args) {
  args.insert(args.begin(), {PTXB_CLI_PATH, "eval"});
  ProcessSpec spec{args};
  spec.timeout = std::chrono::seconds(300);
  auto result = SystemProcessRunner().run(spec);
  EXPECT_TRUE(result.ok());
  return result.ok() ? result.value() : ProcessResult{};
}

TEST(EvalCli, WithoutAGpuTheGpuStagesAreSkippedWithTheReason) {
  if (probe_gpus().has_gpu()) GTEST_SKIP() << "a GPU is present: tests/gpu/eval_test.cc covers it";
  const std::string kernel = std::string(PTXB_SOURCE_DIR) + "/examples/gemm_simt.cu";
  ProcessResult r = run_eval({kernel, "--task", "gemm_n7168_k5120", "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
  auto parsed = parse_json(r.stdout_text, "eval --json");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message << "\n" << r.stdout_text.substr(0, 500);
  const Json& out = *parsed;
  EXPECT_EQ(out["gpu_skipped"], true);
  EXPECT_NE(out["gpu_skip_reason"].get<std::string>().find("no GPU"), std::string::npos);
  EXPECT_EQ(out["status"], "INFRA_ERROR");  // nothing ran on a GPU, so nothing passed
  EXPECT_EQ(out["compile"]["status"], "OK");
  EXPECT_EQ(out["target_instructions"]["verdict"], "static_absent");

  ProcessResult table = run_eval({kernel, "--task", "gemm_n7168_k5120"});
  EXPECT_EQ(table.exit_code, 3);
  EXPECT_NE(table.stdout_text.find("GPU stages skipped"), std::string::npos) << table.stdout_text;
}

TEST(EvalCli, CompileErrorIsAVerdictNotACrash) {
  auto dir = make_temp_directory("ptxb-eval-cli");
  ASSERT_TRUE(dir.ok());
  const std::string kernel = *dir + "/kernel.cu";
  ASSERT_TRUE(write_file_atomic(kernel, "void run(int x) { this is not C++ }\n").ok());
  ProcessResult r = run_eval({kernel, "--task", "gemm_n7168_k5120", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  auto parsed = parse_json(r.stdout_text, "eval --json");
  ASSERT_TRUE(parsed.ok()) << r.stdout_text.substr(0, 500);
  EXPECT_EQ((*parsed)["status"], "COMPILE_ERROR");
  EXPECT_EQ((*parsed)["traces"][0]["evaluation"]["status"], "COMPILE_ERROR");

  ProcessResult feedback = run_eval({kernel, "--task", "gemm_n7168_k5120", "--feedback"});
  EXPECT_NE(feedback.stdout_text.find("## Next step"), std::string::npos) << feedback.stdout_text;
  remove_tree(*dir);
}

TEST(EvalCli, UnsafeNoSandboxIsRecordedInTheResultAndTheFeedback) {
  if (probe_gpus().has_gpu())
    GTEST_SKIP() << "a GPU is present: tests/gpu/sandbox_eval_test.cc covers it";
  const std::string kernel = std::string(PTXB_SOURCE_DIR) + "/examples/gemm_simt.cu";
  ProcessResult r =
      run_eval({kernel, "--task", "gemm_n7168_k5120", "--json", "--unsafe-no-sandbox"});
  EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
  auto parsed = parse_json(r.stdout_text, "eval --json");
  ASSERT_TRUE(parsed.ok()) << r.stdout_text.substr(0, 500);
  EXPECT_EQ((*parsed)["options"]["unsafe_no_sandbox"], true);
  EXPECT_EQ((*parsed)["traces"][0]["evaluation"]["ptxbench"]["sandboxed"], false);
  ProcessResult feedback =
      run_eval({kernel, "--task", "gemm_n7168_k5120", "--feedback", "--unsafe-no-sandbox"});
  EXPECT_NE(feedback.stdout_text.find("ran without the sandbox"), std::string::npos)
      << feedback.stdout_text;
  ProcessResult table = run_eval({kernel, "--task", "gemm_n7168_k5120", "--unsafe-no-sandbox"});
  EXPECT_NE(table.stdout_text.find("sandbox: OFF"), std::string::npos) << table.stdout_text;
  // Without the flag the trace says the sandbox is on.
  ProcessResult sandboxed = run_eval({kernel, "--task", "gemm_n7168_k5120", "--json"});
  auto on = parse_json(sandboxed.stdout_text, "eval --json");
  ASSERT_TRUE(on.ok());
  EXPECT_EQ((*on)["traces"][0]["evaluation"]["ptxbench"]["sandboxed"], true);
}

TEST(EvalCli, UnknownTaskAndMissingFileAreOneLineErrors) {
  ProcessResult r = run_eval({"/nonexistent.cu", "--task", "gemm_n7168_k5120"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.stderr_text.find("error"), std::string::npos);
  ProcessResult t =
      run_eval({std::string(PTXB_SOURCE_DIR) + "/examples/gemm_simt.cu", "--task", "nope"});
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.stderr_text.find("nope"), std::string::npos) << t.stderr_text;
}

// --also-reference (eval/also_reference.h): refused before compiling where it does not apply,
// with a usage error (exit 2) that says why.
TEST(EvalCli, AlsoReferenceIsAUsageErrorWhereItDoesNotApply) {
  const std::string kernel = std::string(PTXB_SOURCE_DIR) + "/examples/gemm_simt.cu";
  ProcessResult gemm =
      run_eval({kernel, "--task", "gemm_n7168_k5120", "--also-reference", "flashinfer"});
  EXPECT_EQ(gemm.exit_code, 2) << gemm.stderr_text;
  EXPECT_NE(gemm.stderr_text.find("not an MHA forward task"), std::string::npos)
      << gemm.stderr_text;
  ProcessResult backward =
      run_eval({kernel, "--task", "mha_bwd_d128", "--also-reference", "flashinfer"});
  EXPECT_EQ(backward.exit_code, 2);
  EXPECT_NE(backward.stderr_text.find("cudnn_sdpa_bwd"), std::string::npos) << backward.stderr_text;
  ProcessResult unknown =
      run_eval({kernel, "--task", "mha_with_lse_d128", "--also-reference", "triton"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.stderr_text.find("known: flashinfer"), std::string::npos)
      << unknown.stderr_text;
  // On an MHA forward task only a build without the FlashInfer kernels refuses, naming the
  // option (a build with them goes on to compile; tests/gpu/eval_test.cc runs it on the GPU).
  if (!built_with_flashinfer()) {
    ProcessResult unbuilt =
        run_eval({kernel, "--task", "mha_with_lse_d128", "--also-reference", "flashinfer"});
    EXPECT_EQ(unbuilt.exit_code, 2);
    EXPECT_NE(unbuilt.stderr_text.find("-DPTXB_WITH_FLASHINFER=ON"), std::string::npos)
        << unbuilt.stderr_text;
  }
  ProcessResult help = run_eval({"--help"});
  EXPECT_NE(help.stdout_text.find("--also-reference"), std::string::npos);
  EXPECT_NE(help.stdout_text.find("MHA forward tasks only"), std::string::npos) << help.stdout_text;
}

}  // namespace
}  // namespace ptxb
