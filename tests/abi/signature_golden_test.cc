// Golden tests of the `run` signature (design.md §3.2) of every built-in task, generated from the
// task definitions in tasks/. testdata/signatures/builtin_tasks.txt is the reviewed expectation;
// when a definition changes on purpose, regenerate it with
//   build/ptxbench tasks list --json | ... (see the file's header) and review the diff.
#include <gtest/gtest.h>

#include "abi/signature.h"
#include "core/fs.h"
#include "core/strings.h"
#include "tasks/registry.h"
#include "trace/schema_json.h"

namespace ptxb {
namespace {

const TaskRegistry& builtin() {
  static const TaskRegistry registry = [] {
    auto loaded = TaskRegistry::load_sets({builtin_tasks_dir().value()});
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded.ok() ? std::move(loaded).value() : TaskRegistry();
  }();
  return registry;
}

std::string signature_of(const std::string& task_name) {
  const Task* task = builtin().find(task_name);
  EXPECT_NE(task, nullptr) << task_name;
  return task ? make_run_signature(task->definition).declaration() : "";
}

TEST(SignatureGolden, PaperTasks) {
  EXPECT_EQ(signature_of("gemm_n7168_k5120"),
            "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, "
            "int64_t M, int64_t N, int64_t K, cudaStream_t stream)");
  EXPECT_EQ(signature_of("mha_with_lse_d128"),
            "void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, "
            "__nv_bfloat16* O, float* LSE, int64_t B, int64_t H, int64_t D, int64_t S, "
            "cudaStream_t stream)");
  EXPECT_EQ(signature_of("mha_with_lse_d128_causal"), signature_of("mha_with_lse_d128"));
  EXPECT_EQ(signature_of("mha_bwd_d128"),
            "void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, "
            "const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* L, "
            "__nv_bfloat16* dQ, __nv_bfloat16* dK, __nv_bfloat16* dV, int64_t B, int64_t H, "
            "int64_t d, int64_t S, cudaStream_t stream)");
  EXPECT_EQ(signature_of("mha_bwd_d128_causal"), signature_of("mha_bwd_d128"));
}

// Every built-in task, compared line by line with the golden file ("<task>: <signature>").
TEST(SignatureGolden, AllBuiltinTasksMatchGoldenFile) {
  auto golden =
      read_file(std::string(PTXB_TESTDATA_DIR) + "/signatures/builtin_tasks.txt", 1 << 20);
  ASSERT_TRUE(golden.ok()) << golden.error().message;
  std::vector<std::string> expected;
  for (const auto& line : split_lines(*golden))
    if (!line.empty() && line[0] != '#') expected.push_back(line);
  std::vector<std::string> actual;
  for (const Task* task : builtin().list())
    actual.push_back(task->name + ": " + make_run_signature(task->definition).declaration());
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) EXPECT_EQ(actual[i], expected[i]);
}

TEST(Signature, TensorAxisNameClashIsDisambiguated) {
  // Tensor "N" and axis "N"; axis "stream" and a keyword-named axis "int".
  auto document = parse_trace_json(R"({"name": "clash", "op_type": "x",
    "axes": {"N": {"type": "var"}, "stream": {"type": "const", "value": 2},
             "int": {"type": "const", "value": 3}},
    "inputs": {"N": {"shape": ["N", "stream"], "dtype": "float16"},
               "scale": {"shape": null, "dtype": "float32"}},
    "outputs": {"run": {"shape": ["N", "int"], "dtype": "int32"}},
    "reference": "def run(N, scale):\n  pass"})",
                                   "clash.json");
  ASSERT_TRUE(document.ok()) << document.error().message;
  auto definition = parse_definition(*document, "clash.json");
  ASSERT_TRUE(definition.ok()) << definition.error().message;
  const RunSignature signature = make_run_signature(*definition);
  EXPECT_EQ(signature.declaration(),
            "void run(const __half* N, float scale, int32_t* run_, int64_t N_size, "
            "int64_t stream_size, int64_t int_, cudaStream_t stream)");
  ASSERT_EQ(signature.parameters.size(), 7u);
  EXPECT_EQ(signature.parameters[3].source_name, "N");
  EXPECT_EQ(signature.parameters[3].kind, AbiParameter::Kind::kAxis);
  EXPECT_TRUE(signature.parameters[1].scalar);
}

}  // namespace
}  // namespace ptxb
