// The heldout-h100 GQA tasks: their manifests name the FlashInfer reference of their layout (the
// primary-reference rule of design.md §4), their `run` signatures have the parameter order the
// GQA backends unpack (src/references/gqa_reference.cc), and the manifest loader refuses a
// backend that does not fit the task.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "abi/signature.h"
#include "tasks/manifest.h"
#include "tasks/registry.h"
#include "trace/schema_json.h"

namespace ptxb {
namespace {

const TaskRegistry& gqa_registry() {
  static const TaskRegistry registry = [] {
    auto loaded = TaskRegistry::load_sets({builtin_tasks_dir().value()});
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded.ok() ? std::move(loaded).value() : TaskRegistry();
  }();
  return registry;
}

bool gqa_has_tag(const Task& task, const std::string& tag) {
  const auto& tags = task.definition.tags;
  return std::find(tags.begin(), tags.end(), tag) != tags.end();
}

struct GqaExpectation {
  std::string backend;
  std::string fi_api;  // the FlashInfer wrapper the definition says its reference is
  bool causal;
  int tensor_inputs;  // before the scalar sm_scale
  int axes;
};

const std::map<std::string, GqaExpectation>& gqa_expected() {
  static const std::map<std::string, GqaExpectation> table = {
      {"gqa_paged_decode_h24_kv8_d128_ps1",
       {"flashinfer_gqa_paged_decode", "flashinfer.decode.BatchDecodeWithPagedKVCacheWrapper",
        false, 5, 8}},
      {"gqa_paged_prefill_causal_h24_kv8_d128_ps1",
       {"flashinfer_gqa_paged_prefill", "flashinfer.prefill.BatchPrefillWithPagedKVCacheWrapper",
        true, 6, 8}},
      {"gqa_ragged_prefill_causal_h32_kv4_d128",
       {"flashinfer_gqa_ragged_prefill", "flashinfer.prefill.BatchPrefillWithRaggedKVCacheWrapper",
        true, 5, 6}},
  };
  return table;
}

TEST(GqaTasks, EachNamesTheFlashInferBackendOfItsLayout) {
  int found = 0;
  for (const Task* task : gqa_registry().list("heldout-h100")) {
    auto it = gqa_expected().find(task->name);
    if (it == gqa_expected().end()) {
      EXPECT_FALSE(task->reference_backend.starts_with("flashinfer_")) << task->name;
      continue;
    }
    ++found;
    const GqaExpectation& want = it->second;
    EXPECT_EQ(task->reference_backend, want.backend) << task->name;
    EXPECT_EQ(gqa_reference_for(task->cost_model), want.backend) << task->name;
    EXPECT_TRUE(gqa_has_tag(*task, "fi_api:" + want.fi_api)) << task->name;
    EXPECT_EQ(gqa_has_tag(*task, "mask:causal"), want.causal) << task->name;
    // The runner's causal flag comes from the cost model's suffix (supervisor/evaluator.cc).
    EXPECT_EQ(task->cost_model.ends_with("_causal"), want.causal) << task->name;
    EXPECT_TRUE(is_library_reference(task->reference_backend));
  }
  EXPECT_EQ(found, 3);
}

TEST(GqaTasks, EveryTaskUsesThePrimaryReferenceOfItsOperation) {
  for (const Task* task : gqa_registry().list()) {
    std::string primary = gqa_reference_for(task->cost_model);
    if (task->cost_model == "gemm") primary = "cublaslt_gemm";
    if (task->cost_model.starts_with("attention_fwd")) primary = "cudnn_sdpa_fwd";
    if (task->cost_model.starts_with("attention_bwd")) primary = "cudnn_sdpa_bwd";
    EXPECT_EQ(task->reference_backend, primary) << task->name;
  }
}

TEST(GqaTasks, SignatureOrderIsWhatTheBackendsUnpack) {
  for (const auto& [name, want] : gqa_expected()) {
    const Task* task = gqa_registry().find(name);
    ASSERT_NE(task, nullptr) << name;
    const RunSignature signature = make_run_signature(task->definition);
    const auto& params = signature.parameters;
    ASSERT_EQ(static_cast<int>(params.size()), want.tensor_inputs + 3 + want.axes + 1) << name;
    for (int i = 0; i < want.tensor_inputs; ++i) {
      EXPECT_EQ(params[i].kind, AbiParameter::Kind::kInput) << name << " #" << i;
      EXPECT_FALSE(params[i].scalar) << name << " #" << i;
    }
    // q, k, v first; then the int32 index arrays.
    EXPECT_EQ(params[0].source_name, "q");
    for (int i = 3; i < want.tensor_inputs; ++i) EXPECT_EQ(params[i].type, "const int32_t*");
    const AbiParameter& scale = params[want.tensor_inputs];
    EXPECT_TRUE(scale.scalar);
    EXPECT_EQ(scale.type, "float");
    EXPECT_EQ(scale.source_name, "sm_scale");
    EXPECT_EQ(params[want.tensor_inputs + 1].source_name, "output");
    EXPECT_EQ(params[want.tensor_inputs + 1].type, "__nv_bfloat16*");
    EXPECT_EQ(params[want.tensor_inputs + 2].source_name, "lse");
    EXPECT_EQ(params[want.tensor_inputs + 2].type, "float*");
    for (int i = 0; i < want.axes; ++i)
      EXPECT_EQ(params[want.tensor_inputs + 3 + i].kind, AbiParameter::Kind::kAxis) << name;
    EXPECT_EQ(params.back().kind, AbiParameter::Kind::kStream);
  }
}

// One manifest entry for `definition` with the given backend and cost model.
std::string gqa_manifest_entry(const std::string& definition, const std::string& uuid,
                               const std::string& backend, const std::string& cost_model) {
  static int count = 0;
  return R"({"name": "t)" + std::to_string(count++) + R"(", "suites": ["s"], "definition": ")" +
         definition + R"(", "workload_uuid": ")" + uuid +
         R"(", "arch": "sm_90a", "target_families": ["GMMA"], "reference_backend": ")" + backend +
         R"(", "prompt_variants": ["base"], "cost_model": ")" + cost_model + R"("})";
}

TEST(GqaTasks, ManifestRejectsABackendThatDoesNotFit) {
  TraceSetLoad load = load_trace_set(builtin_tasks_dir().value());
  ASSERT_TRUE(load.diagnostics.ok());
  const Task* decode = gqa_registry().find("gqa_paged_decode_h24_kv8_d128_ps1");
  const Task* mha = gqa_registry().find("mha_with_lse_d64");
  ASSERT_NE(decode, nullptr);
  ASSERT_NE(mha, nullptr);
  const std::string d = decode->definition.name, du = decode->workload.uuid;
  auto manifest = parse_trace_json(
      R"({"format": "ptxbench-tasks/1", "tasks": [)" +
          gqa_manifest_entry(d, du, "flashinfer_gqa_ragged_prefill", "gqa_paged_decode") + ", " +
          gqa_manifest_entry(d, du, "cudnn_sdpa_fwd", "gqa_paged_decode") + ", " +
          gqa_manifest_entry(mha->definition.name, mha->workload.uuid,
                             "flashinfer_gqa_paged_decode", "attention_fwd") +
          ", " + gqa_manifest_entry(d, du, "plain_cuda", "gqa_paged_decode") + ", " +
          gqa_manifest_entry(d, du, "flashinfer_gqa_paged_decode", "gqa_paged_decode") + "]}",
      "tasks.json");
  ASSERT_TRUE(manifest.ok());
  Diagnostics diagnostics("tasks.json");
  auto parsed = parse_task_manifest(*manifest, load.set, diagnostics);
  const std::string errors = diagnostics.to_error().message;
  for (const char* expected_error :
       {"$.tasks[0].reference_backend: reference backend 'flashinfer_gqa_ragged_prefill' does not "
        "fit cost model 'gqa_paged_decode' (expected flashinfer_gqa_paged_decode or plain_cuda)",
        "$.tasks[1].reference_backend: reference backend 'cudnn_sdpa_fwd' does not fit",
        "$.tasks[2].reference_backend: reference backend 'flashinfer_gqa_paged_decode' does not "
        "fit cost model 'attention_fwd' (expected a non-GQA backend or plain_cuda)"})
    EXPECT_NE(errors.find(expected_error), std::string::npos) << expected_error << "\n" << errors;
  EXPECT_EQ(errors.find("$.tasks[3]"), std::string::npos) << errors;
  EXPECT_EQ(errors.find("$.tasks[4]"), std::string::npos) << errors;
  EXPECT_EQ(parsed.size(), 2u);  // plain_cuda and the matching FlashInfer layout load
}

}  // namespace
}  // namespace ptxb
