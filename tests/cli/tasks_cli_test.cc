#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "core/fs.h"
#include "core/json_io.h"
#include "core/strings.h"

namespace ptxb {
namespace {

using testing::run_cli;

TEST(TasksCli, ListPaperSuiteJsonHasTheFiveTasksWithShapes) {
  auto result = run_cli({"tasks", "list", "--suite", "paper-h100", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  auto json = parse_json(result.stdout_text, "stdout");
  ASSERT_TRUE(json.ok()) << json.error().message;
  const Json& tasks = (*json)["tasks"];
  ASSERT_EQ(tasks.size(), 5u);
  EXPECT_EQ(tasks[0]["name"], "gemm_n7168_k5120");
  EXPECT_EQ(tasks[0]["shapes"].dump(), R"({"A":[8192,5120],"B":[7168,5120],"C":[8192,7168]})");
  EXPECT_EQ(tasks[1]["name"], "mha_with_lse_d128");
  EXPECT_EQ(tasks[1]["shapes"]["LSE"].dump(), "[4,48,4096]");
  EXPECT_EQ(tasks[3]["name"], "mha_bwd_d128");
  EXPECT_EQ(tasks[3]["shapes"]["dV"].dump(), "[4,48,4096,128]");
  EXPECT_EQ(tasks[4]["name"], "mha_bwd_d128_causal");
  EXPECT_EQ(tasks[4]["workload_uuid"], "c119b3f0-c051-5e96-9c2a-2268d992fe1a");
  for (const auto& task : tasks) EXPECT_EQ(task["arch"], "sm_90a");
}

TEST(TasksCli, ListTableShowsEveryTask) {
  auto result = run_cli({"tasks", "list"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_TRUE(contains(result.stdout_text, "gqa_ragged_prefill_causal_h32_kv4_d128"));
  EXPECT_TRUE(contains(result.stdout_text, "A[8192,5120] B[7168,5120] -> C[8192,7168]"));
  EXPECT_TRUE(contains(result.stdout_text, "21 tasks"));
}

TEST(TasksCli, ShowGemmJsonContainsTheSignature) {
  auto result = run_cli({"tasks", "show", "gemm_n7168_k5120", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_TRUE(contains(result.stdout_text,
                       "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, "
                       "int64_t M, int64_t N, int64_t K, cudaStream_t stream)"));
  auto json = parse_json(result.stdout_text, "stdout");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ((*json)["target_families"].dump(), R"(["GMMA","TMA"])");
  EXPECT_EQ((*json)["tolerance"].dump(), R"({"atol":0.01,"rtol":0.01})");
  EXPECT_EQ((*json)["flops"].get<double>(), 2.0 * 8192 * 7168 * 5120);
  EXPECT_EQ((*json)["definition"]["name"], "gemm_n7168_k5120");
}

TEST(TasksCli, ShowTextHasAllSections) {
  auto result = run_cli({"tasks", "show", "mha_with_lse_d128"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  for (const char* part : {"arch:              sm_90a", "reference backend: cudnn_sdpa_fwd",
                           "tolerance:         atol=0.01 rtol=0.01", "FLOPs:", "minimum bytes:",
                           "float* LSE, int64_t B, int64_t H, int64_t D, int64_t S"})
    EXPECT_TRUE(contains(result.stdout_text, part)) << part << "\n" << result.stdout_text;
}

TEST(TasksCli, UnknownTaskIsOneLineErrorWithSuggestion) {
  auto result = run_cli({"tasks", "show", "mha_with_lse_d12"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.stdout_text, "");
  EXPECT_TRUE(contains(result.stderr_text, "did you mean mha_with_lse_d128"));
  EXPECT_TRUE(contains(result.stderr_text, "ptxbench tasks list"));
  EXPECT_EQ(split_lines(trim(result.stderr_text)).size(), 1u);
}

// --rung: a rung the replay list no longer names (the causal forward's rung 2, replaced by
// rung 3 in turn 2) renders from the last turn's folder with its defines; a listed one renders
// as its turn; an unknown one names what was looked for.
TEST(TasksCli, SolutionRendersARungByName) {
  auto rung2 = run_cli(
      {"tasks", "solution", "mha_with_lse_d128_causal", "--rung", "rung2_warp_specialized"});
  ASSERT_EQ(rung2.exit_code, 0) << rung2.stderr_text;
  auto file = read_file(
      std::string(PTXB_SOURCE_DIR) + "/solutions/mha_with_lse_d128/rung2_warp_specialized.cu",
      1 << 20);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(rung2.stdout_text, "#define PTXB_CAUSAL 1\n" + file.value());
  auto listed = run_cli({"tasks", "solution", "mha_bwd_d128_causal", "--rung", "rung1_tma_wgmma"});
  auto turn1 = run_cli({"tasks", "solution", "mha_bwd_d128_causal", "--turn", "1"});
  ASSERT_EQ(listed.exit_code, 0) << listed.stderr_text;
  EXPECT_EQ(listed.stdout_text, turn1.stdout_text);
  auto unknown = run_cli({"tasks", "solution", "gemm_n7168_k5120", "--rung", "rung9_none"});
  EXPECT_NE(unknown.exit_code, 0);
  EXPECT_TRUE(contains(unknown.stderr_text, "no rung 'rung9_none'")) << unknown.stderr_text;
  auto both = run_cli(
      {"tasks", "solution", "gemm_n7168_k5120", "--rung", "rung1_tma_wgmma", "--turn", "1"});
  EXPECT_EQ(both.exit_code, 2) << both.stderr_text;
}

TEST(TasksCli, SolutionPrintsWhatReplayAnswers) {
  // Default: the last turn, the fastest rung; a causal task renders its base file with the define.
  auto last = run_cli({"tasks", "solution", "mha_with_lse_d128_causal"});
  ASSERT_EQ(last.exit_code, 0) << last.stderr_text;
  auto file = read_file(
      std::string(PTXB_SOURCE_DIR) + "/solutions/mha_with_lse_d128/rung3_tuned.cu", 1 << 20);
  ASSERT_TRUE(file.ok());
  EXPECT_EQ(last.stdout_text, "#define PTXB_CAUSAL 1\n" + file.value());
  auto first = run_cli({"tasks", "solution", "mha_bwd_d128", "--turn", "1"});
  ASSERT_EQ(first.exit_code, 0) << first.stderr_text;
  EXPECT_TRUE(contains(first.stdout_text, "rung 1"));
  EXPECT_FALSE(contains(first.stdout_text, "#include \"bwd_common.cuh\""));  // inlined

  auto list = run_cli({"tasks", "solution", "mha_bwd_d128_causal", "--list"});
  ASSERT_EQ(list.exit_code, 0) << list.stderr_text;
  EXPECT_EQ(list.stdout_text,
            "mha_bwd_d128_causal 1 mha_bwd_d128/rung1_tma_wgmma.cu with PTXB_CAUSAL=1\n"
            "mha_bwd_d128_causal 2 mha_bwd_d128/rung3_fused_dq.cu with PTXB_CAUSAL=1\n");
  auto past = run_cli({"tasks", "solution", "mha_bwd_d128", "--turn", "3"});
  EXPECT_EQ(past.exit_code, 2);  // a flag value out of range: a usage error
  EXPECT_TRUE(contains(past.stderr_text, "lists 2 replay turns, not 3")) << past.stderr_text;
  // The Blackwell tasks have no expert rung (every H100 task has one since 2026-12-02).
  auto unknown = run_cli({"tasks", "solution", "gemm_n7168_k5120_sm100a"});
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_TRUE(contains(unknown.stderr_text, "no replay kernel for task")) << unknown.stderr_text;
}

TEST(TasksCli, UnknownSuiteFails) {
  auto result = run_cli({"tasks", "list", "--suite", "paper-h999"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.stderr_text, "unknown suite 'paper-h999'"));
}

TEST(TasksCli, ExtraTaskSetFromEnvironment) {
  // A user set that reuses the hand-written test set plus a manifest.
  auto root = make_temp_directory("ptxb-userset");
  ASSERT_TRUE(root.ok());
  const std::string source = std::string(PTXB_TESTDATA_DIR) + "/traceset";
  ASSERT_TRUE(make_directories(*root + "/definitions/gemm").ok());
  ASSERT_TRUE(make_directories(*root + "/workloads/gemm").ok());
  for (const char* file :
       {"/definitions/gemm/gemm_n256_k128.json", "/workloads/gemm/gemm_n256_k128.jsonl"})
    ASSERT_TRUE(write_file_atomic(*root + file, read_file(source + file, 1 << 20).value()).ok());
  ASSERT_TRUE(write_file_atomic(*root + "/tasks.json", R"({"format": "ptxbench-tasks/1",
    "tasks": [{"name": "my_gemm", "suites": ["mine"], "definition": "gemm_n256_k128",
      "workload_uuid": "0b6f3a52-5d0e-4a57-9a55-4d1f2b7b1a02", "arch": "sm_90a",
      "target_families": ["GMMA"], "reference_backend": "cublaslt_gemm",
      "prompt_variants": ["base"], "cost_model": "gemm"}]})")
                  .ok());
  auto result =
      run_cli({"tasks", "list", "--suite", "mine", "--json"}, {"PTXBENCH_TASKS_DIR=" + *root});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_TRUE(contains(result.stdout_text, "\"my_gemm\""));
  auto flag = run_cli({"--tasks-dir", *root, "tasks", "show", "my_gemm", "--json"});
  ASSERT_EQ(flag.exit_code, 0) << flag.stderr_text;
  EXPECT_TRUE(contains(flag.stdout_text, "\"workload_name\": \"gemm_n256_k128_M512\""));
  remove_tree(*root);
}

TEST(TasksCli, HelpWorks) {
  for (auto args : {std::vector<std::string>{"tasks", "--help"},
                    std::vector<std::string>{"tasks", "list", "--help"},
                    std::vector<std::string>{"tasks", "show", "--help"},
                    std::vector<std::string>{"validate", "--help"}}) {
    auto result = run_cli(args);
    EXPECT_EQ(result.exit_code, 0) << join(args, " ");
    EXPECT_TRUE(contains(result.stdout_text, "--json") || contains(result.stdout_text, "list"))
        << result.stdout_text;
  }
}

}  // namespace
}  // namespace ptxb
