// GPU tests of the GQA references on a small uneven batch (requests with more keys than queries,
// so the bottom-right causal alignment matters; an empty request; shuffled pages):
//   1. the plain CUDA kernel in fp32 against a double-precision host evaluation of the
//      definitions' formula (tolerance 1e-4: only summation order differs);
//   2. FlashInfer (when built) and the plain backend through invoke(), the runner's ABI entry,
//      against the plain fp32 result with the task rule atol = rtol = 1e-2.
// Label `gpu`; filter: `--gtest_filter='GqaReferenceGpu*'`.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include <cuda_bf16.h>
#include <gtest/gtest.h>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "references/gqa_backends.h"
#include "references/plain_gqa.h"

#include "test_macros.h"

namespace ptxb::gpu {
namespace {

constexpr int kHeadDim = 128;

// Host copies of one problem; device copies in `device`.
struct HostProblem {
  GqaLayout layout;
  int hq, hkv;
  std::vector<int> qo_indptr, kv_indptr, kv_indices;  // kv_indptr in rows (ragged) / pages
  std::vector<__nv_bfloat16> q, k, v;                 // [rows, heads, 128]
  float sm_scale = 1.0f / std::sqrt(128.0f);
};

HostProblem make_problem(GqaLayout layout) {
  HostProblem p{layout, layout == GqaLayout::kRaggedPrefill ? 32 : 24,
                layout == GqaLayout::kRaggedPrefill ? 4 : 8};
  const bool decode = layout == GqaLayout::kPagedDecode;
  const std::vector<int> q_lens = decode ? std::vector<int>{1, 1, 1} : std::vector<int>{5, 0, 130};
  const std::vector<int> kv_lens = {7, 3, 300};
  p.qo_indptr = {0};
  p.kv_indptr = {0};
  for (int b = 0; b < 3; ++b) {
    p.qo_indptr.push_back(p.qo_indptr.back() + q_lens[b]);
    p.kv_indptr.push_back(p.kv_indptr.back() + kv_lens[b]);
  }
  const int kv_rows = p.kv_indptr.back();
  std::mt19937 rng(7);
  if (layout != GqaLayout::kRaggedPrefill) {  // page_size 1: a shuffled page table
    p.kv_indices.resize(kv_rows);
    std::iota(p.kv_indices.begin(), p.kv_indices.end(), 0);
    std::shuffle(p.kv_indices.begin(), p.kv_indices.end(), rng);
  }
  std::normal_distribution<float> normal;
  auto fill = [&](std::vector<__nv_bfloat16>& t, std::size_t n) {
    t.resize(n);
    for (auto& x : t) x = __float2bfloat16(normal(rng));
  };
  fill(p.q, static_cast<std::size_t>(p.qo_indptr.back()) * p.hq * kHeadDim);
  fill(p.k, static_cast<std::size_t>(kv_rows) * p.hkv * kHeadDim);
  fill(p.v, static_cast<std::size_t>(kv_rows) * p.hkv * kHeadDim);
  return p;
}

// The definitions' Python reference in double: output [total_q, hq, 128] and base-2 lse.
void host_reference(const HostProblem& p, std::vector<double>& out, std::vector<double>& lse) {
  const int total_q = p.qo_indptr.back();
  out.assign(static_cast<std::size_t>(total_q) * p.hq * kHeadDim, 0.0);
  lse.assign(static_cast<std::size_t>(total_q) * p.hq, -INFINITY);
  auto f = [](__nv_bfloat16 x) { return static_cast<double>(__bfloat162float(x)); };
  for (int b = 0; b + 1 < static_cast<int>(p.qo_indptr.size()); ++b) {
    const int q_len = p.qo_indptr[b + 1] - p.qo_indptr[b];
    const int kv_len = p.kv_indptr[b + 1] - p.kv_indptr[b];
    for (int i = 0; i < q_len; ++i)
      for (int h = 0; h < p.hq; ++h) {
        const int kvh = h / (p.hq / p.hkv), t = p.qo_indptr[b] + i;
        const int visible =
            p.layout == GqaLayout::kPagedDecode ? kv_len : std::min(kv_len, kv_len - q_len + i + 1);
        std::vector<double> s(std::max(visible, 0));
        std::vector<std::size_t> rows(s.size());
        for (int j = 0; j < visible; ++j) {
          const int row =
              p.kv_indices.empty() ? p.kv_indptr[b] + j : p.kv_indices[p.kv_indptr[b] + j];
          rows[j] = (static_cast<std::size_t>(row) * p.hkv + kvh) * kHeadDim;
          double dot = 0;
          for (int d = 0; d < kHeadDim; ++d)
            dot += f(p.q[(static_cast<std::size_t>(t) * p.hq + h) * kHeadDim + d]) *
                   f(p.k[rows[j] + d]);
          s[j] = dot * p.sm_scale;
        }
        if (s.empty()) continue;
        const double m = *std::max_element(s.begin(), s.end());
        double l = 0;
        for (double x : s) l += std::exp(x - m);
        for (int j = 0; j < visible; ++j)
          for (int d = 0; d < kHeadDim; ++d)
            out[(static_cast<std::size_t>(t) * p.hq + h) * kHeadDim + d] +=
                std::exp(s[j] - m) / l * f(p.v[rows[j] + d]);
        lse[static_cast<std::size_t>(t) * p.hq + h] = (m + std::log(l)) / std::log(2.0);
      }
  }
}

template <typename T>
Result<DeviceBuffer> upload(const std::vector<T>& host) {
  PTXB_ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::create(std::max<std::size_t>(
                                                 host.size() * sizeof(T), sizeof(T))));
  PTXB_CUDA_CHECK(
      cudaMemcpy(buffer.data(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return buffer;
}

template <typename T>
std::vector<T> download(const DeviceBuffer& buffer, std::size_t count) {
  std::vector<T> host(count);
  EXPECT_EQ(cudaMemcpy(host.data(), buffer.data(), count * sizeof(T), cudaMemcpyDeviceToHost),
            cudaSuccess);
  return host;
}

// The problem on the device, with invoke()'s parameter slots in signature order.
struct DeviceProblem {
  DeviceBuffer q, k, v, qo_indptr, kv_indptr, kv_indices, output, lse;
  std::vector<void*> pointers;
  std::vector<std::int64_t> axes;
  float sm_scale = 0;
  cudaStream_t stream = nullptr;
  std::vector<void*> params;
};

Status to_device(const HostProblem& p, DeviceProblem& d) {
  PTXB_ASSIGN_OR_RETURN(d.q, upload(p.q));
  PTXB_ASSIGN_OR_RETURN(d.k, upload(p.k));
  PTXB_ASSIGN_OR_RETURN(d.v, upload(p.v));
  PTXB_ASSIGN_OR_RETURN(d.qo_indptr, upload(p.qo_indptr));
  PTXB_ASSIGN_OR_RETURN(d.kv_indptr, upload(p.kv_indptr));
  PTXB_ASSIGN_OR_RETURN(d.kv_indices, upload(p.kv_indices));
  const std::int64_t total_q = p.qo_indptr.back(), rows = p.kv_indptr.back();
  PTXB_ASSIGN_OR_RETURN(d.output,
                        DeviceBuffer::create(DType::kBFloat16, total_q * p.hq * kHeadDim));
  PTXB_ASSIGN_OR_RETURN(d.lse, DeviceBuffer::create(DType::kFloat32, total_q * p.hq));
  d.sm_scale = p.sm_scale;
  d.pointers = {d.q.data(), d.k.data(), d.v.data()};
  d.pointers.reserve(8);  // params point into it: no reallocation after this
  if (p.layout != GqaLayout::kPagedDecode) d.pointers.push_back(d.qo_indptr.data());
  d.pointers.push_back(d.kv_indptr.data());
  if (p.layout != GqaLayout::kRaggedPrefill) d.pointers.push_back(d.kv_indices.data());
  const std::int64_t batch = 3, hq = p.hq, hkv = p.hkv, dim = kHeadDim;
  if (p.layout == GqaLayout::kPagedDecode) d.axes = {batch, hq, hkv, dim, rows, 1, batch + 1, rows};
  if (p.layout == GqaLayout::kPagedPrefill)
    d.axes = {hq, hkv, dim, 1, batch + 1, total_q, rows, rows};
  if (p.layout == GqaLayout::kRaggedPrefill) d.axes = {hq, hkv, dim, batch + 1, total_q, rows};
  d.params.clear();
  for (auto& pointer : d.pointers) d.params.push_back(&pointer);
  d.params.push_back(&d.sm_scale);
  d.pointers.push_back(d.output.data());
  d.pointers.push_back(d.lse.data());
  d.params.push_back(&d.pointers[d.pointers.size() - 2]);
  d.params.push_back(&d.pointers.back());
  for (auto& axis : d.axes) d.params.push_back(&axis);
  d.params.push_back(&d.stream);
  return ok_status();
}

bool close(double x, double ref, double atol, double rtol) {
  if (std::isinf(ref) && x == ref) return true;
  const double diff = std::fabs(x - ref);
  return std::isfinite(x) && (diff <= atol || diff <= rtol * std::fabs(ref));
}

class GqaReferenceGpu : public ::testing::TestWithParam<GqaLayout> {};

TEST_P(GqaReferenceGpu, PlainAndFlashInferMatchTheFormula) {
  const HostProblem p = make_problem(GetParam());
  std::vector<double> ref_out, ref_lse;
  host_reference(p, ref_out, ref_lse);
  DeviceProblem d;
  ASSERT_OK(to_device(p, d));
  // 1. plain fp32 vs the host formula
  PlainGqa plain(GetParam());
  ASSERT_OK_AND_ASSIGN(GqaCall call, plain.unpack(d.params.data()));
  ASSERT_OK_AND_ASSIGN(DeviceBuffer out32, DeviceBuffer::create(DType::kFloat32, ref_out.size()));
  ASSERT_OK(plain_gqa_attention(call, out32.data(), DType::kFloat32));
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto plain_out = download<float>(out32, ref_out.size());
  const auto plain_lse = download<float>(d.lse, ref_lse.size());
  for (std::size_t i = 0; i < ref_out.size(); ++i)
    ASSERT_TRUE(close(plain_out[i], ref_out[i], 1e-4, 1e-4)) << "output " << i;
  for (std::size_t i = 0; i < ref_lse.size(); ++i)
    ASSERT_TRUE(close(plain_lse[i], ref_lse[i], 1e-4, 1e-4)) << "lse " << i;
  // 2. the backends through invoke() vs plain fp32, task rule
  const std::string layout = to_string(GetParam());
  for (const std::string& name : {"flashinfer_gqa_" + layout, "plain_cuda_gqa_" + layout}) {
    if (name.starts_with("flashinfer") && !flashinfer_built()) continue;
    ASSERT_OK_AND_ASSIGN(auto backend, make_reference(name, GetParam() != GqaLayout::kPagedDecode));
    ASSERT_OK(backend->prepare_call(d.params.data()));
    ASSERT_OK(backend->invoke(d.params.data()));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto out = download<__nv_bfloat16>(d.output, ref_out.size());
    const auto lse = download<float>(d.lse, ref_lse.size());
    for (std::size_t i = 0; i < ref_out.size(); ++i)
      ASSERT_TRUE(close(__bfloat162float(out[i]), plain_out[i], 1e-2, 1e-2))
          << name << " out " << i;
    for (std::size_t i = 0; i < ref_lse.size(); ++i)
      ASSERT_TRUE(close(lse[i], plain_lse[i], 1e-2, 1e-2)) << name << " lse " << i;
    EXPECT_EQ(backend->describe()["shapes"].size(), 1u) << name;
  }
  if (!flashinfer_built()) GTEST_SKIP() << "FlashInfer not built (-DPTXB_WITH_FLASHINFER=ON)";
}

INSTANTIATE_TEST_SUITE_P(Layouts, GqaReferenceGpu,
                         ::testing::Values(GqaLayout::kPagedDecode, GqaLayout::kPagedPrefill,
                                           GqaLayout::kRaggedPrefill),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace ptxb::gpu
