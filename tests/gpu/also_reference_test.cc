// `ptxbench eval --also-reference flashinfer` on the H200 (label gpu): the MHA forward tasks'
// optional second reference (eval/also_reference.h, references/flashinfer/flashinfer_mha.h)
// through the real CLI, supervisor and runners. The reference solution rung 2 PASSES as usual;
// FlashInfer's SM90 prefill must then match the task reference's outputs (cuDNN's O and natural-
// log LSE, task tolerance) on every correctness set and have a positive median, no mask and
// causal; head dim 96, which FlashInfer has no SM90 kernel for, is recorded as unavailable with
// the library's own reason. Needs -DPTXB_WITH_FLASHINFER=ON; a build without it skips visibly.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <filesystem>
#include <iostream>
#include <map>

#include "../support/tree_paths.h"
#include "core/fs.h"
#include "core/json_io.h"
#include "core/process.h"
#include "llm/solution_render.h"
#include "references/reference.h"

namespace ptxb {
namespace {

bool has_device() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

// rung2_warp_specialized.cu rendered for `task` with `defines`, evaluated with the second
// reference; the --json result.
Json eval_with_flashinfer(const std::string& task, std::map<std::string, std::string> defines) {
  auto scratch = make_temp_directory("ptxb-also-reference-");
  EXPECT_TRUE(scratch.ok());
  if (!scratch.ok()) return nullptr;
  const SolutionVariant kernel{"mha_with_lse_d128/rung2_warp_specialized.cu", std::move(defines)};
  auto source = render_solution(tree::source_dir() + "/solutions", kernel);
  EXPECT_TRUE(source.ok()) << source.error().message;
  if (!source.ok()) return nullptr;
  const std::string path = *scratch + "/kernel.cu";
  EXPECT_TRUE(write_file_atomic(path, *source).ok());
  // No Nsight Compute check: it is not what this test is about, and it costs a minute.
  ProcessSpec spec{{tree::cli(), "eval", path, "--task", task, "--json", "--seed", "21", "--no-ncu",
                    "--also-reference", "flashinfer"}};
  spec.timeout = std::chrono::seconds(300);
  spec.output_cap_bytes = 64u << 20;
  auto ran = SystemProcessRunner().run(spec);
  std::filesystem::remove_all(*scratch);
  EXPECT_TRUE(ran.ok());
  if (!ran.ok()) return nullptr;
  auto result = parse_json(ran->stdout_text, task);
  EXPECT_TRUE(result.ok()) << ran->stderr_text;
  return result.ok() ? *result : Json(nullptr);
}

TEST(AlsoReferenceGpu, FlashInferPrefillIsCorrectAndTimedForBothMasks) {
  if (!has_device()) GTEST_SKIP() << "no CUDA device";
  if (!gpu::flashinfer_built()) GTEST_SKIP() << "this build has no FlashInfer reference";
  for (const bool causal : {false, true}) {
    const std::string task = causal ? "mha_with_lse_d128_causal" : "mha_with_lse_d128";
    std::map<std::string, std::string> defines;
    if (causal) defines["PTXB_CAUSAL"] = "1";
    const Json r = eval_with_flashinfer(task, defines);
    ASSERT_TRUE(r.is_object()) << task;
    EXPECT_EQ(r.value("status", ""), "PASSED") << task << ": " << r.value("message", "");
    const Json& w = r["workloads"][0];
    ASSERT_TRUE(w["reference"].contains("also_reference")) << task << ": " << w.dump(1);
    const Json& also = w["reference"]["also_reference"];
    EXPECT_EQ(also["status"], "measured") << task << ": " << also.value("why", "");
    EXPECT_EQ(also["selector"],
              causal ? "flashinfer_mha_prefill:causal" : "flashinfer_mha_prefill");
    // Its correctness check: every output of every correctness set within the task tolerance.
    ASSERT_FALSE(also["checks"].empty()) << task;
    for (const Json& check : also["checks"])
      EXPECT_EQ(check["num_failing"], 0) << task << ": " << check.dump();
    ASSERT_TRUE(also["timing"].is_object()) << task;
    EXPECT_GT(also["timing"]["median_ms"].get<double>(), 0.0) << task;
    ASSERT_TRUE(also["speedup"].is_number()) << task;
    EXPECT_GT(also["speedup"].get<double>(), 0.0);
    EXPECT_EQ(also["backend_description"]["library"]["version"], "0.6.14") << also.dump(1);
    // The primary reference is still cuDNN, and its speedup is still the one reported.
    EXPECT_EQ(w["reference"]["backend"]["backend"], "cudnn_sdpa_fwd");
    // The trace carries the same record beside the primary reference's backend.
    EXPECT_EQ(r["traces"][0]["evaluation"]["ptxbench"]["workload"]["reference"]["also_reference"]
               ["status"],
              "measured");
    std::cout << "[ also-reference ] " << task << ": candidate "
              << w["candidate_timing"]["median_ms"] << " ms, cuDNN "
              << w["reference_timing"]["median_ms"] << " ms (speedup " << w["speedup"]
              << "), FlashInfer " << also["timing"]["median_ms"] << " ms (speedup "
              << also["speedup"] << ")\n";
  }
}

TEST(AlsoReferenceGpu, HeadDim96IsUnavailableWithFlashInfersReason) {
  if (!has_device()) GTEST_SKIP() << "no CUDA device";
  if (!gpu::flashinfer_built()) GTEST_SKIP() << "this build has no FlashInfer reference";
  const Json r = eval_with_flashinfer("mha_with_lse_d96", {{"PTXB_HEAD_DIM", "96"}});
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.value("status", ""), "PASSED") << r.value("message", "");
  const Json& also = r["workloads"][0]["reference"]["also_reference"];
  EXPECT_EQ(also["status"], "unavailable") << also.dump(1);
  EXPECT_NE(also.value("why", "").find("head_dim 96"), std::string::npos) << also.dump(1);
  EXPECT_TRUE(also["timing"].is_null());
}

}  // namespace
}  // namespace ptxb
