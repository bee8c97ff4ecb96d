// `ptxbench kernelgen collect|reason|export` end to end as a user runs it: two recorded run
// directories (one per task), a scripted teacher on a loopback OpenAI-compatible server, and
// the exported records compared with goldens (testdata/adapt/kernelgen/). Every kind of turn
// that must not become a KernelGen example is in the runs and must be skipped for its reason.
#include <gtest/gtest.h>

#include <cstdlib>

#include "../cli/cli_test_util.h"
#include "../support/http_test_server.h"
#include "adapt/bpe_tokenizer.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "run_dir_fixture.h"

namespace ptxb {
namespace {

constexpr const char* kGemm = "gemm_n7168_k5120";
constexpr const char* kAttention = "gqa_paged_decode_h32_kv8_d128_ps1";
constexpr const char* kDynamic = "dynamic_present";

const std::string kGolden = std::string(PTXB_TESTDATA_DIR) + "/adapt/kernelgen/";

// Rationales: the first answer is junk (asked again), every later one is good, and names the
// kernel it explains so that each row's rationale is its own.
testing::ScriptedResponse kernelgen_teacher(const testing::ScriptedRequest& request, int& calls) {
  if (calls++ == 0) return testing::openai_answer("Looks fine to me.");
  const std::string kernel = contains(request.body, "tma_gemm") ? "the TMA GEMM" : "the decode";
  return testing::openai_answer(
      "<analysis>I start from what the task asks for: " + kernel +
      " must run the target instructions on the GPU, so the main loop has to be built around "
      "them rather than around a scalar fallback.</analysis>\n<plan>I stage the operands in "
      "shared memory, issue the target instructions from one warpgroup, and keep the epilogue "
      "simple so that correctness is easy to see.</plan>");
}

class KernelGenCli : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = make_temp_directory("ptxb-kernelgen-cli").value();
    using testing::FixtureTurn;
    testing::write_fixture_run(
        tmp_ + "/gemm", kGemm,
        {{"t0", 1, "PASSED", "void run() { tma_gemm(128); }", 1.40, kDynamic},
         {"t0", 2, "PASSED", "void run() { slow_gemm(); }", 0.50, kDynamic},
         {"t1", 1, "PASSED", "void run() { scalar_gemm(); }", 2.00, "dynamic_not_executed"},
         {"t1", 2, "COMPILE_ERROR", "void run() { broken(; }"},
         {"t2", 1, "PASSED", "void run() {\n  tma_gemm(128);  // same, reformatted\n}", 1.20,
          kDynamic},
         {"t3", 1, "PASSED", "void run() { other_gemm(64); }", 1.10, kDynamic},
         {"t4", 1, "PASSED", "void run() { unmeasured(); }", std::nullopt, kDynamic}});
    testing::write_fixture_run(
        tmp_ + "/attention", kAttention,
        {{"t0", 1, "PASSED", "void run() { decode(8); }", 1.05, kDynamic},
         {"t1", 1, "REWARD_HACK", "void run() { cheat(); }", 9.0, kDynamic}});
    server_ = std::make_unique<testing::ScriptedHttpServer>(
        [this](const testing::ScriptedRequest& r) { return kernelgen_teacher(r, calls_); });
  }
  void TearDown() override {
    server_->stop();
    remove_tree(tmp_);
  }
  ProcessResult kernelgen(std::vector<std::string> args) {
    args.insert(args.begin(), "kernelgen");
    return testing::run_cli(std::move(args));
  }
  std::string teacher_spec() const { return "openai:teacher@" + server_->base_url() + "/v1"; }

  std::string tmp_;
  int calls_ = 0;
  std::unique_ptr<testing::ScriptedHttpServer> server_;
};

TEST_F(KernelGenCli, HelpAndBadInput) {
  ProcessResult help = kernelgen({"--help"});
  ASSERT_EQ(help.exit_code, 0);
  for (const char* word : {"collect", "reason", "export", "Examples:"})
    EXPECT_NE(help.stdout_text.find(word), std::string::npos) << word;
  EXPECT_EQ(kernelgen({}).exit_code, 2);
  ProcessResult no_work = kernelgen({"reason", "--work", tmp_, "--teacher", teacher_spec()});
  EXPECT_EQ(no_work.exit_code, 2);
  EXPECT_NE(no_work.stderr_text.find("kernelgen collect"), std::string::npos)
      << no_work.stderr_text;
  ProcessResult bad =
      kernelgen({"collect", tmp_ + "/gemm", "--out", tmp_ + "/w", "--min-speedup", "-1"});
  EXPECT_EQ(bad.exit_code, 2) << bad.stderr_text;
  EXPECT_EQ(server_->request_count(), 0);
}

TEST_F(KernelGenCli, CollectReasonExportMatchGoldens) {
  const std::string work = tmp_ + "/work";
  ProcessResult collected =
      kernelgen({"collect", tmp_ + "/gemm", tmp_ + "/attention", "--min-speedup", "1.0",
                 "--per-task-cap", "1", "--out", work});
  ASSERT_EQ(collected.exit_code, 0) << collected.stderr_text;
  EXPECT_TRUE(starts_with(collected.stdout_text, "2 of 9 turns taken")) << collected.stdout_text;
  const Json manifest = read_json_file(work + "/collect-manifest.json").value();
  const Json expected_skips{{"below_min_speedup", 1},    {"duplicate_source", 1},
                            {"not_passed", 2},           {"over_per_task_cap", 1},
                            {"speedup_not_measured", 1}, {"target_not_executed", 1}};
  EXPECT_EQ(manifest["counts"]["skipped_by_reason"], expected_skips);
  for (const Json& s : manifest["skipped"])
    if (s["reason"] == "duplicate_source")  // the reformatted copy names the kernel it repeats
      EXPECT_EQ(s["detail"],
                "same canonical source as student__" + std::string(kGemm) + "__base__t0__turn1");
  // Deterministic: a second collect writes the same bytes.
  ASSERT_EQ(kernelgen({"collect", tmp_ + "/gemm", tmp_ + "/attention", "--per-task-cap", "1",
                       "--out", tmp_ + "/again"})
                .exit_code,
            0);
  EXPECT_EQ(read_file(work + "/kernels.jsonl", 1u << 20).value(),
            read_file(tmp_ + "/again/kernels.jsonl", 1u << 20).value());

  const std::vector<std::string> reason = {"reason",    "--work",       work,
                                           "--teacher", teacher_spec(), "--json"};
  ProcessResult reasoned = kernelgen(reason);
  ASSERT_EQ(reasoned.exit_code, 0) << reasoned.stderr_text;
  const Json counts = parse_json(reasoned.stdout_text, "stdout").value();
  EXPECT_EQ(counts["kept"], 2);
  EXPECT_EQ(counts["rejected_answers"]["malformed"], 1);
  const int requests = server_->request_count();
  ProcessResult again = kernelgen(reason);  // resumed: nothing asked twice
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_EQ(parse_json(again.stdout_text, "stdout").value()["already_decided"], 2);
  EXPECT_EQ(server_->request_count(), requests);

  for (const std::string format : {"chat-jsonl", "four-part"}) {
    const std::string out = tmp_ + "/kernelgen." + format + ".jsonl";
    ProcessResult exported =
        kernelgen({"export", "--work", work, "--out", out, "--format", format, "--seed", "3"});
    ASSERT_EQ(exported.exit_code, 0) << exported.stderr_text;
    const std::string golden = kGolden + format + ".jsonl";
    if (std::getenv("PTXB_UPDATE_GOLDEN"))  // regenerate after a deliberate format change
      ASSERT_TRUE(write_file_atomic(golden, read_file(out, 1u << 20).value()).ok());
    EXPECT_EQ(read_file(out, 1u << 20).value(), read_file(golden, 1u << 20).value()) << format;
  }
  const Json export_manifest =
      read_json_file(tmp_ + "/kernelgen.chat-jsonl.jsonl.manifest.json").value();
  EXPECT_EQ(export_manifest["counts"]["written_by_kind"]["kernelgen"], 2);
  EXPECT_EQ(export_manifest["counts"]["collected_without_rationale"], 0);

  ProcessResult held =
      kernelgen({"export", "--work", work, "--out", tmp_ + "/h.jsonl", "--holdout-task", kAttention,
                 "--heldout-run", tmp_ + "/gemm", "--json"});
  ASSERT_EQ(held.exit_code, 0) << held.stderr_text;
  const Json held_counts = parse_json(held.stdout_text, "stdout").value();
  EXPECT_EQ(held_counts["written"], 0);
  EXPECT_EQ(held_counts["dropped_by_reason"]["holdout_task"], 1);
  EXPECT_EQ(held_counts["dropped_by_reason"]["same_as_test_kernel"], 1);
}

// --tokenizer counts every row with the model's own tokenizer.json instead of the estimate:
// a limit between a row's two counts keeps it under one and drops it under the other.
TEST_F(KernelGenCli, TokenizerCountDecidesWhatIsDropped) {
  const std::string work = tmp_ + "/work";
  ASSERT_EQ(kernelgen({"collect", tmp_ + "/gemm", tmp_ + "/attention", "--per-task-cap", "1",
                       "--out", work})
                .exit_code,
            0);
  ASSERT_EQ(kernelgen({"reason", "--work", work, "--teacher", teacher_spec()}).exit_code, 0);
  const std::string tokenizer_path =
      std::string(PTXB_TESTDATA_DIR) + "/adapt/tokenizer/tokenizer.json";
  const auto manifest_of = [&](const std::string& max_tokens, bool with_tokenizer) {
    std::vector<std::string> args = {"export",          "--work",       work,      "--out",
                                     tmp_ + "/t.jsonl", "--max-tokens", max_tokens};
    if (with_tokenizer) args.insert(args.end(), {"--tokenizer", tokenizer_path});
    ProcessResult exported = kernelgen(args);
    EXPECT_EQ(exported.exit_code, 0) << exported.stderr_text;
    return read_json_file(tmp_ + "/t.jsonl.manifest.json").value();
  };

  const Json counted = manifest_of("65536", true);
  EXPECT_EQ(counted["token_count"], "tokenizer: tokenizer.json sha256 " +
                                        sha256_hex(read_file(tokenizer_path, 1u << 20).value()));
  ASSERT_EQ(counted["rows"].size(), 2u);
  // Each row's count is the sum of its messages' counts (no chat-template tokens).
  auto tokenizer = adapt::BpeTokenizer::load(tokenizer_path);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
  std::map<std::string, std::size_t> by_id;
  const std::vector<Json> records = read_jsonl_file(tmp_ + "/t.jsonl").value();
  for (const Json& row : records)
    for (const Json& m : row["messages"])
      by_id[row["id"]] += tokenizer->count(m["content"].get<std::string>());
  for (const Json& row : counted["rows"])
    EXPECT_EQ(row["tokenizer_tokens"], by_id[row["id"]]) << row.dump();

  const Json& row = counted["rows"][0];
  const std::size_t estimate = row["estimated_tokens"], exact = row["tokenizer_tokens"];
  ASSERT_NE(estimate, exact);
  const std::string limit = std::to_string(std::min(estimate, exact));
  const auto dropped = [&](const Json& manifest) {
    for (const Json& drop : manifest["drops"])
      if (drop["id"] == row["id"] && drop["reason"] == "over_token_limit") return true;
    return false;
  };
  EXPECT_EQ(dropped(manifest_of(limit, false)), estimate > exact);
  const Json exact_manifest = manifest_of(limit, true);
  EXPECT_EQ(dropped(exact_manifest), exact > estimate);
  for (const Json& drop : exact_manifest["drops"]) {  // both counts, whichever row it is
    EXPECT_TRUE(drop["detail"].contains("estimated_tokens")) << drop.dump();
    EXPECT_TRUE(drop["detail"].contains("tokenizer_tokens")) << drop.dump();
  }

  // A tokenizer.json it cannot count exactly is an error naming the part, and nothing is
  // written; a missing file is a usage error.
  Json wordpiece = read_json_file(tokenizer_path).value();
  wordpiece["model"]["type"] = "WordPiece";
  ASSERT_TRUE(write_file_atomic(tmp_ + "/wordpiece.json", wordpiece.dump()).ok());
  ProcessResult refused = kernelgen({"export", "--work", work, "--out", tmp_ + "/refused.jsonl",
                                     "--tokenizer", tmp_ + "/wordpiece.json"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.stderr_text.find("model type 'WordPiece' is not supported"), std::string::npos)
      << refused.stderr_text;
  EXPECT_FALSE(path_exists(tmp_ + "/refused.jsonl"));
  EXPECT_EQ(kernelgen({"export", "--work", work, "--out", tmp_ + "/m.jsonl", "--tokenizer",
                       tmp_ + "/no-such.json"})
                .exit_code,
            2);
}

}  // namespace
}  // namespace ptxb
