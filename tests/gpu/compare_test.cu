// GPU tests of the evaluator's building blocks: the checking layer, input generation, poison,
// the comparison kernel (design.md §3.5), unwritten-element tracking, content hashing, L2 flush.
// Label `gpu`; run on the H200 (`ctest -L gpu` or
// `ptxbench_gpu_tests
// --gtest_filter='CudaCheck*:InputGen*:Poison*:Compare*:Unwritten*:ContentHash*:L2Flush*'`).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include "cuda/device_buffer.h"
#include "cuda/input_gen.h"
#include "cuda/l2_flush.h"
#include "references/library_check.h"
#include "supervisor/device/compare.h"
#include "supervisor/device/content_hash.h"

#include "test_macros.h"

namespace ptxb::gpu {
namespace {

template <typename T>
Result<DeviceBuffer> upload(const std::vector<T>& host) {
  PTXB_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::create(host.size() * sizeof(T)));
  PTXB_CUDA_CHECK(
      cudaMemcpy(buffer.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return Result<DeviceBuffer>(std::move(buffer));
}

template <typename T>
Result<std::vector<T>> download(const DeviceBuffer& buffer, std::size_t count) {
  std::vector<T> host(count);
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  PTXB_CUDA_CHECK(
      cudaMemcpy(host.data(), buffer.data(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return Result<std::vector<T>>(std::move(host));
}

std::uint16_t bf16_bits(float v) {
  __nv_bfloat16 b = __float2bfloat16_rn(v);
  std::uint16_t bits;
  std::memcpy(&bits, &b, sizeof(bits));
  return bits;
}

// ---- checking layer ----

Status failing_cuda_call(void** out) {
  // 1 PiB cannot be allocated: a real runtime error through the real macro.
  PTXB_CUDA_CHECK(cudaMalloc(out, std::size_t{1} << 50));
  return ok_status();
}

TEST(CudaCheck, RuntimeErrorNamesFileLineCallAndCudaString) {
  void* p = nullptr;
  Status status = failing_cuda_call(&p);
  cudaGetLastError();  // the failed malloc is also the runtime's "last error": clear it
  ASSERT_FALSE(status.ok());
  const std::string& message = status.error().message;
  EXPECT_NE(message.find("tests/gpu/compare_test.cu:"), std::string::npos) << message;
  EXPECT_NE(message.find("cudaMalloc(out"), std::string::npos) << message;
  EXPECT_NE(message.find("cudaErrorMemoryAllocation"), std::string::npos) << message;
  EXPECT_EQ(status.error().code, "cuda");
}

Status failing_library_calls(int which) {
  struct FakeFrontendError {  // the shape of cudnn_frontend::error_t
    bool is_bad() const { return true; }
    int get_code() { return 7; }
    std::string get_message() { return "graph not supported"; }
  };
  if (which == 0) PTXB_CUBLAS_CHECK(CUBLAS_STATUS_INVALID_VALUE);
  if (which == 1) PTXB_CUDNN_CHECK(CUDNN_STATUS_BAD_PARAM);
  if (which == 2) PTXB_CUDNN_CHECK(FakeFrontendError{});
  if (which == 3) PTXB_CUPTI_CHECK(CUPTI_ERROR_INVALID_PARAMETER);
  return ok_status();
}

TEST(CudaCheck, LibraryErrorsCarryTheirOwnStrings) {
  auto message = [](int which) { return failing_library_calls(which).error().message; };
  EXPECT_NE(message(0).find("CUBLAS_STATUS_INVALID_VALUE"), std::string::npos) << message(0);
  EXPECT_NE(message(1).find("CUDNN_STATUS_BAD_PARAM"), std::string::npos) << message(1);
  EXPECT_NE(message(2).find("cudnn_frontend error 7: graph not supported"), std::string::npos)
      << message(2);
  // cuptiGetResultString's text (the enum name, or a description in some CUPTI versions).
  EXPECT_TRUE(message(3).find("CUPTI_ERROR_INVALID_PARAMETER") != std::string::npos ||
              message(3).find("nvalid") != std::string::npos)
      << message(3);
  EXPECT_EQ(failing_library_calls(1).error().code, "cudnn");
}

TEST(CudaCheck, DriverEntryPointResolves) {
  using GetVersion = CUresult(int*);
  auto get_version = driver_function<GetVersion>("cuDriverGetVersion");
  ASSERT_TRUE(get_version.ok()) << get_version.error().message;
  int version = 0;
  ASSERT_EQ((*get_version)(&version), CUDA_SUCCESS);
  EXPECT_GE(version, 13000);
  EXPECT_NE(driver_error_detail(CUDA_ERROR_INVALID_VALUE).find("CUDA_ERROR_INVALID_VALUE"),
            std::string::npos);
}

// ---- input generation ----

TEST(InputGen, DeterministicPerSeedAndTensorIndex) {
  constexpr std::int64_t kCount = (1 << 20) + 3;  // odd: exercises the unpaired last element
  for (DType dtype : {DType::kBFloat16, DType::kFloat32}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    ASSERT_OK_AND_ASSIGN(DeviceBuffer a, DeviceBuffer::create(dtype, kCount));
    ASSERT_OK_AND_ASSIGN(DeviceBuffer b, DeviceBuffer::create(dtype, kCount));
    auto hash_of = [&](std::uint64_t seed, std::uint64_t index, DeviceBuffer& buf) {
      EXPECT_TRUE(fill_normal(buf.data(), dtype, kCount, seed, index, nullptr).ok());
      auto hash = device_content_hash(buf.data(), buf.bytes(), nullptr);
      EXPECT_TRUE(hash.ok());
      return hash.ok() ? *hash : 0;
    };
    std::uint64_t first = hash_of(42, 0, a);
    EXPECT_EQ(first, hash_of(42, 0, b)) << "same (seed, tensor) must give identical tensors";
    ASSERT_OK_AND_ASSIGN(auto host_a, download<std::uint8_t>(a, a.bytes()));
    ASSERT_OK_AND_ASSIGN(auto host_b, download<std::uint8_t>(b, b.bytes()));
    EXPECT_EQ(host_a, host_b);
    EXPECT_NE(first, hash_of(43, 0, b)) << "a different seed must change the tensor";
    EXPECT_NE(first, hash_of(42, 1, b)) << "a different tensor index must change the tensor";
  }
}

TEST(InputGen, NormalMomentsAndRange) {
  constexpr std::int64_t kCount = 1 << 22;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer buf, DeviceBuffer::create(DType::kFloat32, kCount));
  ASSERT_OK(fill_normal(buf.data(), DType::kFloat32, kCount, 7, 3, nullptr));
  ASSERT_OK_AND_ASSIGN(auto values, download<float>(buf, kCount));
  double sum = 0, sum_sq = 0, max_abs = 0;
  for (float v : values) {
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sum_sq += static_cast<double>(v) * v;
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(v)));
  }
  double mean = sum / kCount;
  double variance = sum_sq / kCount - mean * mean;
  // Standard errors at 4M samples: mean 5e-4, variance 7e-4; the bounds are ~10 sigma.
  EXPECT_NEAR(mean, 0.0, 5e-3);
  EXPECT_NEAR(variance, 1.0, 1e-2);
  EXPECT_LE(max_abs, 5.8);  // Box–Muller with 24-bit u1: |z| <= sqrt(2·24·ln 2) ≈ 5.77
  EXPECT_GE(max_abs, 4.0);  // 4M normals reach beyond 4 sigma
}

// ---- poison ----

// The supervisor's secret trials (kVariedPoisonFrom on): quiet NaNs whose payload is never zero
// or all ones, so no canonical NaN of arithmetic equals a poison; consecutive trials differ.
TEST(Poison, VariedPatternsAreNeverACanonicalNan) {
  for (int trial = kVariedPoisonFrom; trial < kVariedPoisonFrom + 20000; ++trial) {
    const std::uint32_t b = poison_pattern(DType::kBFloat16, trial) & 0x7FFFu;
    EXPECT_TRUE(b > 0x7FC0u && b < 0x7FFFu) << std::hex << b;
    const std::uint32_t h = poison_pattern(DType::kFloat16, trial) & 0x7FFFu;
    EXPECT_TRUE(h > 0x7E00u && h < 0x7FFFu) << std::hex << h;
    const std::uint32_t f = poison_pattern(DType::kFloat32, trial) & 0x7FFFFFFFu;
    EXPECT_TRUE(f > 0x7FC00000u && f < 0x7FFFFFFFu) << std::hex << f;
    EXPECT_NE(poison_pattern(DType::kBFloat16, trial), poison_pattern(DType::kBFloat16, trial + 1));
  }
}

TEST(Poison, PatternsDifferAcrossTrialsAndAreWritten) {
  EXPECT_NE(poison_pattern(DType::kBFloat16, 0), poison_pattern(DType::kBFloat16, 1));
  EXPECT_NE(poison_pattern(DType::kFloat32, 0), poison_pattern(DType::kFloat32, 1));
  EXPECT_EQ(poison_pattern(DType::kFloat32, 2), poison_pattern(DType::kFloat32, 0));
  constexpr std::int64_t kCount = 1001;
  for (int trial = 0; trial < 2; ++trial) {
    ASSERT_OK_AND_ASSIGN(DeviceBuffer b16, DeviceBuffer::create(DType::kBFloat16, kCount));
    ASSERT_OK_AND_ASSIGN(DeviceBuffer b32, DeviceBuffer::create(DType::kFloat32, kCount));
    ASSERT_OK(fill_poison(b16.data(), DType::kBFloat16, kCount, trial, nullptr));
    ASSERT_OK(fill_poison(b32.data(), DType::kFloat32, kCount, trial, nullptr));
    ASSERT_OK_AND_ASSIGN(auto h16, download<std::uint16_t>(b16, kCount));
    ASSERT_OK_AND_ASSIGN(auto h32, download<std::uint32_t>(b32, kCount));
    for (std::int64_t i = 0; i < kCount; ++i) {
      ASSERT_EQ(h16[i], poison_pattern(DType::kBFloat16, trial)) << "bf16 element " << i;
      ASSERT_EQ(h32[i], poison_pattern(DType::kFloat32, trial)) << "fp32 element " << i;
    }
    // The poisons are NaNs (so accumulate-into-output kernels fail the NaN rule too).
    float as_float;
    std::uint32_t bits = poison_pattern(DType::kFloat32, trial);
    std::memcpy(&as_float, &bits, sizeof(bits));
    EXPECT_TRUE(std::isnan(as_float));
  }
}

// ---- comparison ----

Result<CompareResult> compare_host(const std::vector<float>& candidate,
                                   const std::vector<float>& reference,
                                   const CompareOptions& options = {}) {
  PTXB_ASSIGN_OR_RETURN(DeviceBuffer c, upload(candidate));
  PTXB_ASSIGN_OR_RETURN(DeviceBuffer r, upload(reference));
  return compare_on_device(c.data(), DType::kFloat32, r.data(), DType::kFloat32,
                           static_cast<std::int64_t>(candidate.size()), options, nullptr);
}

TEST(Compare, ExactMatchPasses) {
  constexpr std::int64_t kCount = 300'001;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer a, DeviceBuffer::create(DType::kBFloat16, kCount));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer b, DeviceBuffer::create(DType::kBFloat16, kCount));
  ASSERT_OK(fill_normal(a.data(), DType::kBFloat16, kCount, 1, 0, nullptr));
  ASSERT_OK(fill_normal(b.data(), DType::kBFloat16, kCount, 1, 0, nullptr));
  ASSERT_OK_AND_ASSIGN(CompareResult r, compare_on_device(a.data(), DType::kBFloat16, b.data(),
                                                          DType::kBFloat16, kCount, {}, nullptr));
  EXPECT_TRUE(r.passed()) << r.to_json().dump();
  EXPECT_EQ(r.num_elements, kCount);
  EXPECT_EQ(r.num_failing, 0);
  EXPECT_EQ(r.first_failing_index, -1);
  EXPECT_EQ(r.max_abs_error, 0.0);
  EXPECT_EQ(r.max_rel_error, 0.0);
  EXPECT_EQ(r.matched_ratio, 1.0);
  EXPECT_EQ(r.num_nonfinite_candidate + r.num_nonfinite_reference, 0);
}

TEST(Compare, OneBadElementIsLocated) {
  std::vector<float> reference(100'000);
  for (std::size_t i = 0; i < reference.size(); ++i) reference[i] = std::sin(0.001f * i);
  std::vector<float> candidate = reference;
  candidate[77'777] += 0.5f;
  ASSERT_OK_AND_ASSIGN(CompareResult r, compare_host(candidate, reference));
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.num_failing, 1) << r.to_json().dump();
  EXPECT_EQ(r.first_failing_index, 77'777);
  EXPECT_EQ(r.first_failing_candidate, static_cast<double>(candidate[77'777]));
  EXPECT_EQ(r.first_failing_reference, static_cast<double>(reference[77'777]));
  EXPECT_NEAR(r.max_abs_error, 0.5, 1e-6);
  EXPECT_DOUBLE_EQ(r.matched_ratio, 99'999.0 / 100'000.0);
}

// The cross-check reference (attention backward, docs/eval.md) rescues exactly the elements it
// matches: an element off from the library reference but equal to the exact one passes and is
// counted; an element off from both still fails; error statistics stay against the reference.
TEST(Compare, CrossReferenceRescuesOnlyTheElementsItMatches) {
  std::vector<float> reference(50'000, 0.5f);
  std::vector<float> exact = reference;
  std::vector<float> candidate = reference;
  candidate[10] = 0.53f;  // the library reference is off here; the candidate equals the exact
  exact[10] = 0.53f;
  candidate[20] = 0.60f;  // wrong against both
  ASSERT_OK_AND_ASSIGN(DeviceBuffer cross, upload(exact));
  CompareOptions options;
  ASSERT_OK_AND_ASSIGN(CompareResult plain, compare_host(candidate, reference, options));
  EXPECT_EQ(plain.num_failing, 2);
  EXPECT_EQ(plain.num_matched_cross_only, 0);
  options.cross_reference = static_cast<const float*>(cross.data());
  ASSERT_OK_AND_ASSIGN(CompareResult r, compare_host(candidate, reference, options));
  EXPECT_EQ(r.num_failing, 1) << r.to_json().dump();
  EXPECT_EQ(r.first_failing_index, 20);
  EXPECT_EQ(r.num_matched_cross_only, 1);
  EXPECT_NEAR(r.max_abs_error, 0.1, 1e-6);
  EXPECT_EQ(r.to_json()["num_matched_cross_only"], 1);
}

TEST(Compare, NonFiniteCandidateFails) {
  std::vector<float> reference(4096, 1.0f);
  std::vector<float> candidate = reference;
  candidate[5] = std::numeric_limits<float>::quiet_NaN();
  candidate[4000] = std::numeric_limits<float>::infinity();
  ASSERT_OK_AND_ASSIGN(CompareResult r, compare_host(candidate, reference));
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.num_nonfinite_candidate, 2) << r.to_json().dump();
  EXPECT_EQ(r.num_nonfinite_reference, 0);
  EXPECT_EQ(r.num_failing, 2);
  EXPECT_EQ(r.first_failing_index, 5);
  EXPECT_TRUE(std::isnan(r.first_failing_candidate));
  EXPECT_EQ(r.max_abs_error, 0.0);  // statistics cover finite pairs only
}

TEST(Compare, NonFiniteReferenceIsCounted) {
  std::vector<float> reference(4096, 2.0f);
  std::vector<float> candidate = reference;
  reference[123] = std::numeric_limits<float>::quiet_NaN();
  ASSERT_OK_AND_ASSIGN(CompareResult r, compare_host(candidate, reference));
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.num_nonfinite_reference, 1) << r.to_json().dump();
  EXPECT_EQ(r.num_nonfinite_candidate, 0);
  EXPECT_EQ(r.first_failing_index, 123);
}

// Boundary values worked out by hand. Rule: fail iff |x−r| > atol AND |x−r| > rtol·|r|.
TEST(Compare, ToleranceBoundaries) {
  CompareOptions pow2;    // tolerances exactly representable, so the boundaries are exact
  pow2.atol = 1.0 / 128;  // 0.0078125
  pow2.rtol = 1.0 / 128;
  struct Case {
    float reference, candidate;
    bool fails;
    const char* why;
  };
  const float next_after_129 = std::nextafter(129.0f, 200.0f);  // 129 + 2^-16
  const std::vector<Case> cases = {
      {0.0f, 0.0078125f, false, "|d| == atol, r = 0: not > atol"},
      {0.0f, 0.0078125f + 0x1p-20f, true, "|d| > atol and > rtol·0"},
      {0.0f, -0.0078125f, false, "sign does not matter"},
      {128.0f, 129.0f, false, "|d| = 1 == rtol·128: not > rtol·|r|"},
      {128.0f, next_after_129, true, "|d| = 1 + 2^-16 > 1 = rtol·128, and > atol"},
      {-128.0f, -127.0f, false, "rtol uses |r|"},
      {0.5f, 0.5f + 0.0078125f, false, "|d| == atol while rtol·|r| = 2^-8 < |d|"},
      {0.5f, 0.5f + 0.0078125f + 0x1p-20f, true, "just above atol, above rtol·|r|"},
  };
  std::vector<float> reference, candidate;
  for (const Case& c : cases) {
    reference.push_back(c.reference);
    candidate.push_back(c.candidate);
  }
  for (std::size_t i = 0; i < cases.size(); ++i) {
    ASSERT_OK_AND_ASSIGN(CompareResult r, compare_host({candidate[i]}, {reference[i]}, pow2));
    EXPECT_EQ(r.num_failing, cases[i].fails ? 1 : 0)
        << "case " << i << " (" << cases[i].why << "): " << r.to_json().dump();
  }
  // The default 1e-2 rule with a bf16 candidate against fp32 references.
  // r = 100: rtol·|r| = 0.01·100 = 1.0 in double; bf16 101 and 101.5 are exact (8-bit mantissa).
  std::vector<float> ref32 = {100.0f, 100.0f, 1.0f, 1.0f, 0.0f};
  std::vector<float> cand = {101.0f, 101.5f, 1.0078125f, 1.015625f, 0.0f};
  std::vector<bool> fails = {false, true, false, true, false};
  std::vector<std::uint16_t> cand16;
  for (float v : cand) cand16.push_back(bf16_bits(v));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer c, upload(cand16));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer r, upload(ref32));
  for (std::size_t i = 0; i < cand.size(); ++i) {
    const auto* c_i = c.as<std::uint16_t>() + i;
    const auto* r_i = r.as<float>() + i;
    ASSERT_OK_AND_ASSIGN(CompareResult result, compare_on_device(c_i, DType::kBFloat16, r_i,
                                                                 DType::kFloat32, 1, {}, nullptr));
    EXPECT_EQ(result.num_failing, fails[i] ? 1 : 0)
        << "bf16 case " << i << ": candidate " << cand[i] << " reference " << ref32[i] << ": "
        << result.to_json().dump();
  }
}

TEST(Compare, CountsElementsEqualToPoison) {
  constexpr std::int64_t kCount = 10'000;
  ASSERT_OK_AND_ASSIGN(DeviceBuffer out, DeviceBuffer::create(DType::kBFloat16, kCount));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer ref, DeviceBuffer::create(DType::kBFloat16, kCount));
  ASSERT_OK(fill_normal(ref.data(), DType::kBFloat16, kCount, 5, 0, nullptr));
  ASSERT_OK(fill_poison(out.data(), DType::kBFloat16, kCount, 0, nullptr));
  // "Kernel" writes the first 9000 elements only.
  ASSERT_EQ(cudaMemcpy(out.data(), ref.data(), 9000 * 2, cudaMemcpyDeviceToDevice), cudaSuccess);
  CompareOptions options;
  options.poison_bits = poison_pattern(DType::kBFloat16, 0);
  ASSERT_OK_AND_ASSIGN(CompareResult r,
                       compare_on_device(out.data(), DType::kBFloat16, ref.data(), DType::kBFloat16,
                                         kCount, options, nullptr));
  EXPECT_EQ(r.num_equal_poison, 1000) << r.to_json().dump();
  EXPECT_EQ(r.num_nonfinite_candidate, 1000);  // the poison is a NaN
  EXPECT_EQ(r.first_failing_index, 9000);
}

// ---- unwritten detection across two poisons ----

// A stand-in for a candidate: writes value_bits everywhere except `skip_a` and `skip_b`.
__global__ void write_all_but(std::uint16_t* out, std::int64_t count, std::int64_t skip_a,
                              std::int64_t skip_b, std::uint16_t value_bits,
                              std::int64_t special_index, std::uint16_t special_bits) {
  std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= count || i == skip_a || i == skip_b) return;
  out[i] = i == special_index ? special_bits : value_bits;
}

TEST(Unwritten, OnlyElementsEqualToBothPoisonsCount) {
  constexpr std::int64_t kCount = 5000;  // not a multiple of 32: exercises the tail word
  const std::uint16_t poison0 = static_cast<std::uint16_t>(poison_pattern(DType::kBFloat16, 0));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer out, DeviceBuffer::create(DType::kBFloat16, kCount));
  ASSERT_OK_AND_ASSIGN(UnwrittenTracker tracker, UnwrittenTracker::create(kCount, nullptr));
  const std::uint16_t one = bf16_bits(1.0f);
  for (int trial = 0; trial < 2; ++trial) {
    ASSERT_OK(fill_poison(out.data(), DType::kBFloat16, kCount, trial, nullptr));
    // Element 50 is *written* in both trials, with a value that happens to equal poison #0.
    write_all_but<<<(kCount + 255) / 256, 256>>>(out.as<std::uint16_t>(), kCount, 3, 4999, one, 50,
                                                 poison0);
    ASSERT_EQ(cudaGetLastError(), cudaSuccess);
    ASSERT_OK(tracker.observe(out.data(), 2, poison_pattern(DType::kBFloat16, trial), nullptr));
    ASSERT_OK_AND_ASSIGN(UnwrittenTracker::Summary summary, tracker.count(nullptr));
    if (trial == 0) {
      EXPECT_EQ(summary.num_unwritten, 3) << "after one trial 3, 50, 4999 look unwritten";
    } else {
      EXPECT_EQ(summary.num_unwritten, 2) << "element 50 differs from poison #1";
    }
    EXPECT_EQ(summary.first_unwritten_index, 3);
  }
}

// ---- content hash ----

TEST(ContentHash, DetectsAnyChangeAndIgnoresAlignment) {
  constexpr std::size_t kBytes = 1'000'003;
  std::vector<std::uint8_t> host(kBytes);
  for (std::size_t i = 0; i < kBytes; ++i) host[i] = static_cast<std::uint8_t>(i * 131 + 7);
  ASSERT_OK_AND_ASSIGN(DeviceBuffer a, upload(host));
  ASSERT_OK_AND_ASSIGN(std::uint64_t h1, device_content_hash(a.data(), kBytes, nullptr));
  ASSERT_OK_AND_ASSIGN(std::uint64_t h2, device_content_hash(a.data(), kBytes, nullptr));
  EXPECT_EQ(h1, h2);
  ASSERT_OK_AND_ASSIGN(std::uint64_t shorter, device_content_hash(a.data(), kBytes - 1, nullptr));
  EXPECT_NE(h1, shorter);
  // The unaligned path (a + 1) must agree with the aligned path over the same bytes.
  std::vector<std::uint8_t> tail(host.begin() + 1, host.end());
  ASSERT_OK_AND_ASSIGN(DeviceBuffer b, upload(tail));
  ASSERT_OK_AND_ASSIGN(std::uint64_t unaligned,
                       device_content_hash(a.as<std::uint8_t>() + 1, kBytes - 1, nullptr));
  ASSERT_OK_AND_ASSIGN(std::uint64_t aligned, device_content_hash(b.data(), kBytes - 1, nullptr));
  EXPECT_EQ(unaligned, aligned);
  // Flip one bit in the middle and in the tail word.
  for (std::size_t index : {std::size_t{500'000}, kBytes - 1}) {
    std::vector<std::uint8_t> changed = host;
    changed[index] ^= 0x10;
    ASSERT_OK_AND_ASSIGN(DeviceBuffer c, upload(changed));
    ASSERT_OK_AND_ASSIGN(std::uint64_t hc, device_content_hash(c.data(), kBytes, nullptr));
    EXPECT_NE(h1, hc) << "bit flip at byte " << index << " not detected";
  }
}

// ---- L2 flush ----

TEST(L2Flush, BufferIsTwiceL2AndFlushRuns) {
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  int l2 = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), cudaSuccess);
  L2Flush flush;
  ASSERT_OK(flush.allocate_for_current_device());
  EXPECT_GE(flush.bytes(), kL2FlushMultiple * static_cast<std::uint64_t>(l2));
  ASSERT_OK_AND_ASSIGN(EventTimer timer, EventTimer::create());
  ASSERT_EQ(flush.flush(nullptr), cudaSuccess);
  ASSERT_OK(timer.start(nullptr));
  ASSERT_EQ(flush.flush(nullptr), cudaSuccess);
  ASSERT_OK(timer.stop(nullptr));
  ASSERT_OK_AND_ASSIGN(float ms, timer.elapsed_ms());
  std::printf("[ info ] L2 %d bytes; flush of %llu bytes took %.3f ms\n", l2,
              static_cast<unsigned long long>(flush.bytes()), ms);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace ptxb::gpu
