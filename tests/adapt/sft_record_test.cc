// The SFT record formats: the 5-message Fixit row and the 3-message KernelGen row with the loss
// on the last message only, the token-length drop, test-kernel leakage drops, the seeded
// shuffle and the manifest.
#include <gtest/gtest.h>

#include "adapt/rationale.h"
#include "adapt/sft_record.h"
#include "adapt/source_tokens.h"
#include "core/sha256.h"
#include "core/strings.h"

namespace ptxb::adapt {
namespace {

SftExample fixit_example(const std::string& id) {
  SftExample e;
  e.id = id;
  e.kind = "fixit";
  e.task = "gemm_n7168_k5120";
  e.system = "SYS";
  e.task_message = "TASK";
  e.wrong_kernel = "void run() { broken(1); }";
  e.feedback = "COMPILE_ERROR: broken";
  e.analysis = "I see the call is undefined.";
  e.plan = "I will call fixed() instead.";
  e.fixed_kernel = "void run() { fixed(\"" + id + "\"); }\n";
  return e;
}

TEST(SftRecord, FixitRowHasFiveMessagesAndLossOnTheLastOnly) {
  const Json row = chat_row(fixit_example("a"));
  ASSERT_EQ(row["messages"].size(), 5u);
  const std::vector<std::string> roles = {"system", "user", "assistant", "user", "assistant"};
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(row["messages"][i]["role"], roles[i]);
    EXPECT_EQ(row["messages"][i]["loss"], i == 4);
  }
  EXPECT_EQ(row["messages"][2]["content"], "```cuda\nvoid run() { broken(1); }\n```");
  EXPECT_EQ(row["messages"][3]["content"], "COMPILE_ERROR: broken");
  EXPECT_EQ(row["messages"][4]["content"],
            "<think>\nI see the call is undefined.\n\nI will call fixed() instead.\n</think>\n\n"
            "```cuda\nvoid run() { fixed(\"a\"); }\n```");
}

TEST(SftRecord, KernelGenRowHasThreeMessages) {
  SftExample e = fixit_example("k");
  e.kind = "kernelgen";
  e.wrong_kernel.clear();
  e.feedback.clear();
  const Json row = chat_row(e);
  ASSERT_EQ(row["messages"].size(), 3u);
  EXPECT_EQ(row["messages"][2]["role"], "assistant");
  EXPECT_EQ(row["messages"][2]["loss"], true);
  EXPECT_EQ(row["messages"][1]["loss"], false);
  const Json four = four_part_row(fixit_example("a"));
  EXPECT_EQ(four["wrong_code"], "void run() { broken(1); }");
  EXPECT_EQ(four["correct_code"], "void run() { fixed(\"a\"); }\n");
}

TEST(SftRecord, DropsOverLongRowsHoldoutsAndTestKernels) {
  SftExample long_row = fixit_example("long");
  long_row.feedback = std::string(300000, 'x');  // 300 kB ≈ 85.7k estimated tokens
  SftExample held = fixit_example("held");
  held.task = "mha_bwd_d128";
  ExportOptions options;
  options.holdout_tasks = {"mha_bwd_d128"};
  // The test kernel is a renamed copy of leaked's fixed kernel.
  options.test_kernels = {
      {canonical_source_hash("void run() {\n  other(\"leak\");  // renamed\n}"), "t.cu"}};
  auto out = export_records({fixit_example("a"), long_row, held, fixit_example("leak")}, options);
  ASSERT_TRUE(out.ok());
  const Json& counts = out->manifest["counts"];
  EXPECT_EQ(counts["input"], 4);
  EXPECT_EQ(counts["dropped_by_reason"]["over_token_limit"], 1);
  EXPECT_EQ(counts["dropped_by_reason"]["holdout_task"], 1);
  EXPECT_EQ(counts["dropped_by_reason"]["same_as_test_kernel"], 1);
  EXPECT_EQ(counts["written"], 1);
  EXPECT_EQ(out->manifest["drops"][0].contains("detail"), true);
}

TEST(SftRecord, ShuffleIsSeededAndManifestHashesEveryPart) {
  std::vector<SftExample> examples;
  for (int i = 0; i < 8; ++i) examples.push_back(fixit_example("e" + std::to_string(i)));
  ExportOptions options;
  options.seed = 7;
  auto a = export_records(examples, options);
  std::reverse(examples.begin(), examples.end());
  auto b = export_records(examples, options);
  options.seed = 8;
  auto c = export_records(examples, options);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->jsonl, b->jsonl);  // input order does not matter, the seed does
  EXPECT_NE(a->jsonl, c->jsonl);
  EXPECT_EQ(a->manifest["counts"]["written"], 8);
  EXPECT_EQ(a->manifest["file_sha256"], sha256_hex(a->jsonl));
  const Json& first = a->manifest["rows"][0];
  EXPECT_EQ(first["message_sha256"].size(), 5u);
  EXPECT_EQ(first["row_sha256"], sha256_hex(split_lines(a->jsonl)[0]));
}

TEST(Rationale, ChecksShapeLengthAndQuoting) {
  RationaleItem item{"i", "TASK", "int a = 0; // the original line stays the same", "COMPILE_ERROR",
                     "int a = 0; // the original line stays the same\nasm(\"fence.proxy.async."
                     "shared::cta;\" ::: \"memory\");\n"};
  RationaleOptions options;
  options.min_chars = 20;
  options.max_chars = 400;
  auto good = check_rationale(
      "<analysis>I see the fence is missing before the TMA read.</analysis>"
      "<plan>I add a proxy fence after the shared store.</plan>",
      item, options);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good->plan, "I add a proxy fence after the shared store.");
  EXPECT_EQ(check_rationale("no tags", item, options).error().code, "malformed");
  EXPECT_EQ(check_rationale("<analysis>a</analysis><plan>b</plan>", item, options).error().code,
            "too_short");
  EXPECT_EQ(check_rationale("<analysis>" + std::string(500, 'a') + "</analysis><plan>b</plan>",
                            item, options)
                .error()
                .code,
            "too_long");
  EXPECT_EQ(check_rationale("<analysis>I add asm(\"fence.proxy.async.shared::cta;\" ::: "
                            "\"memory\"); now</analysis><plan>as said above, exactly</plan>",
                            item, options)
                .error()
                .code,
            "quotes_fixed_kernel");
  // A line the failing kernel already had may be quoted.
  EXPECT_TRUE(check_rationale("<analysis>The line int a = 0; // the original line stays the "
                              "same is fine.</analysis><plan>I keep it as is.</plan>",
                              item, options)
                  .ok());
}

}  // namespace
}  // namespace ptxb::adapt
