#include <gtest/gtest.h>

#include "cli_test_util.h"
#include "core/fs.h"
#include "core/json_io.h"
#include "core/strings.h"

namespace ptxb {
namespace {

using testing::run_cli;

const std::string kTestdata = PTXB_TESTDATA_DIR;

// Every rejection: exit 1, nothing on stdout, a last line "ptxbench: error: ...", and the
// expected message somewhere on stderr; never a crash (a signal) or a hang.
void expect_rejected(const std::string& path, const std::string& expected) {
  auto result = run_cli({"validate", path});
  EXPECT_EQ(result.term_signal, 0) << path;
  EXPECT_FALSE(result.timed_out) << path;
  EXPECT_EQ(result.exit_code, 1) << path << "\n" << result.stderr_text;
  EXPECT_EQ(result.stdout_text, "");
  EXPECT_TRUE(contains(result.stderr_text, expected))
      << "expected: " << expected << "\ngot: " << result.stderr_text;
  EXPECT_TRUE(contains(result.stderr_text, "ptxbench: error: ")) << result.stderr_text;
}

TEST(ValidateCli, AcceptsHandWrittenTraceSet) {
  auto result = run_cli({"validate", kTestdata + "/traceset"});
  ASSERT_EQ(result.exit_code, 0) << result.stderr_text;
  EXPECT_TRUE(contains(result.stdout_text,
                       "(trace_set): 1 definitions, 2 workloads, 1 solutions, 2 traces"))
      << result.stdout_text;
}

TEST(ValidateCli, AcceptsTheBuiltinTaskSet) {
  auto result = run_cli({"validate", std::string(PTXB_SOURCE_DIR) + "/tasks", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.stdout_text;
  auto json = parse_json(result.stdout_text, "stdout");
  ASSERT_TRUE(json.ok());
  EXPECT_EQ((*json)["counts"]["definitions"], 16);
  EXPECT_EQ((*json)["ok"], true);
}

TEST(ValidateCli, AcceptsSingleFilesOfEachKind) {
  for (const char* file : {"/traceset/definitions/gemm/gemm_n256_k128.json",
                           "/traceset/workloads/gemm/gemm_n256_k128.jsonl",
                           "/traceset/solutions/gemm/gemm_n256_k128_naive.json",
                           "/traceset/traces/gemm/gemm_n256_k128.jsonl"}) {
    auto result = run_cli({"validate", kTestdata + file});
    EXPECT_EQ(result.exit_code, 0) << file << "\n" << result.stderr_text;
    EXPECT_TRUE(starts_with(result.stdout_text, "OK ")) << result.stdout_text;
  }
}

TEST(ValidateCli, RejectsMissingRequiredField) {
  expect_rejected(kTestdata + "/invalid/missing_field.json",
                  "missing_field.json: $: missing required field 'outputs'");
}

TEST(ValidateCli, RejectsWrongType) {
  expect_rejected(kTestdata + "/invalid/wrong_type.json",
                  "wrong_type.json: $.axes.K.value: expected an integer, got a string");
}

TEST(ValidateCli, RejectsUndeclaredAxis) {
  expect_rejected(kTestdata + "/invalid/undeclared_axis.json",
                  "undeclared_axis.json: $.inputs.A.shape[1]: axis 'Q' is not declared in $.axes");
}

TEST(ValidateCli, RejectsDuplicateTensorNames) {
  expect_rejected(kTestdata + "/invalid/duplicate_tensor.json",
                  "duplicate_tensor.json: $.inputs: duplicate key 'A'");
  expect_rejected(kTestdata + "/invalid/input_output_clash.json",
                  "$.outputs.A: 'A' is both an input and an output");
}

TEST(ValidateCli, RejectsVarAxisWithoutValue) {
  expect_rejected(kTestdata + "/invalid/unbound_var_axis",
                  "workloads/gemm/gemm_n256_k128.jsonl:1: $.workload.axes: var axis 'M' of "
                  "definition 'gemm_n256_k128' has no value");
}

class ValidateCliScratch : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_temp_directory("ptxb-validate");
    ASSERT_TRUE(dir.ok());
    dir_ = *dir;
  }
  void TearDown() override { remove_tree(dir_); }
  std::string dir_;
};

TEST_F(ValidateCliScratch, RejectsNonUtf8) {
  const std::string path = dir_ + "/latin1.json";
  ASSERT_TRUE(write_file_atomic(path, "{\"name\": \"caf\xe9\"}").ok());
  expect_rejected(path, "latin1.json: not UTF-8 text: invalid UTF-8");
}

TEST_F(ValidateCliScratch, RejectsTenMegabyteGarbage) {
  const std::string path = dir_ + "/garbage.json";
  std::string garbage(10u << 20, '\0');
  std::uint32_t state = 12345;
  for (auto& byte : garbage) {
    state = state * 1664525u + 1013904223u;  // any bytes at all, NULs included
    byte = static_cast<char>(state >> 24);
  }
  ASSERT_TRUE(write_file_atomic(path, garbage).ok());
  expect_rejected(path, "garbage.json: file is 10485760 bytes, larger than the limit");
  const std::string lines = dir_ + "/garbage.jsonl";
  ASSERT_TRUE(write_file_atomic(lines, garbage).ok());
  expect_rejected(lines, "garbage.jsonl: file is 10485760 bytes");
}

TEST_F(ValidateCliScratch, RejectsEmptyFile) {
  const std::string path = dir_ + "/empty.json";
  ASSERT_TRUE(write_file_atomic(path, "").ok());
  expect_rejected(path, "empty.json: empty file");
  const std::string lines = dir_ + "/empty.jsonl";
  ASSERT_TRUE(write_file_atomic(lines, "\n\n").ok());
  expect_rejected(lines, "empty.jsonl: empty file");
}

TEST_F(ValidateCliScratch, JsonReportListsEveryError) {
  auto result = run_cli({"validate", kTestdata + "/invalid/wrong_type.json", "--json"});
  EXPECT_EQ(result.exit_code, 1);
  auto json = parse_json(result.stdout_text, "stdout");
  ASSERT_TRUE(json.ok()) << result.stdout_text;
  EXPECT_EQ((*json)["ok"], false);
  EXPECT_EQ((*json)["kind"], "definition");
  ASSERT_GE((*json)["errors"].size(), 1u);
  EXPECT_EQ((*json)["errors"][0]["path"], "$.axes.K.value");
}

TEST_F(ValidateCliScratch, MissingPath) {
  expect_rejected(dir_ + "/nothing-here", "no such file or directory");
}

}  // namespace
}  // namespace ptxb
