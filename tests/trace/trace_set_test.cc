#include "trace/trace_set.h"

#include <gtest/gtest.h>

#include "core/fs.h"

namespace ptxb {
namespace {

const std::string kTestdata = PTXB_TESTDATA_DIR;

TEST(TraceSet, LoadsHandWrittenSet) {
  TraceSetLoad load = load_trace_set(kTestdata + "/traceset");
  ASSERT_TRUE(load.diagnostics.ok()) << load.diagnostics.to_error().message;
  ASSERT_EQ(load.set.definitions.size(), 1u);
  EXPECT_EQ(load.set.definitions[0].name, "gemm_n256_k128");
  EXPECT_EQ(load.set.workloads.size(), 2u);
  EXPECT_EQ(load.set.solutions.size(), 1u);
  ASSERT_EQ(load.set.traces.size(), 2u);
  EXPECT_EQ(*load.set.traces[1].trace.evaluation->ptxbench_status, PtxbStatus::kForbidden);
  EXPECT_EQ(load.set.traces[1].line, 2u);
  const TraceRecord* record =
      load.set.find_workload("gemm_n256_k128", "0b6f3a52-5d0e-4a57-9a55-4d1f2b7b1a02");
  ASSERT_NE(record, nullptr);
  EXPECT_EQ(record->trace.workload.axes[0].second, 512);
}

// Builds a scratch set with several independent problems and checks that all are reported.
TEST(TraceSet, ReportsEveryProblemWithFileAndPath) {
  auto root = make_temp_directory("ptxb-traceset");
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE(make_directories(*root + "/definitions/gemm").ok());
  ASSERT_TRUE(make_directories(*root + "/workloads/gemm").ok());
  ASSERT_TRUE(make_directories(*root + "/traces").ok());
  ASSERT_TRUE(write_file_atomic(*root + "/definitions/gemm/g.json", R"({"name": "g",
    "op_type": "gemm", "axes": {"M": {"type": "var"}},
    "inputs": {"A": {"shape": ["M", "X"], "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M"], "dtype": "bfloat16"}}, "reference": "def run(A):\n  pass"})")
                  .ok());
  ASSERT_TRUE(write_file_atomic(*root + "/definitions/gemm/h.json", R"({"name": "h",
    "op_type": "other", "axes": {"M": {"type": "var"}},
    "inputs": {"A": {"shape": ["M"], "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M"], "dtype": "bfloat16"}}, "reference": "def run(A):\n  pass"})")
                  .ok());
  ASSERT_TRUE(write_file_atomic(*root + "/workloads/gemm/h.jsonl",
                                "{\"definition\": \"nope\", \"workload\": {\"uuid\": \"u\", "
                                "\"axes\": {}, \"inputs\": {}}}\n\nnot json\n")
                  .ok());
  ASSERT_TRUE(write_file_atomic(*root + "/traces/t.jsonl", "").ok());
  TraceSetLoad load = load_trace_set(*root);
  const std::string errors = load.diagnostics.to_error().message;
  EXPECT_NE(errors.find("definitions/gemm/g.json: $.inputs.A.shape[1]: axis 'X' is not declared"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("definitions/gemm/h.json: $.op_type: op_type 'other' does not match its "
                        "folder 'gemm'"),
            std::string::npos);
  EXPECT_NE(errors.find("workloads/gemm/h.jsonl:1: $.definition: workloads of 'nope' belong in a "
                        "file named 'nope.jsonl'"),
            std::string::npos);
  EXPECT_NE(errors.find("workloads/gemm/h.jsonl:1: $.definition: definition 'nope' not found"),
            std::string::npos);
  EXPECT_NE(errors.find("h.jsonl:3: malformed JSON"), std::string::npos);
  EXPECT_NE(errors.find("t.jsonl: empty file"), std::string::npos);
  EXPECT_GE(load.diagnostics.size(), 6u);
  remove_tree(*root);
}

TEST(TraceSet, MissingDefinitionsFolder) {
  TraceSetLoad load = load_trace_set(kTestdata + "/invalid");
  EXPECT_NE(load.diagnostics.to_error().message.find("missing definitions/ folder"),
            std::string::npos);
}

TEST(TraceSet, UnboundVarAxisInSet) {
  TraceSetLoad load = load_trace_set(kTestdata + "/invalid/unbound_var_axis");
  EXPECT_EQ(load.diagnostics.to_error().message,
            kTestdata +
                "/invalid/unbound_var_axis/workloads/gemm/gemm_n256_k128.jsonl:1: $.workload.axes: "
                "var axis 'M' of definition "
                "'gemm_n256_k128' has no value");
}

TEST(TraceFile, DetectsKinds) {
  auto definition =
      validate_trace_file(kTestdata + "/traceset/definitions/gemm/gemm_n256_k128.json");
  EXPECT_EQ(definition.kind, TraceFileKind::kDefinition);
  EXPECT_TRUE(definition.diagnostics.ok()) << definition.diagnostics.to_error().message;
  auto solution =
      validate_trace_file(kTestdata + "/traceset/solutions/gemm/gemm_n256_k128_naive.json");
  EXPECT_EQ(solution.kind, TraceFileKind::kSolution);
  auto workloads = validate_trace_file(kTestdata + "/traceset/workloads/gemm/gemm_n256_k128.jsonl");
  EXPECT_EQ(workloads.kind, TraceFileKind::kWorkload);
  EXPECT_EQ(workloads.documents, 2u);
  auto traces = validate_trace_file(kTestdata + "/traceset/traces/gemm/gemm_n256_k128.jsonl");
  EXPECT_EQ(traces.kind, TraceFileKind::kTrace);
  EXPECT_TRUE(traces.diagnostics.ok()) << traces.diagnostics.to_error().message;
  // A lone workload file is still checked against the definition of its enclosing set.
  auto unbound = validate_trace_file(
      kTestdata + "/invalid/unbound_var_axis/workloads/gemm/gemm_n256_k128.jsonl");
  EXPECT_FALSE(unbound.diagnostics.ok());
}

}  // namespace
}  // namespace ptxb
