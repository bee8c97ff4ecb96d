// Kernels behind plain_kernels.h. Written for obviousness, not speed: a 16x16 shared-memory
// tiled GEMM, and one thread block per attention row with a warp per key/query dot product.
#include "references/plain_kernels.h"

#include <cmath>

#include "cuda/cuda_check.h"
#include "cuda/launch.cuh"

namespace ptxb::gpu {
namespace {

using Bf16 = __nv_bfloat16;

__device__ inline float to_float(Bf16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ inline void store(T* out, std::int64_t i, float v);
template <>
__device__ inline void store<float>(float* out, std::int64_t i, float v) {
  out[i] = v;
}
template <>
__device__ inline void store<Bf16>(Bf16* out, std::int64_t i, float v) {
  out[i] = __float2bfloat16_rn(v);
}

// ---- GEMM ----

constexpr int kTile = 16;

template <typename T>
__global__ void __launch_bounds__(kTile* kTile)
    plain_gemm_kernel(const Bf16* A, const Bf16* B, T* C, std::int64_t M, std::int64_t N,
                      std::int64_t K) {
  // +1 column: reading b_tile[tx][kk] across a warp hits 16 different banks.
  __shared__ float a_tile[kTile][kTile + 1];  // [m][k]
  __shared__ float b_tile[kTile][kTile + 1];  // [n][k]
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const std::int64_t m0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t n0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  float acc = 0.0f;
  for (std::int64_t k0 = 0; k0 < K; k0 += kTile) {
    std::int64_t k = k0 + tx;
    a_tile[ty][tx] = (m0 + ty < M && k < K) ? to_float(A[(m0 + ty) * K + k]) : 0.0f;
    b_tile[ty][tx] = (n0 + ty < N && k < K) ? to_float(B[(n0 + ty) * K + k]) : 0.0f;
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk) acc = fmaf(a_tile[ty][kk], b_tile[tx][kk], acc);
    __syncthreads();
  }
  if (m0 + ty < M && n0 + tx < N) store(C, (m0 + ty) * N + (n0 + tx), acc);
}

// ---- attention ----

constexpr int kRowThreads = 128;
constexpr int kRowWarps = kRowThreads / 32;

// a·b over D elements, computed by one warp (lanes stride over d); every lane gets the sum.
__device__ inline float warp_dot(const float* a_shared, const Bf16* b, std::int64_t D) {
  float partial = 0.0f;
  for (std::int64_t d = threadIdx.x % 32; d < D; d += 32) partial += a_shared[d] * to_float(b[d]);
  return warp_reduce(partial, SumOp{});
}
__device__ inline float warp_dot(const Bf16* a, const Bf16* b, std::int64_t D) {
  float partial = 0.0f;
  for (std::int64_t d = threadIdx.x % 32; d < D; d += 32)
    partial += to_float(a[d]) * to_float(b[d]);
  return warp_reduce(partial, SumOp{});
}

__device__ inline void load_row(float* dst, const Bf16* src, std::int64_t D) {
  for (std::int64_t d = threadIdx.x; d < D; d += blockDim.x) dst[d] = to_float(src[d]);
}

// Block per query row: grid = B·H·S. Shared: q[D], e[S].
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    attention_forward_kernel(const Bf16* Q, const Bf16* K, const Bf16* V, T* O, float* LSE,
                             std::int64_t S, std::int64_t D, float scale, bool causal) {
  extern __shared__ float smem[];
  __shared__ float scratch[32];
  float* q = smem;
  float* e = smem + D;
  const std::int64_t row = blockIdx.x;  // (b·H + h)·S + i
  const std::int64_t i = row % S;
  const std::int64_t head = row / S;
  const Bf16* k_head = K + head * S * D;
  const Bf16* v_head = V + head * S * D;
  const std::int64_t visible = causal ? i + 1 : S;  // keys 0..visible-1
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  load_row(q, Q + row * D, D);
  __syncthreads();
  float local_max = -INFINITY;
  for (std::int64_t j = warp; j < visible; j += kRowWarps) {
    float s = warp_dot(q, k_head + j * D, D) * scale;
    if (lane == 0) e[j] = s;
    local_max = fmaxf(local_max, s);
  }
  const float row_max = block_reduce(local_max, MaxOp{}, scratch);
  float local_sum = 0.0f;
  for (std::int64_t j = threadIdx.x; j < visible; j += blockDim.x) {
    e[j] = expf(e[j] - row_max);
    local_sum += e[j];
  }
  const float row_sum = block_reduce(local_sum, SumOp{}, scratch);
  __syncthreads();  // every e[j] written before any thread reads them all
  for (std::int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    float acc = 0.0f;
    for (std::int64_t j = 0; j < visible; ++j) acc += e[j] * to_float(v_head[j * D + d]);
    store(O, row * D + d, acc / row_sum);
  }
  if (threadIdx.x == 0) LSE[row] = row_max + logf(row_sum);
}

// dQ: block per query row. Shared: q[D], dO[D], dS[S].
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    attention_dq_kernel(const Bf16* Q, const Bf16* K, const Bf16* V, const Bf16* O, const Bf16* dO,
                        const float* LSE, T* dQ, std::int64_t S, std::int64_t D, float scale,
                        bool causal) {
  extern __shared__ float smem[];
  __shared__ float scratch[32];
  float* q = smem;
  float* dout = smem + D;
  float* ds = smem + 2 * D;
  const std::int64_t row = blockIdx.x;
  const std::int64_t i = row % S;
  const std::int64_t head = row / S;
  const Bf16* k_head = K + head * S * D;
  const Bf16* v_head = V + head * S * D;
  const std::int64_t visible = causal ? i + 1 : S;
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  load_row(q, Q + row * D, D);
  load_row(dout, dO + row * D, D);
  float local_delta = 0.0f;
  for (std::int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    local_delta += to_float(dO[row * D + d]) * to_float(O[row * D + d]);
  }
  const float delta = block_reduce(local_delta, SumOp{}, scratch);  // also syncs q, dout
  const float lse = LSE[row];
  for (std::int64_t j = warp; j < visible; j += kRowWarps) {
    float p = expf(warp_dot(q, k_head + j * D, D) * scale - lse);
    float dp = warp_dot(dout, v_head + j * D, D);
    if (lane == 0) ds[j] = p * (dp - delta);
  }
  __syncthreads();
  for (std::int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    float acc = 0.0f;
    for (std::int64_t j = 0; j < visible; ++j) acc += ds[j] * to_float(k_head[j * D + d]);
    store(dQ, row * D + d, acc * scale);
  }
}

// dK, dV: block per key row. Shared: k[D], v[D], P[S], dS[S].
template <typename T>
__global__ void __launch_bounds__(kRowThreads)
    attention_dkdv_kernel(const Bf16* Q, const Bf16* K, const Bf16* V, const Bf16* O,
                          const Bf16* dO, const float* LSE, T* dK, T* dV, std::int64_t S,
                          std::int64_t D, float scale, bool causal) {
  extern __shared__ float smem[];
  float* k = smem;
  float* v = smem + D;
  float* p = smem + 2 * D;
  float* ds = smem + 2 * D + S;
  const std::int64_t row = blockIdx.x;  // (b·H + h)·S + j
  const std::int64_t j = row % S;
  const std::int64_t head = row / S;
  const Bf16* q_head = Q + head * S * D;
  const Bf16* o_head = O + head * S * D;
  const Bf16* do_head = dO + head * S * D;
  const float* lse_head = LSE + head * S;
  const std::int64_t first_query = causal ? j : 0;  // queries that see key j
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;

  load_row(k, K + row * D, D);
  load_row(v, V + row * D, D);
  __syncthreads();
  for (std::int64_t i = first_query + warp; i < S; i += kRowWarps) {
    float p_ij = expf(warp_dot(k, q_head + i * D, D) * scale - lse_head[i]);
    float dp = warp_dot(v, do_head + i * D, D);
    float delta_i = warp_dot(do_head + i * D, o_head + i * D, D);
    if (lane == 0) {
      p[i] = p_ij;
      ds[i] = p_ij * (dp - delta_i);
    }
  }
  __syncthreads();
  for (std::int64_t d = threadIdx.x; d < D; d += blockDim.x) {
    float dv = 0.0f;
    float dk = 0.0f;
    for (std::int64_t i = first_query; i < S; ++i) {
      dv += p[i] * to_float(do_head[i * D + d]);
      dk += ds[i] * to_float(q_head[i * D + d]);
    }
    store(dV, row * D + d, dv);
    store(dK, row * D + d, dk * scale);
  }
}

float softmax_scale(std::int64_t D) {
  // Same value the cuDNN reference receives: 1/√D computed in double, rounded once to float.
  return static_cast<float>(1.0 / std::sqrt(static_cast<double>(D)));
}

bool is_output_dtype(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kBFloat16;
}

// Opts `kernel` into `bytes` of dynamic shared memory when above the 48 KB default.
template <typename Kernel>
Status set_dynamic_smem(Kernel kernel, std::size_t bytes) {
  int device = 0;
  PTXB_CUDA_CHECK(cudaGetDevice(&device));
  int optin = 0;
  PTXB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > static_cast<std::size_t>(optin)) {
    return make_error("unsupported",
                      "plain attention reference: a row needs {} bytes of shared memory, the "
                      "device allows {} per block (sequence too long)",
                      bytes, optin);
  }
  if (bytes > 48 * 1024) {
    PTXB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes)));
  }
  return ok_status();
}

Status check_attention_args(std::int64_t B, std::int64_t H, std::int64_t S, std::int64_t D) {
  if (B <= 0 || H <= 0 || S <= 0 || D <= 0) {
    return make_error("invalid_argument", "plain attention: non-positive shape B={} H={} S={} D={}",
                      B, H, S, D);
  }
  if (B * H * S > 0x7FFFFFFFll) {
    return make_error("invalid_argument", "plain attention: B·H·S = {} rows exceed the grid limit",
                      B * H * S);
  }
  return ok_status();
}

template <typename T>
Status launch_forward(const Bf16* Q, const Bf16* K, const Bf16* V, void* O, float* LSE,
                      std::int64_t rows, std::int64_t S, std::int64_t D, bool causal,
                      cudaStream_t stream) {
  std::size_t smem = static_cast<std::size_t>(D + S) * sizeof(float);
  PTXB_RETURN_IF_ERROR(set_dynamic_smem(attention_forward_kernel<T>, smem));
  attention_forward_kernel<T><<<static_cast<unsigned>(rows), kRowThreads, smem, stream>>>(
      Q, K, V, static_cast<T*>(O), LSE, S, D, softmax_scale(D), causal);
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

template <typename T>
Status launch_backward(const Bf16* Q, const Bf16* K, const Bf16* V, const Bf16* O, const Bf16* dO,
                       const float* LSE, void* dQ, void* dK, void* dV, std::int64_t rows,
                       std::int64_t S, std::int64_t D, bool causal, cudaStream_t stream) {
  float scale = softmax_scale(D);
  std::size_t dq_smem = static_cast<std::size_t>(2 * D + S) * sizeof(float);
  std::size_t dkdv_smem = static_cast<std::size_t>(2 * D + 2 * S) * sizeof(float);
  PTXB_RETURN_IF_ERROR(set_dynamic_smem(attention_dq_kernel<T>, dq_smem));
  PTXB_RETURN_IF_ERROR(set_dynamic_smem(attention_dkdv_kernel<T>, dkdv_smem));
  attention_dq_kernel<T><<<static_cast<unsigned>(rows), kRowThreads, dq_smem, stream>>>(
      Q, K, V, O, dO, LSE, static_cast<T*>(dQ), S, D, scale, causal);
  PTXB_CUDA_CHECK_LAUNCH();
  attention_dkdv_kernel<T><<<static_cast<unsigned>(rows), kRowThreads, dkdv_smem, stream>>>(
      Q, K, V, O, dO, LSE, static_cast<T*>(dK), static_cast<T*>(dV), S, D, scale, causal);
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

}  // namespace

Status plain_gemm(const Bf16* A, const Bf16* B, void* C, DType c_dtype, std::int64_t M,
                  std::int64_t N, std::int64_t K, cudaStream_t stream) {
  if (!is_output_dtype(c_dtype)) {
    return make_error("invalid_argument", "plain_gemm: unsupported output dtype {}",
                      dtype_name(c_dtype));
  }
  if (M <= 0 || N <= 0 || K <= 0) {
    return make_error("invalid_argument", "plain_gemm: non-positive shape M={} N={} K={}", M, N, K);
  }
  if ((M + kTile - 1) / kTile > 65535) {
    return make_error("invalid_argument", "plain_gemm: M={} exceeds the grid's y limit", M);
  }
  dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
            static_cast<unsigned>((M + kTile - 1) / kTile));
  dim3 block(kTile, kTile);
  if (c_dtype == DType::kFloat32) {
    plain_gemm_kernel<<<grid, block, 0, stream>>>(A, B, static_cast<float*>(C), M, N, K);
  } else {
    plain_gemm_kernel<<<grid, block, 0, stream>>>(A, B, static_cast<Bf16*>(C), M, N, K);
  }
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

Status plain_attention_forward(const Bf16* Q, const Bf16* K, const Bf16* V, void* O, DType o_dtype,
                               float* LSE, std::int64_t B, std::int64_t H, std::int64_t S,
                               std::int64_t D, bool causal, cudaStream_t stream) {
  if (!is_output_dtype(o_dtype)) {
    return make_error("invalid_argument", "plain attention: unsupported output dtype {}",
                      dtype_name(o_dtype));
  }
  PTXB_RETURN_IF_ERROR(check_attention_args(B, H, S, D));
  if (o_dtype == DType::kFloat32) {
    return launch_forward<float>(Q, K, V, O, LSE, B * H * S, S, D, causal, stream);
  }
  return launch_forward<Bf16>(Q, K, V, O, LSE, B * H * S, S, D, causal, stream);
}

Status plain_attention_backward(const Bf16* Q, const Bf16* K, const Bf16* V, const Bf16* O,
                                const Bf16* dO, const float* LSE, void* dQ, void* dK, void* dV,
                                DType grad_dtype, std::int64_t B, std::int64_t H, std::int64_t S,
                                std::int64_t D, bool causal, cudaStream_t stream) {
  if (!is_output_dtype(grad_dtype)) {
    return make_error("invalid_argument", "plain attention: unsupported gradient dtype {}",
                      dtype_name(grad_dtype));
  }
  PTXB_RETURN_IF_ERROR(check_attention_args(B, H, S, D));
  if (grad_dtype == DType::kFloat32) {
    return launch_backward<float>(Q, K, V, O, dO, LSE, dQ, dK, dV, B * H * S, S, D, causal, stream);
  }
  return launch_backward<Bf16>(Q, K, V, O, dO, LSE, dQ, dK, dV, B * H * S, S, D, causal, stream);
}

}  // namespace ptxb::gpu
