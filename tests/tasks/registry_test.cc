#include "tasks/registry.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "core/fs.h"
#include "tasks/manifest.h"
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

std::vector<std::string> names(const std::vector<const Task*>& tasks) {
  std::vector<std::string> out;
  for (const Task* task : tasks) out.push_back(task->name);
  return out;
}

TEST(Registry, PaperH100IsExactlyTheFiveDesignTasks) {
  EXPECT_EQ(
      names(builtin().list("paper-h100")),
      (std::vector<std::string>{"gemm_n7168_k5120", "mha_with_lse_d128", "mha_with_lse_d128_causal",
                                "mha_bwd_d128", "mha_bwd_d128_causal"}));
  EXPECT_EQ(builtin().suites(),
            (std::vector<std::string>{"paper-h100", "heldout-h100", "paper-b200"}));
  EXPECT_EQ(builtin().list("heldout-h100").size(), 11u);
  EXPECT_EQ(builtin().list("paper-b200").size(), 5u);
  EXPECT_EQ(builtin().list().size(), 21u);
}

TEST(Registry, GemmTaskMatchesDesign) {
  const Task* task = builtin().find("gemm_n7168_k5120");
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->arch, "sm_90a");
  EXPECT_EQ(task->target_families, (std::vector<std::string>{"GMMA", "TMA"}));
  EXPECT_EQ(task->reference_backend, "cublaslt_gemm");
  EXPECT_EQ(task->workload.uuid, "94920358-01a8-4c5b-9209-3103fd490e94");
  EXPECT_EQ(task->source_workload_uuid, "94920358-01a8-4c5b-9209-3103fd490e94");
  EXPECT_EQ(task->workload_name(), "gemm_n7168_k5120_M8192");
  EXPECT_EQ(task->axis_values(),
            (std::map<std::string, std::int64_t>{{"K", 5120}, {"M", 8192}, {"N", 7168}}));
  EXPECT_DOUBLE_EQ(task->flops, 2.0 * 8192 * 7168 * 5120);
  EXPECT_DOUBLE_EQ(task->min_bytes, (8192.0 * 5120 + 7168.0 * 5120 + 8192.0 * 7168) * 2);
  EXPECT_DOUBLE_EQ(task->target_speedup, 1.2);
  EXPECT_DOUBLE_EQ(task->tolerance.atol, 1e-2);
  EXPECT_EQ(task->prompt_variants, (std::vector<std::string>{"base", "base+cluster_multicast",
                                                             "base+warp_specialization"}));
}

TEST(Registry, AttentionAxisAndTensorOrder) {
  const Task* forward = builtin().find("mha_with_lse_d128_causal");
  ASSERT_NE(forward, nullptr);
  std::vector<std::string> axes;
  for (const auto& axis : forward->definition.axes) axes.push_back(axis.name);
  EXPECT_EQ(axes, (std::vector<std::string>{"B", "H", "D", "S"}));
  EXPECT_EQ(forward->workload.uuid, "6d2f67a7-225a-4af5-87d3-cbb99b496325");
  std::vector<std::string> tensors;
  for (const auto& tensor : forward->definition.inputs) tensors.push_back(tensor.name);
  for (const auto& tensor : forward->definition.outputs) tensors.push_back(tensor.name);
  EXPECT_EQ(tensors, (std::vector<std::string>{"Q", "K", "V", "O", "LSE"}));
  EXPECT_EQ(forward->definition.outputs[1].dtype, DType::kFloat32);
  EXPECT_EQ(forward->cost_model, "attention_fwd_causal");
  EXPECT_EQ(forward->prompt_variants,
            (std::vector<std::string>{"base", "base+fa3_fwd", "base+fa3_fwd_overlap"}));

  const Task* backward = builtin().find("mha_bwd_d128");
  ASSERT_NE(backward, nullptr);
  axes.clear();
  for (const auto& axis : backward->definition.axes) axes.push_back(axis.name);
  EXPECT_EQ(axes, (std::vector<std::string>{"B", "H", "d", "S"}));
  tensors.clear();
  for (const auto& tensor : backward->definition.inputs) tensors.push_back(tensor.name);
  EXPECT_EQ(tensors, (std::vector<std::string>{"Q", "K", "V", "O", "dO", "L"}));
  // O and L are produced by the reference forward, not drawn at random (design.md §4).
  EXPECT_EQ(backward->workload.find_input("O")->derive, "reference_forward");
  EXPECT_EQ(backward->workload.find_input("L")->derive, "reference_forward");
  EXPECT_EQ(backward->workload.find_input("dO")->derive, "");
  EXPECT_EQ(backward->reference_backend, "cudnn_sdpa_bwd");
  EXPECT_EQ(backward->workload_name(), "mha_bwd_d128_S4096");
}

TEST(Registry, BlackwellTwinsReuseDefinitions) {
  const Task* task = builtin().find("mha_bwd_d128_causal_sm100a");
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->arch, "sm_100a");
  EXPECT_EQ(task->definition.name, "mha_bwd_d128_causal");
  EXPECT_EQ(task->target_families, (std::vector<std::string>{"UTC", "LDTM", "STTM"}));
}

TEST(Registry, UnknownTaskSuggestsCloseNames) {
  auto missing = builtin().get("gemm_n7168_k512");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "unknown task 'gemm_n7168_k512' (did you mean gemm_n7168_k5120, "
            "gemm_n7168_k5120_sm100a?); run `ptxbench tasks list` to see all tasks");
  auto far = builtin().get("conv2d");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.error().message,
            "unknown task 'conv2d'; run `ptxbench tasks list` to see all tasks");
  EXPECT_EQ(builtin().find("conv2d"), nullptr);
}

TEST(Registry, DuplicateTaskAcrossSetsIsAnError) {
  auto twice = TaskRegistry::load_sets({builtin_tasks_dir().value(), builtin_tasks_dir().value()});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("task 'gemm_n7168_k5120' is already defined by the set in"),
            std::string::npos);
}

TEST(Registry, ManifestErrorsNamePathAndProblem) {
  TraceSetLoad load = load_trace_set(builtin_tasks_dir().value());
  ASSERT_TRUE(load.diagnostics.ok());
  auto manifest = parse_trace_json(R"({"format": "ptxbench-tasks/1", "tasks": [
    {"name": "t", "suites": ["s"], "definition": "gemm_n7168_k5120", "workload_uuid": "nope",
     "arch": "sm_100a", "target_families": ["GMMA"], "reference_backend": "cublas",
     "prompt_variants": ["fancy"], "cost_model": "gemm", "tolerance": {"atol": -1}},
    {"name": "u", "suites": ["s"], "definition": "missing", "workload_uuid": "x",
     "arch": "sm_80", "target_families": [], "reference_backend": "plain_cuda",
     "prompt_variants": ["base"], "cost_model": "nothing"}]})",
                                   "tasks.json");
  ASSERT_TRUE(manifest.ok());
  Diagnostics diagnostics("tasks.json");
  auto tasks = parse_task_manifest(*manifest, load.set, diagnostics);
  EXPECT_TRUE(tasks.empty());
  const auto errors = diagnostics.to_error().message;
  for (const char* expected :
       {"tasks.json: $.tasks[0].workload_uuid: no workload with uuid 'nope'",
        "$.tasks[0].target_families[0]: family 'GMMA' does not exist on sm_100a",
        "$.tasks[0].reference_backend: unknown reference backend 'cublas'",
        "$.tasks[0].prompt_variants[0]: 'fancy' is not a prompt variant",
        "$.tasks[0].tolerance.atol: must be > 0, got -1",
        "$.tasks[1].definition: definition 'missing' not found",
        "$.tasks[1].arch: unknown arch 'sm_80'",
        "$.tasks[1].target_families: must name at least one family",
        "$.tasks[1].cost_model: unknown cost model 'nothing'"})
    EXPECT_NE(errors.find(expected), std::string::npos) << expected << "\n" << errors;
}

TEST(Registry, BuiltinDirFollowsEnvironment) {
  ::setenv("PTXBENCH_BUILTIN_TASKS", "/tmp/elsewhere", 1);
  EXPECT_EQ(builtin_tasks_dir().value(), "/tmp/elsewhere");
  ::unsetenv("PTXBENCH_BUILTIN_TASKS");
  EXPECT_EQ(builtin_tasks_dir().value(), std::string(PTXB_SOURCE_DIR) + "/tasks");
}

TEST(Registry, TaskJsonCarriesSignatureAndCosts) {
  const Task* task = builtin().find("gqa_paged_decode_h24_kv8_d128_ps1");
  ASSERT_NE(task, nullptr);
  const Json json = task->to_json();
  EXPECT_EQ(json["reference_backend"], "flashinfer_gqa_paged_decode");
  EXPECT_EQ(json["shapes"]["k_cache"], Json::parse("[65536, 1, 8, 128]"));
  EXPECT_EQ(json["shapes"]["sm_scale"], Json::array());
  // 4 * 24 heads * 128 * 65536 cached tokens
  EXPECT_DOUBLE_EQ(json["flops"].get<double>(), 4.0 * 24 * 128 * 65536);
  EXPECT_NE(json["signature"].get<std::string>().find("float sm_scale"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
