// `ptxbench prompt` end to end: the built binary, the built-in task suite and the real packs
// (or the fixture packs where only composition is under test).
#include <gtest/gtest.h>

#include <string>

#include "cli_test_util.h"
#include "core/json_io.h"
#include "core/strings.h"

namespace ptxb {
namespace {

using testing::run_cli;

const std::string kRealPacks = std::string(PTXB_SOURCE_DIR) + "/packs";
const std::string kFixturePacks = std::string(PTXB_TESTDATA_DIR) + "/packs_fixture";
const std::string kGemmSignature =
    "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, "
    "int64_t N, int64_t K, cudaStream_t stream)";

TEST(PromptCli, PrintsSystemPromptFirstUserMessageAndSizes) {
  auto result = run_cli({"prompt", "--packs-dir", kRealPacks, "--task", "gemm_n7168_k5120",
                         "--variant", "base+warp_specialization"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  const std::string& out = result.stdout_text;
  EXPECT_TRUE(contains(out, "===== system prompt (")) << out.substr(0, 400);
  EXPECT_TRUE(contains(out, "===== first user message ("));
  EXPECT_TRUE(contains(out, "```cuda\n" + kGemmSignature + ";\n```"));
  EXPECT_TRUE(contains(out, "## 5. Expert pattern: warp specialization"));
  EXPECT_TRUE(contains(out, "\"name\": \"gemm_n7168_k5120\""));
  EXPECT_FALSE(contains(out, "\"tags\""));
  EXPECT_TRUE(contains(out, "M = 8192 (var)"));
  EXPECT_TRUE(contains(out, "tokens approximate"));
}

TEST(PromptCli, JsonHasExactTextsAndConsistentSizes) {
  auto result = run_cli({"prompt", "--packs-dir", kRealPacks, "--task", "mha_with_lse_d128",
                         "--variant", "base+fa3_fwd", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  auto json = parse_json(result.stdout_text, "stdout");
  ASSERT_TRUE(json.ok()) << json.error().message;
  const Json& prompt = json.value();
  EXPECT_EQ(prompt["variant"], "base+fa3_fwd");
  EXPECT_EQ(prompt["arch"], "sm_90a");
  EXPECT_EQ(prompt["pack"], "hopper");
  const std::string system = prompt["system"].get<std::string>();
  EXPECT_EQ(prompt["sizes"]["system"]["bytes"].get<std::size_t>(), system.size());
  EXPECT_TRUE(contains(system,
                       "float* LSE, int64_t B, int64_t H, int64_t D, int64_t S, "
                       "cudaStream_t stream);"));
  EXPECT_EQ(prompt["task_variants"],
            Json::parse(R"(["base", "base+fa3_fwd", "base+fa3_fwd_overlap"])"));
}

TEST(PromptCli, EveryPaperTaskVariantResolvesInItsPack) {
  for (const char* task : {"gemm_n7168_k5120", "mha_with_lse_d128_causal", "mha_bwd_d128"}) {
    auto result =
        run_cli({"prompt", "--packs-dir", kRealPacks, "--list-variants", "--task", task, "--json"});
    ASSERT_EQ(result.exit_code, 0) << task << ": " << result.stderr_text;
    auto json = parse_json(result.stdout_text, "stdout");
    ASSERT_TRUE(json.ok());
    int defaults = 0;
    for (const auto& row : json.value()["variants"]) {
      EXPECT_EQ(row["arch"], "sm_90a");
      if (row["task_default"].get<bool>()) ++defaults;
    }
    EXPECT_EQ(defaults, 3) << task;
  }
}

TEST(PromptCli, ListVariantsWithoutTaskCoversEveryArchitecture) {
  auto result = run_cli({"prompt", "--packs-dir", kRealPacks, "--list-variants"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_TRUE(contains(result.stdout_text, "sm_90a"));
  EXPECT_TRUE(contains(result.stdout_text, "sm_100a"));
  EXPECT_TRUE(contains(result.stdout_text, "base+two_kernel_bwd_fwd_context"));
  EXPECT_TRUE(contains(result.stdout_text, "params+wrappers+contracts"));
  EXPECT_TRUE(contains(result.stdout_text, "approximate"));
}

TEST(PromptCli, ListVariantsReportsABrokenPack) {
  // The fixture's beta pack has no contracts.md: listing must fail and name the file.
  auto broken = run_cli({"prompt", "--packs-dir", kFixturePacks, "--list-variants", "--json"});
  EXPECT_NE(broken.exit_code, 0);
  EXPECT_TRUE(contains(broken.stderr_text, "beta/contracts.md")) << broken.stderr_text;
}

TEST(PromptCli, UnknownVariantIsAnErrorListingKnownTags) {
  auto result = run_cli({"prompt", "--packs-dir", kRealPacks, "--task", "gemm_n7168_k5120",
                         "--variant", "base+nope"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.stderr_text, "unknown variant tag \"base+nope\""))
      << result.stderr_text;
  EXPECT_TRUE(contains(result.stderr_text, "base+cluster_multicast"));
}

TEST(PromptCli, UnknownTaskIsAnError) {
  auto result =
      run_cli({"prompt", "--packs-dir", kRealPacks, "--task", "no_such_task", "--variant", "base"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(contains(result.stderr_text, "no_such_task")) << result.stderr_text;
}

TEST(PromptCli, MissingVariantIsAUsageError) {
  auto result = run_cli({"prompt", "--packs-dir", kRealPacks, "--task", "gemm_n7168_k5120"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_TRUE(contains(result.stderr_text, "--variant")) << result.stderr_text;
}

}  // namespace
}  // namespace ptxb
