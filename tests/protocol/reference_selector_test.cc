// The reference selector a runner's library reads (protocol/reference_selector.h), with the
// supervisor's cuBLASLt pins.
#include "protocol/reference_selector.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

TEST(ReferenceSelector, NamesMasksAndPinsRoundTrip) {
  auto plain = parse_reference_selector("cublaslt_gemm");
  ASSERT_TRUE(plain.ok()) << plain.error().message;
  EXPECT_EQ(plain->backend, "cublaslt_gemm");
  EXPECT_FALSE(plain->causal);
  EXPECT_TRUE(plain->pins.empty());
  EXPECT_EQ(plain->to_string(), "cublaslt_gemm");

  auto causal = parse_reference_selector("cudnn_sdpa_fwd:causal");
  ASSERT_TRUE(causal.ok());
  EXPECT_TRUE(causal->causal);
  EXPECT_EQ(causal->to_string(), "cudnn_sdpa_fwd:causal");

  auto pinned = parse_reference_selector("cublaslt_gemm@pin=8192x7168x5120:3;16x16x16:0");
  ASSERT_TRUE(pinned.ok()) << pinned.error().message;
  ASSERT_EQ(pinned->pins.size(), 2u);
  EXPECT_EQ(pinned->pins[0], (GemmPin{8192, 7168, 5120, 3}));
  EXPECT_EQ(pinned->pins[1], (GemmPin{16, 16, 16, 0}));
  EXPECT_EQ(pinned->to_string(), "cublaslt_gemm@pin=8192x7168x5120:3;16x16x16:0");
}

TEST(ReferenceSelector, AMalformedPinIsAnErrorNotASilentAutotune) {
  for (const std::string bad :
       {"cublaslt_gemm@pin=", "cublaslt_gemm@pin=8192x7168:3", "cublaslt_gemm@pin=8192x7168x5120",
        "cublaslt_gemm@pin=8192x7168x5120:-1", "cublaslt_gemm@pin=0x7168x5120:1",
        "cublaslt_gemm@pin=axbxc:1", "cudnn_sdpa_fwd:masked", ":causal", ""}) {
    EXPECT_FALSE(parse_reference_selector(bad).ok()) << bad;
  }
}

TEST(ReferenceSelector, PinsComeFromTheSupervisorsCublasLtDescription) {
  // Shaped like CublasLtGemm::describe() on the H200 (2026-12-02), trimmed.
  const Json description = Json::parse(R"({
    "backend": "cublaslt_gemm",
    "shapes": [
      {"shape": "M=8192 N=7168 K=5120", "m": 8192, "n": 7168, "k": 5120,
       "algorithm": {"algo_id": 66, "tile_id": 201, "heuristic_index": 3, "median_ms": 0.77}},
      {"shape": "M=16 N=16 K=16", "m": 16, "n": 16, "k": 16, "algorithm": {"heuristic_index": 1}}
    ]})");
  EXPECT_EQ(gemm_pins_of(description),
            (std::vector<GemmPin>{{8192, 7168, 5120, 3}, {16, 16, 16, 1}}));
  EXPECT_TRUE(gemm_pins_of(Json::parse(R"({"backend": "cudnn_sdpa_fwd", "shapes": []})")).empty());
  EXPECT_TRUE(gemm_pins_of(Json(nullptr)).empty());
  EXPECT_TRUE(gemm_pins_of(Json::parse(R"({"backend": "cublaslt_gemm"})")).empty());
}

TEST(ReferenceSelector, ThePreparedLineOfARunnersLogIsRead) {
  const std::string log =
      "ptxbench-runner: hello\n"
      "libptxbench_reference: prepared {\"backend\":\"cublaslt_gemm\",\"shapes\":[]}\n"
      "ptxbench-runner: call 1\n";
  EXPECT_EQ(prepared_description_in_log(log).value("backend", ""), "cublaslt_gemm");
  EXPECT_TRUE(prepared_description_in_log("ptxbench-runner: hello\n").is_null());
  EXPECT_TRUE(prepared_description_in_log("libptxbench_reference: prepared {not json\n").is_null());
  // The last line wins (a log holds one per process; a relayed log could hold more).
  EXPECT_EQ(prepared_description_in_log(std::string(kPreparedLinePrefix) + "{\"a\":1}\n" +
                                        std::string(kPreparedLinePrefix) + "{\"a\":2}")
                .value("a", 0),
            2);
}

}  // namespace
}  // namespace ptxb
