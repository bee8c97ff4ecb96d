// The GQA reference backends without a GPU: selection by name, their ABI against the real task
// signatures, argument unpacking, index-array checks, the "prepared before invoke" contract and
// the trace fields describe() records. Nothing here calls CUDA (constructing a backend and
// unpacking parameters are host-only), so these run in CI (label `unit`).
#include <gtest/gtest.h>

#include <array>

#include "abi/signature.h"
#include "references/gqa_backends.h"
#include "tasks/registry.h"
#ifdef PTXB_WITH_FLASHINFER
#include "references/flashinfer/flashinfer_gqa.h"
#endif

namespace ptxb::gpu {
namespace {

const TaskRegistry& tasks() {
  static const TaskRegistry registry = [] {
    auto loaded = TaskRegistry::load_sets({std::string(PTXB_SOURCE_DIR) + "/tasks"});
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    return loaded.ok() ? std::move(loaded).value() : TaskRegistry();
  }();
  return registry;
}

std::vector<const Task*> gqa_tasks() {
  std::vector<const Task*> out;
  for (const Task* task : tasks().list("heldout-h100"))
    if (task->reference_backend.starts_with("flashinfer_gqa_")) out.push_back(task);
  return out;
}

bool causal_of(const Task& task) {
  return task.cost_model.ends_with("_causal");
}

TEST(GqaReference, NamesAndLayouts) {
  const auto names = reference_backend_names();
  for (const char* name : {"flashinfer_gqa_paged_decode", "flashinfer_gqa_paged_prefill",
                           "flashinfer_gqa_ragged_prefill", "plain_cuda_gqa_paged_decode",
                           "plain_cuda_gqa_paged_prefill", "plain_cuda_gqa_ragged_prefill"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  EXPECT_EQ(gqa_layout_of("flashinfer_gqa_ragged_prefill"), GqaLayout::kRaggedPrefill);
  EXPECT_EQ(gqa_layout_of("plain_cuda_gqa_paged_decode"), GqaLayout::kPagedDecode);
  EXPECT_FALSE(gqa_layout_of("flashinfer_gqa_ragged").has_value());
  EXPECT_FALSE(is_gqa_backend("cudnn_sdpa_fwd"));
}

TEST(GqaReference, EveryGqaTaskSelectsABackendWithItsSignature) {
  ASSERT_EQ(gqa_tasks().size(), 3u);
  for (const Task* task : gqa_tasks()) {
    const RunSignature signature = make_run_signature(task->definition);
    int axes = 0;
    for (const auto& p : signature.parameters) axes += p.kind == AbiParameter::Kind::kAxis;
    const std::string plain = "plain_cuda_" + task->reference_backend.substr(11);
    for (const std::string& name : {task->reference_backend, plain}) {
      auto made = make_reference(name, causal_of(*task));
      if (!made.ok() && name == task->reference_backend && !flashinfer_built()) {
        EXPECT_EQ(made.error().code, "unavailable");
        EXPECT_NE(made.error().message.find("-DPTXB_WITH_FLASHINFER=ON"), std::string::npos);
        continue;
      }
      ASSERT_TRUE(made.ok()) << name << ": " << made.error().message;
      auto& backend = **made;
      EXPECT_EQ(backend.name(), name);
      EXPECT_EQ(backend.causal(), causal_of(*task)) << name;
      EXPECT_EQ(backend.num_params(), static_cast<int>(signature.parameters.size())) << name;
      EXPECT_EQ(backend.num_axes(), axes) << name;
      // The task's own axes pass the backend's shape checks.
      std::vector<std::int64_t> values;
      const auto axis_values = task->axis_values();
      for (const auto& p : signature.parameters)
        if (p.kind == AbiParameter::Kind::kAxis) values.push_back(axis_values.at(p.source_name));
      EXPECT_TRUE(backend.prepare(values, nullptr).ok()) << name;
    }
  }
}

TEST(GqaReference, CausalFlagMustMatchTheLayout) {
  EXPECT_FALSE(make_reference("plain_cuda_gqa_paged_decode", true).ok());
  auto prefill = make_reference("flashinfer_gqa_ragged_prefill", false);
  ASSERT_FALSE(prefill.ok());
  EXPECT_NE(prefill.error().message.find("is causal prefill: it cannot run without one"),
            std::string::npos)
      << prefill.error().message;
}

// Parameter storage of a paged-prefill call, in the invoke() convention.
struct PagedPrefillCall {
  std::array<std::uintptr_t, 6> tensors = {0x1000, 0x2000, 0x3000, 0x4000, 0x5000, 0x6000};
  float sm_scale = 0.125f;
  std::array<std::uintptr_t, 2> outputs = {0x7000, 0x8000};
  // Hq, Hkv, D, page_size, len_indptr, total_q, num_kv_indices, num_pages
  std::array<std::int64_t, 8> axes = {24, 8, 128, 1, 5, 4096, 4096, 4096};
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x9000);
  std::vector<void*> params() {
    std::vector<void*> out;
    for (auto& t : tensors) out.push_back(&t);
    out.push_back(&sm_scale);
    for (auto& o : outputs) out.push_back(&o);
    for (auto& a : axes) out.push_back(&a);
    out.push_back(&stream);
    return out;
  }
};

TEST(GqaReference, UnpacksEveryParameter) {
  PlainGqa backend(GqaLayout::kPagedPrefill);
  PagedPrefillCall storage;
  auto params = storage.params();
  ASSERT_EQ(static_cast<int>(params.size()), backend.num_params());
  auto call = backend.unpack(params.data());
  ASSERT_TRUE(call.ok()) << call.error().message;
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(call->q), 0x1000u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(call->v), 0x3000u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(call->qo_indptr), 0x4000u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(call->kv_indptr), 0x5000u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(call->kv_indices), 0x6000u);
  EXPECT_EQ(call->sm_scale, 0.125f);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(call->output), 0x7000u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(call->lse), 0x8000u);
  EXPECT_EQ(call->stream, storage.stream);
  EXPECT_EQ(call->shape.batch, 4);
  EXPECT_EQ(call->shape.total_q, 4096);
  EXPECT_EQ(call->shape.kv_rows, 4096);
  EXPECT_EQ(call->shape.num_qo_heads, 24);
  // No plan for these index arrays yet: invoke refuses before touching the GPU.
  auto invoked = backend.invoke(params.data());
  ASSERT_FALSE(invoked.ok());
  EXPECT_EQ(invoked.error().code, "not_prepared");
}

TEST(GqaReference, ShapeChecks) {
  // Decode: batch_size, Hq, Hkv, D, num_pages, page_size, len_indptr, num_kv_indices.
  std::vector<std::int64_t> decode = {32, 24, 8, 128, 65536, 1, 33, 65536};
  ASSERT_TRUE(gqa_shape_from_axes(GqaLayout::kPagedDecode, decode).ok());
  decode[6] = 32;
  EXPECT_NE(gqa_shape_from_axes(GqaLayout::kPagedDecode, decode)
                .error()
                .message.find("len_indptr 32 != batch_size 32 + 1"),
            std::string::npos);
  std::vector<std::int64_t> ragged = {32, 5, 128, 5, 8192, 8192};  // 32 % 5 != 0
  EXPECT_NE(gqa_shape_from_axes(GqaLayout::kRaggedPrefill, ragged)
                .error()
                .message.find("Hq is not a multiple of Hkv"),
            std::string::npos);
  EXPECT_NE(gqa_shape_from_axes(GqaLayout::kRaggedPrefill, decode)
                .error()
                .message.find("expected 6 axes, got 8"),
            std::string::npos);
}

TEST(GqaReference, IndexArraysAreChecked) {
  auto shape = gqa_shape_from_axes(GqaLayout::kRaggedPrefill,
                                   std::vector<std::int64_t>{32, 4, 128, 3, 10, 12});
  ASSERT_TRUE(shape.ok());
  EXPECT_TRUE(validate_host_index(*shape, {{0, 4, 10}, {0, 6, 12}}).ok());
  EXPECT_EQ(validate_host_index(*shape, {{1, 4, 10}, {0, 6, 12}}).error().message,
            "qo_indptr[0] = 1, expected 0");
  EXPECT_EQ(validate_host_index(*shape, {{0, 4, 10}, {0, 7, 6}}).error().message,
            "kv_indptr decreases at 2: 6 < 7");
  EXPECT_EQ(validate_host_index(*shape, {{0, 4, 9}, {0, 6, 12}}).error().message,
            "qo_indptr[-1] = 9, expected 10");
  EXPECT_EQ(validate_host_index(*shape, {{0, 10}, {0, 6, 12}}).error().message,
            "qo_indptr: 2 entries, expected 3");
}

TEST(GqaReference, PlainDescribesItself) {
  const Json json = PlainGqa(GqaLayout::kPagedDecode).describe();
  EXPECT_EQ(json["backend"], "plain_cuda_gqa_paged_decode");
  EXPECT_EQ(json["causal"], false);
  EXPECT_EQ(json["library"]["name"], "ptxbench plain CUDA");
  EXPECT_TRUE(json["shapes"].empty());
}

#ifdef PTXB_WITH_FLASHINFER
TEST(GqaReference, FlashInferTraceFieldsNameVersionAndPlan) {
  const Json json = FlashInferGqa(GqaLayout::kRaggedPrefill).describe();
  EXPECT_EQ(json["backend"], "flashinfer_gqa_ragged_prefill");
  EXPECT_EQ(json["causal"], true);
  EXPECT_EQ(json["library"]["name"], "FlashInfer");
  EXPECT_EQ(json["library"]["version"], "0.6.14");

  flashinfer_ref::PrefillPlan prefill;
  prefill.cta_q = 128, prefill.cta_kv = 128, prefill.stages = 2, prefill.tma_kv_load = true;
  prefill.persistent_ctas = 132, prefill.total_work_tiles = 2048;
  const Json ragged = describe_plan(prefill, GqaLayout::kRaggedPrefill);
  EXPECT_EQ(ragged["kv_load"], "TMA");
  EXPECT_EQ(ragged["cta_tile_kv"], 128);
  EXPECT_EQ(ragged["scheduler"], "BatchPrefillPersistentTileScheduler");
  prefill.tma_kv_load = false, prefill.same_schedule_for_all_heads = true;
  const Json paged = describe_plan(prefill, GqaLayout::kPagedPrefill);
  EXPECT_EQ(paged["kv_load"], "cp.async gather");
  EXPECT_EQ(paged["scheduler"], "BatchPrefillTileScheduler");

  flashinfer_ref::DecodePlan decode;
  decode.split_kv = true, decode.group_size = 3, decode.block_x = 16, decode.block_y = 3;
  decode.block_z = 2;
  const Json d = describe_plan(decode);
  EXPECT_EQ(d["split_kv"], true);
  EXPECT_EQ(d["block"], Json::parse("[16, 3, 2]"));
  EXPECT_NE(d["kernel"].get<std::string>().find("CUDA cores"), std::string::npos);
}
#endif

}  // namespace
}  // namespace ptxb::gpu
