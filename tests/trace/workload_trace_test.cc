#include <gtest/gtest.h>

#include "trace/schema_json.h"
#include "trace/solution.h"
#include "trace/trace.h"
#include "trace/workload.h"

namespace ptxb {
namespace {

Json parse(const std::string& text) {
  auto document = parse_trace_json(text, "t.json");
  EXPECT_TRUE(document.ok()) << document.error().message;
  return document.ok() ? document.value() : Json();
}

Definition gemm_definition() {
  auto definition = parse_definition(parse(R"({"name": "g", "op_type": "gemm",
    "axes": {"M": {"type": "var"}, "N": {"type": "const", "value": 8}, "K": {"type": "const", "value": 4}},
    "inputs": {"A": {"shape": ["M", "K"], "dtype": "bfloat16"}, "B": {"shape": ["N", "K"], "dtype": "bfloat16"},
               "alpha": {"shape": null, "dtype": "float32"}},
    "outputs": {"C": {"shape": ["M", "N"], "dtype": "bfloat16"}},
    "reference": "def run(A, B, alpha):\n  pass"})"),
                                     "g.json");
  EXPECT_TRUE(definition.ok()) << definition.error().message;
  return definition.value();
}

std::string workload_errors(const std::string& text) {
  Diagnostics diagnostics("w.jsonl:1");
  Workload workload = parse_workload(parse(text), "$.workload", diagnostics);
  check_workload_against(workload, gemm_definition(), "$.workload", diagnostics);
  return diagnostics.ok() ? "" : diagnostics.to_error().message;
}

TEST(Workload, ValidInputSpecs) {
  Diagnostics diagnostics("w");
  Workload workload = parse_workload(parse(R"({"uuid": "u1", "axes": {"M": 16},
    "inputs": {"A": {"type": "random"},
               "B": {"type": "safetensors", "path": "blob/b.safetensors", "tensor_key": "B"},
               "alpha": {"type": "scalar", "value": 0.5}}})"),
                                     "$.workload", diagnostics);
  check_workload_against(workload, gemm_definition(), "$.workload", diagnostics);
  ASSERT_TRUE(diagnostics.ok()) << diagnostics.to_error().message;
  EXPECT_EQ(workload.uuid, "u1");
  ASSERT_EQ(workload.inputs.size(), 3u);
  EXPECT_EQ(workload.inputs[1].second.kind, InputSpec::Kind::kSafetensors);
  EXPECT_EQ(workload.inputs[1].second.tensor_key, "B");
  EXPECT_EQ(workload.inputs[2].second.scalar_value.get<double>(), 0.5);
}

TEST(Workload, VarAxisWithoutValue) {
  const auto errors = workload_errors(R"({"uuid": "u", "axes": {},
    "inputs": {"A": {"type": "random"}, "B": {"type": "random"}, "alpha": {"type": "scalar", "value": 1}}})");
  EXPECT_EQ(errors, "w.jsonl:1: $.workload.axes: var axis 'M' of definition 'g' has no value");
}

TEST(Workload, OnlyVarAxesMayBeBound) {
  const auto errors = workload_errors(R"({"uuid": "u", "axes": {"M": 4, "N": 8, "Z": 1},
    "inputs": {"A": {"type": "random"}, "B": {"type": "random"}, "alpha": {"type": "scalar", "value": 1}}})");
  EXPECT_NE(errors.find("$.workload.axes.N: axis 'N' is const in definition 'g'"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("$.workload.axes.Z: axis 'Z' is not declared by definition 'g'"),
            std::string::npos);
}

TEST(Workload, InputSpecRules) {
  const auto errors = workload_errors(R"({"uuid": "u", "axes": {"M": -1},
    "inputs": {"A": {"type": "scalar", "value": 1}, "B": {"type": "safetensors", "path": "x"},
               "alpha": {"type": "random"}, "D": {"type": "random"}, "E": {"type": "zeros"},
               "F": {"type": "scalar", "value": "one"}}})");
  EXPECT_NE(errors.find("$.workload.axes.M: axis value must be >= 0, got -1"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("$.workload.inputs.A: a 'scalar' spec is given for tensor input 'A'"),
            std::string::npos);
  EXPECT_NE(errors.find("$.workload.inputs.B: missing required field 'tensor_key'"),
            std::string::npos);
  EXPECT_NE(errors.find("$.workload.inputs.alpha: input 'alpha' is a scalar (shape null) and "
                        "needs a 'scalar' spec"),
            std::string::npos);
  EXPECT_NE(errors.find("$.workload.inputs.D: 'D' is not an input of definition 'g'"),
            std::string::npos);
  EXPECT_NE(errors.find("$.workload.inputs.E.type: unknown input type 'zeros'"), std::string::npos);
  EXPECT_NE(errors.find("$.workload.inputs.F.value: expected a number or boolean, got a string"),
            std::string::npos);
}

TEST(Workload, MissingInputSpecAndDeriveExtension) {
  const auto errors = workload_errors(R"({"uuid": "u", "axes": {"M": 1},
    "inputs": {"A": {"type": "random", "ptxbench": {"derive": "reference_forward"}},
               "alpha": {"type": "scalar", "value": 1, "ptxbench": {"derive": "magic"}}}})");
  EXPECT_NE(errors.find("$.workload.inputs: no spec for input 'B' of definition 'g'"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("$.workload.inputs.alpha.ptxbench.derive: unknown value 'magic'"),
            std::string::npos);
  EXPECT_EQ(errors.find("inputs.A"), std::string::npos);
}

constexpr const char* kSolution = R"({"name": "s1", "definition": "g", "author": "me",
  "spec": {"language": "cuda", "target_hardware": ["H100"], "entry_point": "kernel.cu::run"},
  "sources": [{"path": "kernel.cu", "content": "// code"}]})";

TEST(Solution, ParsesEntryPoint) {
  auto solution = parse_solution(parse(kSolution), "s.json");
  ASSERT_TRUE(solution.ok()) << solution.error().message;
  EXPECT_EQ(solution->entry_file(), "kernel.cu");
  EXPECT_EQ(solution->entry_symbol(), "run");
  EXPECT_NE(solution->find_source("kernel.cu"), nullptr);
}

TEST(Solution, ValidationRules) {
  auto solution = parse_solution(parse(R"({"name": "s1", "definition": "g",
    "spec": {"language": "fortran", "target_hardware": [], "entry_point": "kernel.cu:run"},
    "sources": [{"path": "../x.cu", "content": "a"}, {"path": "b.cu", "content": 1},
                {"path": "b.cu", "content": ""}]})"),
                                 "s.json");
  ASSERT_FALSE(solution.ok());
  const auto& errors = solution.error().message;
  EXPECT_NE(errors.find("s.json: $: missing required field 'author'"), std::string::npos) << errors;
  EXPECT_NE(errors.find("$.spec.language: unknown language 'fortran'"), std::string::npos);
  EXPECT_NE(errors.find("$.spec.target_hardware: must list at least one target"),
            std::string::npos);
  EXPECT_NE(errors.find("$.spec.entry_point: 'kernel.cu:run' must have the form 'file::symbol'"),
            std::string::npos);
  EXPECT_NE(errors.find("$.sources[0].path: '../x.cu' must be a relative path without '..'"),
            std::string::npos);
  EXPECT_NE(errors.find("$.sources[1].content: expected a string, got an integer"),
            std::string::npos);
  EXPECT_NE(errors.find("$.sources[2].path: duplicate source path 'b.cu'"), std::string::npos);
}

TEST(Solution, EntryFileMustBeASource) {
  Json document = parse(kSolution);
  document["spec"]["entry_point"] = "main.cu::run";
  auto solution = parse_solution(document, "s.json");
  ASSERT_FALSE(solution.ok());
  EXPECT_EQ(solution.error().message,
            "s.json: $.spec.entry_point: entry file 'main.cu' is not among $.sources");
}

TEST(TraceStatus, MappingToSchemaStatus) {
  EXPECT_EQ(schema_status(PtxbStatus::kForbidden), EvaluationStatus::kCompileError);
  EXPECT_EQ(schema_status(PtxbStatus::kMemoryError), EvaluationStatus::kRuntimeError);
  EXPECT_EQ(schema_status(PtxbStatus::kRewardHack), EvaluationStatus::kRuntimeError);
  EXPECT_EQ(schema_status(PtxbStatus::kInvalidReference), EvaluationStatus::kRuntimeError);
  EXPECT_EQ(schema_status(PtxbStatus::kInfraError), EvaluationStatus::kRuntimeError);
  EXPECT_EQ(schema_status(PtxbStatus::kTimeout), EvaluationStatus::kTimeout);
  EXPECT_EQ(schema_status(PtxbStatus::kPassed), EvaluationStatus::kPassed);
  for (auto name : {"PASSED", "INCORRECT_SHAPE", "INCORRECT_NUMERICAL", "INCORRECT_DTYPE",
                    "RUNTIME_ERROR", "COMPILE_ERROR", "TIMEOUT"}) {
    auto status = parse_evaluation_status(name);
    ASSERT_TRUE(status) << name;
    EXPECT_EQ(evaluation_status_name(*status), name);
  }
  EXPECT_FALSE(parse_evaluation_status("FORBIDDEN"));
  EXPECT_EQ(ptxb_status_name(*parse_ptxb_status("REWARD_HACK")), "REWARD_HACK");
}

constexpr const char* kWorkload =
    R"("definition": "g", "workload": {"uuid": "u", "axes": {"M": 1}, "inputs": {}})";

TEST(Trace, EvaluationRules) {
  auto trace = parse_trace(parse(std::string("{") + kWorkload + R"(, "solution": "s1",
    "evaluation": {"status": "FORBIDDEN", "environment": {}, "timestamp": "",
                   "correctness": {"max_absolute_error": -1}}})"),
                           "t.jsonl:3");
  ASSERT_FALSE(trace.ok());
  const auto& errors = trace.error().message;
  EXPECT_NE(errors.find("t.jsonl:3: $.evaluation.status: unknown status 'FORBIDDEN'"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("$.evaluation.environment: missing required field 'hardware'"),
            std::string::npos);
  EXPECT_NE(errors.find("$.evaluation.timestamp: must not be empty"), std::string::npos);
  EXPECT_NE(errors.find("$.evaluation.correctness.max_absolute_error: must be >= 0"),
            std::string::npos);
}

TEST(Trace, StatusAndMetricBlocksMustAgree) {
  auto trace = parse_trace(parse(std::string("{") + kWorkload + R"(, "solution": "s1",
    "evaluation": {"status": "PASSED", "environment": {"hardware": "H200"}, "timestamp": "t",
                   "ptxbench": {"status": "REWARD_HACK", "reason": "foreign_stream"}}})"),
                           "t.jsonl:1");
  ASSERT_FALSE(trace.ok());
  const auto& errors = trace.error().message;
  EXPECT_NE(errors.find("$.evaluation: status PASSED requires 'correctness'"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("$.evaluation: status PASSED requires 'performance'"), std::string::npos);
  EXPECT_NE(errors.find("$.evaluation.ptxbench.status: REWARD_HACK maps to schema status "
                        "RUNTIME_ERROR, but $.evaluation.status is PASSED"),
            std::string::npos);
}

TEST(Trace, PtxbenchExtensionRoundTrips) {
  const Json document = parse(std::string("{") + kWorkload + R"(, "solution": "s1",
    "evaluation": {"status": "RUNTIME_ERROR", "environment": {"hardware": "H200"}, "timestamp": "t",
                   "log": "", "ptxbench": {"status": "MEMORY_ERROR", "reason": "illegal_address"}},
    "extra": 1})");
  auto trace = parse_trace(document, "t.jsonl:1");
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  EXPECT_EQ(*trace->evaluation->ptxbench_status, PtxbStatus::kMemoryError);
  EXPECT_EQ(trace->evaluation->ptxbench_reason, "illegal_address");
  EXPECT_EQ(trace_to_json(*trace).dump(), document.dump());
  EXPECT_FALSE(trace->is_workload_trace());
}

}  // namespace
}  // namespace ptxb
