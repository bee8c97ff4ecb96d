// End-to-end: `ptxbench compile` as a user runs it (real nvcc, ptxas and cuobjdump; no GPU).
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/fs.h"
#include "core/json_io.h"
#include "core/process.h"

namespace ptxb {
namespace {

class CompileCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto dir = make_temp_directory("ptxb-compile-cli");
    ASSERT_TRUE(dir.ok());
    cache_dir_ = new std::string(dir.value());
  }
  static void TearDownTestSuite() {
    remove_tree(*cache_dir_);
    delete cache_dir_;
  }

  // A private cache so the first compile is a real one and the test cannot pass on stale data.
  static ProcessResult run_cli(std::vector<std::string> args) {
    args.insert(args.begin(), PTXB_CLI_PATH);
    SystemProcessRunner runner;
    ProcessSpec spec{args};
    spec.env = current_environment();
    spec.env->push_back("PTXBENCH_CACHE_DIR=" + *cache_dir_);
    spec.timeout = std::chrono::seconds(300);
    auto result = runner.run(spec);
    EXPECT_TRUE(result.ok());
    return result.ok() ? result.value() : ProcessResult{};
  }

  static std::string* cache_dir_;
};
std::string* CompileCli::cache_dir_ = nullptr;

TEST_F(CompileCli, ReadmeExampleCompilesAndReportsTargetInstructionsAbsent) {
  const std::string kernel = std::string(PTXB_SOURCE_DIR) + "/examples/gemm_simt.cu";
  ProcessResult result = run_cli({"compile", kernel, "--task", "gemm_n7168_k5120", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  auto parsed = parse_json(result.stdout_text, "compile --json");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Json& out = parsed.value();
  EXPECT_EQ(out["status"], "OK");
  EXPECT_EQ(out["from_cache"], false);
  EXPECT_EQ(out["sass"]["target_arch"], "sm_90a");
  EXPECT_EQ(out["sass"]["target_present"], false);  // plain FFMA code: no GMMA, no TMA
  EXPECT_EQ(out["artifact"]["abi_signature"],
            "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, "
            "int64_t N, int64_t K, cudaStream_t stream)");

  // The same request again is a cache hit with the same artifact.
  ProcessResult again = run_cli({"compile", kernel, "--task", "gemm_n7168_k5120", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  auto second = parse_json(again.stdout_text, "compile --json (cached)");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value()["from_cache"], true);
  EXPECT_EQ(second.value()["artifact"]["sha256"], out["artifact"]["sha256"]);
}

TEST_F(CompileCli, UnknownTaskIsAOneLineError) {
  ProcessResult result =
      run_cli({"compile", std::string(PTXB_SOURCE_DIR) + "/examples/gemm_simt.cu", "--task",
               "gemm_n7168_k512"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.stderr_text.find("gemm_n7168_k5120"), std::string::npos) << result.stderr_text;
}

// Issue 21, defect 11: the human output printed the first diagnostic twice and dropped nvcc's
// source line and caret.
TEST_F(CompileCli, CompileErrorIsShownOnceWithItsSourceLineAndCaret) {
  auto dir = make_temp_directory("ptxb-compile-error");
  ASSERT_TRUE(dir.ok());
  const std::string kernel = dir.value() + "/bad.cu";
  ASSERT_TRUE(write_file_atomic(kernel,
                                "#include <cuda_bf16.h>\n#include <cstdint>\n"
                                "__global__ void k(float* x) { x[0] = undefined_thing; }\n"
                                "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, "
                                "__nv_bfloat16* C, int64_t M, int64_t N, int64_t K, "
                                "cudaStream_t stream) {}\n")
                  .ok());
  ProcessResult result = run_cli({"compile", kernel, "--task", "gemm_n7168_k5120"});
  remove_tree(dir.value());
  EXPECT_EQ(result.exit_code, 1);
  const std::string& out = result.stdout_text;
  const std::string diagnostic = "identifier \"undefined_thing\" is undefined";
  ASSERT_NE(out.find(diagnostic), std::string::npos) << out;
  EXPECT_EQ(out.find(diagnostic, out.find(diagnostic) + 1), std::string::npos) << out;  // once
  EXPECT_NE(out.find("x[0] = undefined_thing; }\n"), std::string::npos) << out;  // the source
  EXPECT_NE(out.find("^\n"), std::string::npos) << out;                          // the caret
  EXPECT_EQ(out.find("$ "), std::string::npos) << out;                           // no command lines
}

TEST_F(CompileCli, MissingKernelFileIsAnError) {
  ProcessResult result =
      run_cli({"compile", "/nonexistent/kernel.cu", "--task", "gemm_n7168_k5120"});
  EXPECT_NE(result.exit_code, 0);
  EXPECT_FALSE(result.stderr_text.empty());
}

// Issue 22: the held-out tasks' expert kernels (the attention rungs at head dims 64 and 96
// through PTXB_HEAD_DIM; the GQA rungs). The GPU checks them only in scripts/gpu_check.sh, so this
// static check holds them in CI: each listed replay turn of each task, as `tasks solution`
// renders it, compiles for sm_90a with wgmma and TMA in its SASS, no spill and no ptxas
// diagnostic (e.g. wgmma serialisation) in any of its kernels.
// `tolerated`: ptxas diagnostic codes a listed kernel may carry (with the reason at the caller).
void expect_head_dim_variants_compile(const std::vector<std::string>& tasks,
                                      const std::vector<std::string>& turns,
                                      size_t kernels_per_file,
                                      ProcessResult (*run_cli)(std::vector<std::string>),
                                      const std::set<std::string>& tolerated = {}) {
  auto dir = make_temp_directory("ptxb-compile-head-dim");
  ASSERT_TRUE(dir.ok());
  for (const std::string& task : tasks) {
    for (const std::string& turn : turns) {
      const std::string name = task + " turn " + turn;
      ProcessResult rendered = run_cli({"tasks", "solution", task, "--turn", turn});
      ASSERT_EQ(rendered.exit_code, 0) << name << ": " << rendered.stderr_text;
      const std::string kernel = dir.value() + "/" + task + "_" + turn + ".cu";
      ASSERT_TRUE(write_file_atomic(kernel, rendered.stdout_text).ok());
      ProcessResult result = run_cli({"compile", kernel, "--task", task, "--json"});
      ASSERT_EQ(result.exit_code, 0) << name << ": " << result.stderr_text;
      auto parsed = parse_json(result.stdout_text, name);
      ASSERT_TRUE(parsed.ok()) << parsed.error().message;
      const Json& out = parsed.value();
      EXPECT_EQ(out["status"], "OK") << name << ": " << out.value("message", "");
      EXPECT_EQ(out["sass"]["target_present"], true) << name;
      EXPECT_EQ(out["sass"]["qualifying_families_found"].dump(), R"(["GMMA","TMA"])") << name;
      ASSERT_EQ(out["ptxas"]["kernels"].size(), kernels_per_file) << name;
      for (const Json& kernel_info : out["ptxas"]["kernels"]) {
        EXPECT_EQ(kernel_info["spill_store_bytes"], 0) << name;
        EXPECT_EQ(kernel_info["spill_load_bytes"], 0) << name;
        for (const Json& diagnostic : kernel_info["diagnostics"])
          EXPECT_TRUE(tolerated.count(diagnostic.value("code", "")) > 0)
              << name << ": " << kernel_info.dump();
      }
    }
  }
  remove_tree(dir.value());
}

// Issue 23: the backward rung 3 (the d128 tasks' replay turn 2). Beyond the static check, the
// "no ptxas diagnostic" condition holds its staging overlap: an injected warpgroup.wait (C7517)
// there cost 3 points of speedup on the H200 (bench/results/bwd_sweep.md, round 5). Tolerated:
// the non-causal build's two injected warpgroup.arrive (C7519), in its first step only (outside
// the loop); making dV and dK opaque there removed them but changed the loop's code and cost 4 %
// on the H200 (2026-12-03, same-session A/B in bench/results/bwd_sweep.md).
TEST_F(CompileCli, BackwardRung3CompilesWithoutInjectedWaits) {
  // Three kernels per file (preprocess, dk_dv_dq, convert).
  expect_head_dim_variants_compile({"mha_bwd_d128", "mha_bwd_d128_causal"}, {"2"}, 3, &run_cli,
                                   {"C7519"});
}

TEST_F(CompileCli, ForwardAttentionHeadDimVariantsCompileWithTargetInstructions) {
  // Rung 1 and rung 2; one kernel per file.
  expect_head_dim_variants_compile({"mha_with_lse_d64", "mha_with_lse_d64_causal",
                                    "mha_with_lse_d96", "mha_with_lse_d96_causal"},
                                   {"1", "2"}, 1, &run_cli);
}

TEST_F(CompileCli, BackwardAttentionHeadDimVariantsCompileWithTargetInstructions) {
  // Rung 1 and rung 2; three kernels per file (preprocess, dk_dv, dq).
  expect_head_dim_variants_compile(
      {"mha_bwd_d64", "mha_bwd_d64_causal", "mha_bwd_d96", "mha_bwd_d96_causal"}, {"1", "2"}, 3,
      &run_cli);
}

TEST_F(CompileCli, GqaExpertTurnsCompileWithTargetInstructions) {
  // Decode: the split kernel and its combine kernel. Prefill: one kernel per turn, ragged as
  // written and paged through PTXB_GQA_PAGED (and the cp.async gather) from the same sources.
  expect_head_dim_variants_compile({"gqa_paged_decode_h24_kv8_d128_ps1"}, {"1"}, 2, &run_cli);
  expect_head_dim_variants_compile(
      {"gqa_ragged_prefill_causal_h32_kv4_d128", "gqa_paged_prefill_causal_h24_kv8_d128_ps1"},
      {"1", "2"}, 1, &run_cli);
}

}  // namespace
}  // namespace ptxb
