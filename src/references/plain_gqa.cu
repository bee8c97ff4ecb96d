// Kernel behind plain_gqa.h: one block per (query row, query head), a warp per key.
#include "references/plain_gqa.h"

#include <cmath>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "cuda/launch.cuh"

namespace ptxb::gpu {
namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxLaneElements = 8;  // head_dim <= 256

struct GqaArgs {
  const __nv_bfloat16 *q, *k, *v;
  const std::int32_t *qo_indptr, *kv_indptr, *kv_indices;  // qo_indptr null: decode
  float sm_scale;
  float* lse;
  int batch, num_qo_heads, num_kv_heads, head_dim, page_size;
  bool causal;
};

// Request of query row t: the last b with qo_indptr[b] <= t (binary search; requests may be
// empty, so equal entries are skipped to the last one).
__device__ int request_of(const GqaArgs& a, int t) {
  if (a.qo_indptr == nullptr) return t;
  int lo = 0, hi = a.batch - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (a.qo_indptr[mid] <= t)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

// Element offset of key/value row j of request b for KV head kvh.
__device__ std::int64_t kv_row(const GqaArgs& a, int b, int j, int kvh) {
  std::int64_t row;
  if (a.kv_indices != nullptr) {
    const std::int64_t page = a.kv_indices[a.kv_indptr[b] + j / a.page_size];
    row = page * a.page_size + j % a.page_size;
  } else {
    row = static_cast<std::int64_t>(a.kv_indptr[b]) + j;
  }
  return (row * a.num_kv_heads + kvh) * a.head_dim;
}

__device__ float score(const GqaArgs& a, const float* q, std::int64_t k_offset, int lane,
                       int elems) {
  float dot = 0.0f;
  for (int e = 0; e < elems; ++e)
    dot = fmaf(q[e], __bfloat162float(a.k[k_offset + lane + 32 * e]), dot);
  return warp_reduce(dot, SumOp{}) * a.sm_scale;
}

template <typename T>
__device__ void store(T* out, std::int64_t i, float v) {
  if constexpr (std::is_same_v<T, float>)
    out[i] = v;
  else
    out[i] = __float2bfloat16_rn(v);
}

template <typename T>
__global__ void __launch_bounds__(kThreads) plain_gqa_kernel(GqaArgs a, T* out) {
  __shared__ float scratch[32];
  __shared__ float partial[kWarps][kMaxLaneElements * 32];
  const int t = blockIdx.x, h = blockIdx.y;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int elems = a.head_dim / 32;
  const int kvh = h / (a.num_qo_heads / a.num_kv_heads);
  const int b = request_of(a, t);
  const int q_begin = a.qo_indptr == nullptr ? b : a.qo_indptr[b];
  const int q_len = a.qo_indptr == nullptr ? 1 : a.qo_indptr[b + 1] - q_begin;
  const int kv_len = (a.kv_indptr[b + 1] - a.kv_indptr[b]) * (a.kv_indices ? a.page_size : 1);
  const int visible = a.causal ? min(kv_len, max(0, kv_len - q_len + (t - q_begin) + 1)) : kv_len;
  const std::int64_t o_offset = (static_cast<std::int64_t>(t) * a.num_qo_heads + h) * a.head_dim;
  float q[kMaxLaneElements];
  for (int e = 0; e < elems; ++e) q[e] = __bfloat162float(a.q[o_offset + lane + 32 * e]);
  // Pass 1: the row maximum.
  float m = -INFINITY;
  for (int j = warp; j < visible; j += kWarps)
    m = fmaxf(m, score(a, q, kv_row(a, b, j, kvh), lane, elems));
  m = block_reduce(m, MaxOp{}, scratch);
  // Pass 2: l and the weighted sum of V, with the final maximum.
  float l = 0.0f, acc[kMaxLaneElements] = {};
  for (int j = warp; j < visible; j += kWarps) {
    const std::int64_t row = kv_row(a, b, j, kvh);
    const float p = expf(score(a, q, row, lane, elems) - m);
    l += p;
    for (int e = 0; e < elems; ++e)
      acc[e] = fmaf(p, __bfloat162float(a.v[row + lane + 32 * e]), acc[e]);
  }
  // Every lane of a warp holds that warp's sum (p comes from a warp-wide reduction): count it once.
  l = block_reduce(lane == 0 ? l : 0.0f, SumOp{}, scratch);
  for (int e = 0; e < elems; ++e) partial[warp][lane + 32 * e] = acc[e];
  __syncthreads();
  for (int d = threadIdx.x; d < a.head_dim; d += kThreads) {
    float sum = 0.0f;
    for (int w = 0; w < kWarps; ++w) sum += partial[w][d];
    store(out, o_offset + d, visible > 0 ? sum / l : 0.0f);
  }
  if (threadIdx.x == 0)
    a.lse[static_cast<std::int64_t>(t) * a.num_qo_heads + h] =
        visible > 0 ? (m + logf(l)) / static_cast<float>(M_LN2) : -INFINITY;
}

}  // namespace

Status plain_gqa_attention(const GqaCall& call, void* output, DType out_dtype) {
  const GqaShape& s = call.shape;
  if (s.head_dim % 32 != 0 || s.head_dim > 32 * kMaxLaneElements)
    return make_error("unsupported", "plain GQA: head_dim {} must be a multiple of 32 up to {}",
                      s.head_dim, 32 * kMaxLaneElements);
  if (out_dtype != DType::kFloat32 && out_dtype != DType::kBFloat16)
    return make_error("invalid_argument", "plain GQA: output must be fp32 or bf16");
  GqaArgs a{call.q,
            call.k,
            call.v,
            call.qo_indptr,
            call.kv_indptr,
            call.kv_indices,
            call.sm_scale,
            call.lse,
            static_cast<int>(s.batch),
            static_cast<int>(s.num_qo_heads),
            static_cast<int>(s.num_kv_heads),
            static_cast<int>(s.head_dim),
            static_cast<int>(s.page_size),
            s.layout != GqaLayout::kPagedDecode};
  const dim3 grid(static_cast<unsigned>(s.total_q), static_cast<unsigned>(s.num_qo_heads));
  if (out_dtype == DType::kFloat32)
    plain_gqa_kernel<<<grid, kThreads, 0, call.stream>>>(a, static_cast<float*>(output));
  else
    plain_gqa_kernel<<<grid, kThreads, 0, call.stream>>>(a, static_cast<__nv_bfloat16*>(output));
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

}  // namespace ptxb::gpu
