// GPU tests of the reference backends: cuBLASLt GEMM and cuDNN SDPA forward/backward agree with
// the independent plain CUDA references (design.md §3.5 rule, atol = rtol = 1e-2), through the
// same ABI entry (invoke) the runner uses; plus a timing print at the paper's full sizes
// (informational, never an assertion). Label `gpu`; filter: `--gtest_filter='Reference*'`.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/input_gen.h"
#include "cuda/l2_flush.h"
#include "references/cublaslt_gemm.h"
#include "references/cudnn_sdpa.h"
#include "references/cudnn_sdpa_graph.h"
#include "references/plain_kernels.h"
#include "references/reference.h"
#include "supervisor/device/compare.h"

#include "test_macros.h"

namespace ptxb::gpu {
namespace {

using Bf16 = __nv_bfloat16;

// A device tensor with its dtype and element count.
struct Tensor {
  DeviceBuffer buffer;
  DType dtype = DType::kBFloat16;
  std::int64_t count = 0;

  static Result<Tensor> create(DType dtype, std::int64_t count) {
    Tensor t;
    t.dtype = dtype;
    t.count = count;
    PTXB_ASSIGN_OR_RETURN(t.buffer, DeviceBuffer::create(dtype, count));
    return Result<Tensor>(std::move(t));
  }
  static Result<Tensor> normal(std::int64_t count, std::uint64_t seed, std::uint64_t index) {
    PTXB_ASSIGN_OR_RETURN(Tensor t, create(DType::kBFloat16, count));
    PTXB_RETURN_IF_ERROR(
        fill_normal(t.buffer.data(), DType::kBFloat16, count, seed, index, nullptr));
    return Result<Tensor>(std::move(t));
  }
  static Result<Tensor> poisoned(DType dtype, std::int64_t count) {
    PTXB_ASSIGN_OR_RETURN(Tensor t, create(dtype, count));
    PTXB_RETURN_IF_ERROR(fill_poison(t.buffer.data(), dtype, count, 0, nullptr));
    return Result<Tensor>(std::move(t));
  }
  Bf16* bf16() const { return buffer.as<Bf16>(); }
  float* f32() const { return buffer.as<float>(); }
};

// Compares on the GPU with the design.md §3.5 rule and prints exactly what mismatched.
void expect_matches(const std::string& what, const Tensor& candidate, const Tensor& reference) {
  ASSERT_EQ(candidate.count, reference.count) << what;
  auto result = compare_on_device(candidate.buffer.data(), candidate.dtype, reference.buffer.data(),
                                  reference.dtype, candidate.count, {}, nullptr);
  ASSERT_TRUE(result.ok()) << what << ": " << result.error().message;
  EXPECT_TRUE(result->passed()) << what << " mismatches: " << result->to_json().dump();
  EXPECT_EQ(result->num_nonfinite_reference, 0) << what << ": reference has non-finite values";
  std::printf("[ info ] %s: max_abs %.3g max_rel %.3g matched %.6f\n", what.c_str(),
              result->max_abs_error, result->max_rel_error, result->matched_ratio);
}

// ---- factory and contracts (no heavy GPU work) ----

TEST(ReferenceFactory, KnowsEveryBackendAndRejectsBadRequests) {
  for (const std::string& name : reference_backend_names()) {
    const bool gemm = name.find("gemm") != std::string::npos;
    const bool gqa = name.find("_gqa_") != std::string::npos;
    for (bool causal : {false, true}) {
      auto backend = make_reference(name, causal);
      // The GEMMs have no mask; a GQA backend has exactly one (decode none, prefill causal).
      const bool gqa_mask = name.find("prefill") != std::string::npos;
      if ((gemm && causal) || (gqa && causal != gqa_mask)) {
        EXPECT_FALSE(backend.ok()) << name << " causal " << causal;
        continue;
      }
      // A build without FlashInfer knows the names and refuses them with the way to get them.
      if (name.rfind("flashinfer_", 0) == 0 && !flashinfer_built()) {
        ASSERT_FALSE(backend.ok()) << name;
        EXPECT_NE(backend.error().message.find("-DPTXB_WITH_FLASHINFER=ON"), std::string::npos)
            << backend.error().message;
        continue;
      }
      ASSERT_TRUE(backend.ok()) << name << ": " << backend.error().message;
      EXPECT_EQ((*backend)->name(), name);
      EXPECT_EQ((*backend)->causal(), causal);
      if (gqa) continue;  // parameter counts: tests/references/gqa_reference_test.cc
      EXPECT_EQ((*backend)->num_params(), (*backend)->op() == ReferenceOp::kGemm ? 7
                                          : (*backend)->op() == ReferenceOp::kAttentionForward
                                              ? 10
                                              : 14);
    }
  }
  auto unknown = make_reference("cutlass_gemm", false);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("plain_cuda_gemm"), std::string::npos);
}

TEST(ReferenceFactory, RunBeforePrepareIsAnError) {
  ASSERT_OK_AND_ASSIGN(auto backend, make_reference("plain_cuda_gemm", false));
  auto* gemm = dynamic_cast<GemmReference*>(backend.get());
  ASSERT_NE(gemm, nullptr);
  Status status = gemm->run(nullptr, nullptr, nullptr, 16, 16, 16, nullptr);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, "not_prepared") << status.error().message;
}

TEST(ReferenceCudnn, LoadedLibraryMatchesHeaders) {
  CudnnVersions v = cudnn_versions();
  std::printf("[ info ] cuDNN loaded %zu from %s, headers %zu, frontend %d.%d.%d\n", v.loaded,
              v.loaded_path.c_str(), v.headers, v.frontend_major, v.frontend_minor,
              v.frontend_patch);
  ASSERT_OK(check_cudnn_version());
}

// ---- GEMM ----

// C = A·Bᵀ through the cuBLASLt backend's ABI entry, vs the plain fp32 GEMM.
void check_gemm(std::int64_t M, std::int64_t N, std::int64_t K) {
  SCOPED_TRACE(to_string(GemmShape{M, N, K}));
  ASSERT_OK_AND_ASSIGN(Tensor a, Tensor::normal(M * K, 11, 0));
  ASSERT_OK_AND_ASSIGN(Tensor b, Tensor::normal(N * K, 11, 1));
  ASSERT_OK_AND_ASSIGN(Tensor c, Tensor::poisoned(DType::kBFloat16, M * N));
  ASSERT_OK_AND_ASSIGN(Tensor expected, Tensor::poisoned(DType::kFloat32, M * N));

  ASSERT_OK_AND_ASSIGN(auto backend, make_reference("cublaslt_gemm", false));
  std::int64_t axes[] = {M, N, K};
  ASSERT_OK(backend->prepare(axes, nullptr));
  const Bf16* a_ptr = a.bf16();
  const Bf16* b_ptr = b.bf16();
  Bf16* c_ptr = c.bf16();
  cudaStream_t stream = nullptr;
  void* params[] = {&a_ptr, &b_ptr, &c_ptr, &axes[0], &axes[1], &axes[2], &stream};
  ASSERT_OK(backend->invoke(params));
  ASSERT_OK(plain_gemm(a.bf16(), b.bf16(), expected.f32(), DType::kFloat32, M, N, K, nullptr));
  expect_matches("cuBLASLt GEMM vs plain fp32 GEMM", c, expected);
  std::printf("[ info ] %s\n", backend->describe()["shapes"][0]["algorithm"].dump().c_str());
}

TEST(ReferenceGemm, CublasLtMatchesPlainSmall) {
  check_gemm(256, 384, 512);
}

TEST(ReferenceGemm, CublasLtMatchesPlainFullSize) {
  check_gemm(8192, 7168, 5120);
}

// --pin-reference-algorithm (protocol/reference_selector.h): a second instance pinned to the
// first one's autotuned choice runs that algorithm without timing anything, and computes the same
// bytes; a pin the heuristic list does not hold fails prepare().
TEST(ReferenceGemm, APinnedInstanceRunsTheAutotunedChoiceBitForBit) {
  constexpr std::int64_t M = 512, N = 384, K = 256;
  ASSERT_OK_AND_ASSIGN(Tensor a, Tensor::normal(M * K, 5, 0));
  ASSERT_OK_AND_ASSIGN(Tensor b, Tensor::normal(N * K, 5, 1));
  ASSERT_OK_AND_ASSIGN(Tensor c1, Tensor::poisoned(DType::kBFloat16, M * N));
  ASSERT_OK_AND_ASSIGN(Tensor c2, Tensor::poisoned(DType::kBFloat16, M * N));
  const GemmShape shape{M, N, K};
  CublasLtGemm tuned;
  ASSERT_OK(tuned.prepare_shape(shape, nullptr));
  const Json chosen = tuned.describe()["shapes"][0]["algorithm"];
  const int index = chosen["heuristic_index"].get<int>();

  CublasLtGemm pinned;
  pinned.pin(shape, index);
  ASSERT_OK(pinned.prepare_shape(shape, nullptr));
  const Json pinned_choice = pinned.describe()["shapes"][0]["algorithm"];
  EXPECT_EQ(pinned_choice.value("pinned", false), true);
  for (const char* field :
       {"algo_id", "tile_id", "stages_id", "splitk_num", "cluster_shape_id", "heuristic_index"})
    EXPECT_EQ(pinned_choice[field], chosen[field]) << field;
  for (const Json& candidate : pinned.describe()["shapes"][0]["candidates"])
    EXPECT_TRUE(candidate["median_ms"].is_null()) << "a pinned instance timed a candidate";

  ASSERT_OK(tuned.run(a.bf16(), b.bf16(), c1.bf16(), M, N, K, nullptr));
  ASSERT_OK(pinned.run(a.bf16(), b.bf16(), c2.bf16(), M, N, K, nullptr));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<Bf16> h1(M * N), h2(M * N);
  ASSERT_EQ(cudaMemcpy(h1.data(), c1.bf16(), M * N * sizeof(Bf16), cudaMemcpyDeviceToHost),
            cudaSuccess);
  ASSERT_EQ(cudaMemcpy(h2.data(), c2.bf16(), M * N * sizeof(Bf16), cudaMemcpyDeviceToHost),
            cudaSuccess);
  EXPECT_EQ(std::memcmp(h1.data(), h2.data(), h1.size() * sizeof(Bf16)), 0);

  CublasLtGemm missing;
  missing.pin(shape, 999);
  Status refused = missing.prepare_shape(shape, nullptr);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("pinned heuristic #999"), std::string::npos);
}

TEST(ReferenceGemm, PlainBackendAbiWritesBf16OfTheFp32Result) {
  constexpr std::int64_t M = 100, N = 72, K = 40;  // not multiples of the 16x16 tile
  ASSERT_OK_AND_ASSIGN(Tensor a, Tensor::normal(M * K, 3, 0));
  ASSERT_OK_AND_ASSIGN(Tensor b, Tensor::normal(N * K, 3, 1));
  ASSERT_OK_AND_ASSIGN(Tensor c, Tensor::poisoned(DType::kBFloat16, M * N));
  ASSERT_OK_AND_ASSIGN(Tensor expected, Tensor::poisoned(DType::kFloat32, M * N));
  ASSERT_OK_AND_ASSIGN(auto backend, make_reference("plain_cuda_gemm", false));
  std::int64_t axes[] = {M, N, K};
  ASSERT_OK(backend->prepare(axes, nullptr));
  const Bf16* a_ptr = a.bf16();
  const Bf16* b_ptr = b.bf16();
  Bf16* c_ptr = c.bf16();
  cudaStream_t stream = nullptr;
  void* params[] = {&a_ptr, &b_ptr, &c_ptr, &axes[0], &axes[1], &axes[2], &stream};
  ASSERT_OK(backend->invoke(params));
  ASSERT_OK(plain_gemm(a.bf16(), b.bf16(), expected.f32(), DType::kFloat32, M, N, K, nullptr));
  expect_matches("plain GEMM bf16 ABI output vs its fp32 output", c, expected);
}

// ---- attention ----

struct AttentionCase {
  AttentionShape shape;
  bool causal;
};

std::string case_name(const AttentionCase& c) {
  return to_string(c.shape) + (c.causal ? " causal" : " non-causal");
}

// Small shapes covering B = 1..2, H = 2..3, S = 128..512, D = 64 and 128, causal and not.
const std::vector<AttentionCase>& small_attention_cases() {
  static const std::vector<AttentionCase> cases = {
      {{1, 2, 128, 64}, false},
      {{2, 3, 256, 128}, true},
      {{1, 3, 512, 128}, false},
      {{2, 2, 384, 64}, true},
  };
  return cases;
}

// Q, K, V, dO for one case (seeded per tensor index, as the evaluator does).
struct AttentionInputs {
  Tensor q, k, v, d_o;
  std::int64_t count = 0, rows = 0;
};

Result<AttentionInputs> make_attention_inputs(const AttentionShape& s, std::uint64_t seed) {
  AttentionInputs in;
  in.count = s.batch * s.heads * s.seq_len * s.head_dim;
  in.rows = s.batch * s.heads * s.seq_len;
  PTXB_ASSIGN_OR_RETURN(in.q, Tensor::normal(in.count, seed, 0));
  PTXB_ASSIGN_OR_RETURN(in.k, Tensor::normal(in.count, seed, 1));
  PTXB_ASSIGN_OR_RETURN(in.v, Tensor::normal(in.count, seed, 2));
  PTXB_ASSIGN_OR_RETURN(in.d_o, Tensor::normal(in.count, seed, 3));
  return Result<AttentionInputs>(std::move(in));
}

// Runs a forward backend through invoke() (the runner's path).
Status invoke_forward(ReferenceBackend& backend, const AttentionShape& s, const AttentionInputs& in,
                      const Tensor& o, const Tensor& lse) {
  std::int64_t axes[] = {s.batch, s.heads, s.head_dim, s.seq_len};  // B, H, D, S
  PTXB_RETURN_IF_ERROR(backend.prepare(axes, nullptr));
  const Bf16* q = in.q.bf16();
  const Bf16* k = in.k.bf16();
  const Bf16* v = in.v.bf16();
  Bf16* o_ptr = o.bf16();
  float* lse_ptr = lse.f32();
  cudaStream_t stream = nullptr;
  void* params[] = {&q, &k, &v, &o_ptr, &lse_ptr, &axes[0], &axes[1], &axes[2], &axes[3], &stream};
  return backend.invoke(params);
}

Status invoke_backward(ReferenceBackend& backend, const AttentionShape& s,
                       const AttentionInputs& in, const Tensor& o, const Tensor& lse,
                       const Tensor& dq, const Tensor& dk, const Tensor& dv) {
  std::int64_t axes[] = {s.batch, s.heads, s.head_dim, s.seq_len};
  PTXB_RETURN_IF_ERROR(backend.prepare(axes, nullptr));
  const Bf16* q = in.q.bf16();
  const Bf16* k = in.k.bf16();
  const Bf16* v = in.v.bf16();
  const Bf16* o_ptr = o.bf16();
  const Bf16* d_o = in.d_o.bf16();
  const float* lse_ptr = lse.f32();
  Bf16* dq_ptr = dq.bf16();
  Bf16* dk_ptr = dk.bf16();
  Bf16* dv_ptr = dv.bf16();
  cudaStream_t stream = nullptr;
  void* params[] = {&q,      &k,      &v,       &o_ptr,   &d_o,     &lse_ptr, &dq_ptr,
                    &dk_ptr, &dv_ptr, &axes[0], &axes[1], &axes[2], &axes[3], &stream};
  return backend.invoke(params);
}

TEST(ReferenceAttention, CudnnForwardMatchesPlain) {
  for (const AttentionCase& c : small_attention_cases()) {
    SCOPED_TRACE(case_name(c));
    const AttentionShape& s = c.shape;
    ASSERT_OK_AND_ASSIGN(AttentionInputs in, make_attention_inputs(s, 100));
    ASSERT_OK_AND_ASSIGN(Tensor o, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor lse, Tensor::poisoned(DType::kFloat32, in.rows));
    ASSERT_OK_AND_ASSIGN(Tensor o_ref, Tensor::poisoned(DType::kFloat32, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor lse_ref, Tensor::poisoned(DType::kFloat32, in.rows));
    ASSERT_OK_AND_ASSIGN(auto cudnn, make_reference("cudnn_sdpa_fwd", c.causal));
    ASSERT_OK(invoke_forward(*cudnn, s, in, o, lse));
    ASSERT_OK(plain_attention_forward(in.q.bf16(), in.k.bf16(), in.v.bf16(), o_ref.f32(),
                                      DType::kFloat32, lse_ref.f32(), s.batch, s.heads, s.seq_len,
                                      s.head_dim, c.causal, nullptr));
    expect_matches(case_name(c) + " cuDNN O vs plain", o, o_ref);
    expect_matches(case_name(c) + " cuDNN LSE vs plain", lse, lse_ref);
    std::printf("[ info ] engine %s\n", cudnn->describe()["shapes"][0]["engine"].dump().c_str());

    // The plain backend's own ABI path (bf16 O) agrees with its fp32 output.
    ASSERT_OK_AND_ASSIGN(auto plain, make_reference("plain_cuda_attention_fwd", c.causal));
    ASSERT_OK_AND_ASSIGN(Tensor o_plain, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor lse_plain, Tensor::poisoned(DType::kFloat32, in.rows));
    ASSERT_OK(invoke_forward(*plain, s, in, o_plain, lse_plain));
    expect_matches(case_name(c) + " plain ABI O vs plain fp32", o_plain, o_ref);
    expect_matches(case_name(c) + " plain ABI LSE vs plain fp32", lse_plain, lse_ref);
  }
}

// FlashInfer's SM90 prefill (the MHA forward tasks' optional second reference): batch folded
// into heads, its base-2 LSE turned into the task's natural-log [B,H,S]; the small cases plus
// sequence lengths that are no multiple of its tiles (128/192). Skipped without FlashInfer.
TEST(ReferenceAttention, FlashInferMhaPrefillMatchesPlain) {
  if (!flashinfer_built()) GTEST_SKIP() << "FlashInfer not built (-DPTXB_WITH_FLASHINFER=ON)";
  std::vector<AttentionCase> cases = small_attention_cases();
  cases.push_back({{2, 3, 200, 128}, true});
  cases.push_back({{1, 2, 333, 64}, false});
  for (const AttentionCase& c : cases) {
    SCOPED_TRACE(case_name(c));
    const AttentionShape& s = c.shape;
    ASSERT_OK_AND_ASSIGN(AttentionInputs in, make_attention_inputs(s, 100));
    ASSERT_OK_AND_ASSIGN(Tensor o, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor lse, Tensor::poisoned(DType::kFloat32, in.rows));
    ASSERT_OK_AND_ASSIGN(Tensor o_ref, Tensor::poisoned(DType::kFloat32, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor lse_ref, Tensor::poisoned(DType::kFloat32, in.rows));
    ASSERT_OK_AND_ASSIGN(auto flashinfer, make_reference("flashinfer_mha_prefill", c.causal));
    ASSERT_OK(invoke_forward(*flashinfer, s, in, o, lse));
    ASSERT_OK(plain_attention_forward(in.q.bf16(), in.k.bf16(), in.v.bf16(), o_ref.f32(),
                                      DType::kFloat32, lse_ref.f32(), s.batch, s.heads, s.seq_len,
                                      s.head_dim, c.causal, nullptr));
    const cudaError_t synced = cudaDeviceSynchronize();  // a fault in FlashInfer's kernel
    ASSERT_EQ(synced, cudaSuccess) << cudaGetErrorString(synced);
    expect_matches(case_name(c) + " FlashInfer O vs plain", o, o_ref);
    expect_matches(case_name(c) + " FlashInfer LSE vs plain", lse, lse_ref);
    std::printf("[ info ] plan %s\n", flashinfer->describe()["shapes"][0]["plan"].dump().c_str());
  }
}

TEST(ReferenceAttention, CudnnBackwardMatchesPlain) {
  for (const AttentionCase& c : small_attention_cases()) {
    SCOPED_TRACE(case_name(c));
    const AttentionShape& s = c.shape;
    ASSERT_OK_AND_ASSIGN(AttentionInputs in, make_attention_inputs(s, 200));
    // O and LSE come from the reference forward on the same Q, K, V (design.md §4).
    ASSERT_OK_AND_ASSIGN(Tensor o, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor lse, Tensor::poisoned(DType::kFloat32, in.rows));
    ASSERT_OK_AND_ASSIGN(auto forward, make_reference("cudnn_sdpa_fwd", c.causal));
    ASSERT_OK(invoke_forward(*forward, s, in, o, lse));

    ASSERT_OK_AND_ASSIGN(Tensor dq, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor dk, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor dv, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(auto cudnn, make_reference("cudnn_sdpa_bwd", c.causal));
    ASSERT_OK(invoke_backward(*cudnn, s, in, o, lse, dq, dk, dv));

    ASSERT_OK_AND_ASSIGN(Tensor dq_ref, Tensor::poisoned(DType::kFloat32, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor dk_ref, Tensor::poisoned(DType::kFloat32, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor dv_ref, Tensor::poisoned(DType::kFloat32, in.count));
    ASSERT_OK(plain_attention_backward(in.q.bf16(), in.k.bf16(), in.v.bf16(), o.bf16(),
                                       in.d_o.bf16(), lse.f32(), dq_ref.f32(), dk_ref.f32(),
                                       dv_ref.f32(), DType::kFloat32, s.batch, s.heads, s.seq_len,
                                       s.head_dim, c.causal, nullptr));
    expect_matches(case_name(c) + " cuDNN dQ vs plain", dq, dq_ref);
    expect_matches(case_name(c) + " cuDNN dK vs plain", dk, dk_ref);
    expect_matches(case_name(c) + " cuDNN dV vs plain", dv, dv_ref);
    std::printf("[ info ] engine %s\n", cudnn->describe()["shapes"][0]["engine"].dump().c_str());

    // The plain backward backend through the ABI (bf16 gradients).
    ASSERT_OK_AND_ASSIGN(auto plain, make_reference("plain_cuda_attention_bwd", c.causal));
    ASSERT_OK_AND_ASSIGN(Tensor dq_plain, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor dk_plain, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK_AND_ASSIGN(Tensor dv_plain, Tensor::poisoned(DType::kBFloat16, in.count));
    ASSERT_OK(invoke_backward(*plain, s, in, o, lse, dq_plain, dk_plain, dv_plain));
    expect_matches(case_name(c) + " plain ABI dQ vs plain fp32", dq_plain, dq_ref);
    expect_matches(case_name(c) + " plain ABI dK vs plain fp32", dk_plain, dk_ref);
    expect_matches(case_name(c) + " plain ABI dV vs plain fp32", dv_plain, dv_ref);
  }
}

// ---- timing print at the paper's sizes (design.md §4); never asserts on time ----

// Median of kRuns event-timed calls, each after an L2 flush, following kWarmup calls.
template <typename Call>
Result<float> median_ms(Call&& call) {
  constexpr int kWarmup = 3;
  constexpr int kRuns = 10;
  for (int i = 0; i < kWarmup; ++i) PTXB_RETURN_IF_ERROR(call());
  PTXB_ASSIGN_OR_RETURN(EventTimer timer, EventTimer::create());
  L2Flush flush;
  PTXB_RETURN_IF_ERROR(flush.allocate_for_current_device());
  std::vector<float> samples;
  for (int i = 0; i < kRuns; ++i) {
    PTXB_CUDA_CHECK(flush.flush(nullptr));
    PTXB_RETURN_IF_ERROR(timer.start(nullptr));
    PTXB_RETURN_IF_ERROR(call());
    PTXB_RETURN_IF_ERROR(timer.stop(nullptr));
    PTXB_ASSIGN_OR_RETURN(float ms, timer.elapsed_ms());
    samples.push_back(ms);
  }
  std::sort(samples.begin(), samples.end());
  return samples[kRuns / 2];
}

TEST(ReferenceTiming, PrintsFullSizeLatencies) {
  // GEMM 8192 x 7168 x 5120.
  {
    constexpr std::int64_t M = 8192, N = 7168, K = 5120;
    ASSERT_OK_AND_ASSIGN(Tensor a, Tensor::normal(M * K, 1, 0));
    ASSERT_OK_AND_ASSIGN(Tensor b, Tensor::normal(N * K, 1, 1));
    ASSERT_OK_AND_ASSIGN(Tensor c, Tensor::poisoned(DType::kBFloat16, M * N));
    CublasLtGemm gemm;
    ASSERT_OK(gemm.prepare_shape(GemmShape{M, N, K}, nullptr));
    ASSERT_OK_AND_ASSIGN(float ms, median_ms([&] {
                           return gemm.run(a.bf16(), b.bf16(), c.bf16(), M, N, K, nullptr);
                         }));
    std::printf("[ time ] cuBLASLt GEMM 8192x7168x5120: %.3f ms, %.0f TFLOP/s (expect ~0.75 ms)\n",
                ms, 2.0 * M * N * K / (ms * 1e-3) / 1e12);
    Json algo = gemm.describe()["shapes"][0]["algorithm"];
    std::printf("[ time ]   algorithm %s\n", algo.dump().c_str());
    CompareOptions options;
    options.poison_bits = poison_pattern(DType::kBFloat16, 0);
    ASSERT_OK_AND_ASSIGN(CompareResult self,
                         compare_on_device(c.bf16(), DType::kBFloat16, c.bf16(), DType::kBFloat16,
                                           M * N, options, nullptr));
    EXPECT_EQ(self.num_equal_poison, 0) << "GEMM left elements unwritten";
    EXPECT_EQ(self.num_nonfinite_candidate, 0);
  }
  // Attention B=4, H=48, S=4096, D=128.
  const AttentionShape s{4, 48, 4096, 128};
  ASSERT_OK_AND_ASSIGN(AttentionInputs in, make_attention_inputs(s, 9));
  ASSERT_OK_AND_ASSIGN(Tensor o, Tensor::poisoned(DType::kBFloat16, in.count));
  ASSERT_OK_AND_ASSIGN(Tensor lse, Tensor::poisoned(DType::kFloat32, in.rows));
  ASSERT_OK_AND_ASSIGN(Tensor dq, Tensor::poisoned(DType::kBFloat16, in.count));
  ASSERT_OK_AND_ASSIGN(Tensor dk, Tensor::poisoned(DType::kBFloat16, in.count));
  ASSERT_OK_AND_ASSIGN(Tensor dv, Tensor::poisoned(DType::kBFloat16, in.count));
  const double fwd_flops = 4.0 * s.batch * s.heads * s.seq_len * s.seq_len * s.head_dim;
  for (bool causal : {false, true}) {
    const double flops = causal ? fwd_flops / 2 : fwd_flops;
    CudnnSdpaForward forward(causal);
    ASSERT_OK(forward.prepare_shape(s, nullptr));
    ASSERT_OK_AND_ASSIGN(float fwd_ms, median_ms([&] {
                           return forward.run(in.q.bf16(), in.k.bf16(), in.v.bf16(), o.bf16(),
                                              lse.f32(), s.batch, s.heads, s.head_dim, s.seq_len,
                                              nullptr);
                         }));
    std::printf("[ time ] cuDNN SDPA fwd %s %s: %.3f ms, %.0f TFLOP/s (expect ~%s ms), engine %s\n",
                to_string(s).c_str(), causal ? "causal" : "non-causal", fwd_ms,
                flops / (fwd_ms * 1e-3) / 1e12, causal ? "1.47" : "2.70",
                forward.describe()["shapes"][0]["engine"].dump().c_str());
    CudnnSdpaBackward backward(causal);
    ASSERT_OK(backward.prepare_shape(s, nullptr));
    ASSERT_OK_AND_ASSIGN(float bwd_ms, median_ms([&] {
                           return backward.run(in.q.bf16(), in.k.bf16(), in.v.bf16(), o.bf16(),
                                               in.d_o.bf16(), lse.f32(), dq.bf16(), dk.bf16(),
                                               dv.bf16(), s.batch, s.heads, s.head_dim, s.seq_len,
                                               nullptr);
                         }));
    // Backward = 2.5x the forward's matmul FLOPs (five S x S x D products instead of two).
    std::printf("[ time ] cuDNN SDPA bwd %s %s: %.3f ms, %.0f TFLOP/s (expect ~%s ms), engine %s\n",
                to_string(s).c_str(), causal ? "causal" : "non-causal", bwd_ms,
                2.5 * flops / (bwd_ms * 1e-3) / 1e12, causal ? "4.5" : "8.0",
                backward.describe()["shapes"][0]["engine"].dump().c_str());
    for (const Tensor* out : {&o, &lse, &dq, &dk, &dv}) {
      ASSERT_OK_AND_ASSIGN(CompareResult self,
                           compare_on_device(out->buffer.data(), out->dtype, out->buffer.data(),
                                             out->dtype, out->count, {}, nullptr));
      EXPECT_EQ(self.num_nonfinite_candidate, 0) << "full-size output has NaN/Inf or poison";
    }
  }
}

}  // namespace
}  // namespace ptxb::gpu
