// The FlashInfer MHA prefill backend (the MHA forward tasks' optional second reference,
// references/flashinfer/flashinfer_mha.h) without a GPU: selection by name, the ABI of the
// mha_with_lse_* signatures, the head dims it refuses by name before any CUDA call, and the
// trace fields describe() records.
#include <gtest/gtest.h>

#include <array>

#include "abi/signature.h"
#include "references/reference.h"
#include "tasks/registry.h"
#ifdef PTXB_WITH_FLASHINFER
#include "references/flashinfer/flashinfer_mha.h"
#endif

namespace ptxb::gpu {
namespace {

constexpr const char* kName = "flashinfer_mha_prefill";

TEST(FlashInferMha, ListedAndBuiltOrNamesTheOption) {
  const auto names = reference_backend_names();
  EXPECT_NE(std::find(names.begin(), names.end(), kName), names.end());
  for (bool causal : {false, true}) {
    auto made = make_reference(kName, causal);
    if (!flashinfer_built()) {
      ASSERT_FALSE(made.ok());
      EXPECT_EQ(made.error().code, "unavailable");
      EXPECT_NE(made.error().message.find("-DPTXB_WITH_FLASHINFER=ON"), std::string::npos)
          << made.error().message;
      continue;
    }
    ASSERT_TRUE(made.ok()) << made.error().message;
    EXPECT_EQ((*made)->name(), kName);
    EXPECT_EQ((*made)->causal(), causal);
    EXPECT_EQ((*made)->op(), ReferenceOp::kAttentionForward);
  }
}

TEST(FlashInferMha, TakesTheMhaForwardSignature) {
  if (!flashinfer_built()) GTEST_SKIP() << "FlashInfer not built (-DPTXB_WITH_FLASHINFER=ON)";
  auto loaded = TaskRegistry::load_sets({std::string(PTXB_SOURCE_DIR) + "/tasks"});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  for (const char* task_name : {"mha_with_lse_d128", "mha_with_lse_d64_causal"}) {
    const Task* task = loaded->get(task_name).value();
    const RunSignature signature = make_run_signature(task->definition);
    auto made = make_reference(kName, task->cost_model.ends_with("_causal"));
    ASSERT_TRUE(made.ok());
    EXPECT_EQ((*made)->num_params(), static_cast<int>(signature.parameters.size())) << task_name;
  }
}

#ifdef PTXB_WITH_FLASHINFER
TEST(FlashInferMha, AHeadDimWithoutAnSm90KernelIsRefusedByNameBeforeAnyCudaCall) {
  FlashInferMhaPrefill backend(/*causal=*/false);
  // Signature order B, H, D, S; the check comes before any allocation.
  const std::array<std::int64_t, 4> d96 = {4, 48, 96, 4096};
  Status refused = backend.prepare(d96, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "unsupported");
  EXPECT_NE(refused.error().message.find("flashinfer_mha_prefill"), std::string::npos);
  EXPECT_NE(refused.error().message.find("head_dim 96"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(flashinfer_ref::flashinfer_mha_supported(64));
  EXPECT_TRUE(flashinfer_ref::flashinfer_mha_supported(128));
  EXPECT_FALSE(flashinfer_ref::flashinfer_mha_supported(96));
}

TEST(FlashInferMha, TraceFieldsNameVersionAndTiles) {
  const Json json = FlashInferMhaPrefill(/*causal=*/true).describe();
  EXPECT_EQ(json["backend"], kName);
  EXPECT_EQ(json["causal"], true);
  EXPECT_EQ(json["library"]["name"], "FlashInfer");
  EXPECT_EQ(json["library"]["version"], "0.6.14");
  EXPECT_TRUE(json["shapes"].empty());  // nothing prepared yet
  // FlashInfer's getCTATileSize: D=128 causal 128x128, not causal 128x192, D=64 192x128.
  EXPECT_EQ(flashinfer_ref::mha_prefill_config(128, true).cta_kv, 128);
  EXPECT_EQ(flashinfer_ref::mha_prefill_config(128, false).cta_kv, 192);
  EXPECT_EQ(flashinfer_ref::mha_prefill_config(64, false).cta_q, 192);
}
#endif

}  // namespace
}  // namespace ptxb::gpu
