// Regression tests of the reference solutions (label gpu; H200): every rung under solutions/
// must PASS `ptxbench eval` with its target instructions executed, and must not fall far below
// its recorded speed (bench/results/reference_solutions.md; the floor leaves room for clock
// noise, the recorded ratios are the benchmark's job).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <filesystem>

#include "../support/tree_paths.h"
#include "core/json_io.h"
#include "core/process.h"
#include "test_macros.h"

namespace ptxb {
namespace {

struct Rung {
  std::string path;
  std::string task;
  double min_speedup;  // recorded 2026-11-29 on the H200, minus ~5 %
};

std::vector<Rung> rungs() {
  const std::string root = tree::source_dir() + "/solutions/";
  return {{root + "gemm_n7168_k5120/rung1_tma_wgmma.cu", "gemm_n7168_k5120", 0.86},
          {root + "gemm_n7168_k5120/rung2_warp_specialized.cu", "gemm_n7168_k5120", 0.87},
          {root + "gemm_n7168_k5120/rung3_cluster_multicast.cu", "gemm_n7168_k5120", 0.94},
          {root + "mha_with_lse_d128/rung1_tma_wgmma.cu", "mha_with_lse_d128", 0.80},
          {root + "mha_with_lse_d128_causal/rung1_tma_wgmma.cu", "mha_with_lse_d128_causal", 0.82},
          {root + "mha_with_lse_d128/rung2_warp_specialized.cu", "mha_with_lse_d128", 0.91},
          {root + "mha_with_lse_d128_causal/rung2_warp_specialized.cu", "mha_with_lse_d128_causal",
           0.92},
          {root + "mha_bwd_d128/rung1_tma_wgmma.cu", "mha_bwd_d128", 0.73},
          {root + "mha_bwd_d128_causal/rung1_tma_wgmma.cu", "mha_bwd_d128_causal", 0.80},
          {root + "mha_bwd_d128/rung2_warp_specialized.cu", "mha_bwd_d128", 0.80},
          {root + "mha_bwd_d128_causal/rung2_warp_specialized.cu", "mha_bwd_d128_causal", 0.82}};
}

TEST(SolutionsGpu, EveryRungPassesWithTargetInstructionsExecuted) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_SKIP() << "no CUDA device";
  for (const auto& rung : rungs()) {
    ASSERT_TRUE(std::filesystem::exists(rung.path)) << rung.path;
    ProcessSpec spec{
        {tree::cli(), "eval", rung.path, "--task", rung.task, "--json", "--seed", "21"}};
    spec.timeout = std::chrono::seconds(300);
    spec.output_cap_bytes = 64u << 20;
    auto ran = SystemProcessRunner().run(spec);
    ASSERT_TRUE(ran.ok());
    auto result = parse_json(ran->stdout_text, rung.path);
    ASSERT_TRUE(result.ok()) << ran->stderr_text;
    const Json& r = *result;
    EXPECT_EQ(r.value("status", ""), "PASSED") << rung.path << ": " << r.value("message", "");
    EXPECT_EQ(r["target_instructions"]["verdict"], "dynamic_present") << rung.path;
    const Json& w = r["workloads"][0];
    ASSERT_TRUE(w["speedup"].is_number()) << rung.path;
    EXPECT_GE(w["speedup"].get<double>(), rung.min_speedup) << rung.path;
    std::cout << "[ solution ] " << rung.path << ": " << w["candidate_timing"]["median_ms"]
              << " ms, speedup " << w["speedup"] << "\n";
  }
}

}  // namespace
}  // namespace ptxb
