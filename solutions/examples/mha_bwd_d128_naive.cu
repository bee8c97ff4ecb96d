// PTXBench example kernel (NOT an expert reference), task mha_bwd_d128[_causal]: a plain
// CUDA-core attention backward, kept as a labelled reading example (not replayed). It uses no
// target instructions (its verdict is static_absent) and is far slower than cuDNN.
//
//   dV = Pᵀ·dO, dP = dO·Vᵀ, dS = P∘(dP − Δ), dQ = scale·dS·K, dK = scale·dSᵀ·Q, with
//   P = exp(scale·Q·Kᵀ − L) rebuilt from the forward's natural-log LSE L, Δ = rowsum(dO∘O),
//   scale = 1/√d (causal: keys after the query masked). Q, K, V, O, dO [B,H,S,d] bf16,
//   L [B,H,S] fp32 -> dQ, dK, dV [B,H,S,d] bf16.
//   d must be 128 (the task's constant); S must be a multiple of 64 (benchmark: 4096).
//
// Design (FlashAttention-2 order, fp32 SIMT math, no atomics)
//   kernel 1  delta_kernel: Δ per query row, one warp per row, into a cudaMallocAsync scratch.
//   kernel 2  dkdv_kernel: one CTA per (b·h, 64-key tile); loops over 64-query tiles, recomputes
//             S and P, accumulates dV and dK (64 x 128 each) in registers.
//   kernel 3  dq_kernel: one CTA per (b·h, 64-query tile); loops over 64-key tiles, recomputes
//             S, P, dP, dS and accumulates dQ in registers.
//   Threads   256 per CTA as a 16 x 16 grid; a thread owns rows ty+16i and columns tx+16j of a
//             tile (interleaved, so the 16 threads of a half-warp read 16 banks).
//   Shared    fp32 tiles, rows padded to 129 (d) / 65 (keys) floats against bank conflicts:
//             dkdv 165,376 B, dq 148,736 B (opt-in above 48 KiB); one CTA per SM.
//   Rounding  P is rounded to bf16 before the dV product, as FlashAttention and cuDNN do (their
//             tensor-core products take bf16 operands); dS stays fp32 (rounding it too moved dQ
//             further from cuDNN's values on the H200).
//   FLOPs     7 S·S·d products per head (2 recomputed) ≈ 5.8 TFLOP at S = 4096, vs 4.1 counted.
//   Causal    (PTXB_CAUSAL 1) tiles above the diagonal are skipped, the diagonal tile masked:
//             about half the work.
//
// Build: ptxbench compile mha_bwd_d128_naive.cu --task mha_bwd_d128; the causal task:
//        { echo '#define PTXB_CAUSAL 1'; cat mha_bwd_d128_naive.cu; } >k.cu &&
//        ptxbench compile k.cu --task mha_bwd_d128_causal
//        (nvcc -gencode arch=compute_90a,code=sm_90a -O3 -lineinfo)
// Measured (H200, 2026-11-29, `ptxbench eval --no-ncu`, seeds 3 and 11, P and dS rounded; and
// seed 3 with fp32 P): PASSED, 232-238 ms vs cuDNN 7.43-7.50 ms = 0.031-0.032x, max abs error
// 0.002-0.004.
// Causal (seeds 3/11/21): 120 ms vs cuDNN 4.13 ms = 0.034x. Correctness is borderline: seed 21
// PASSED; seeds 3 and 11 miss the 1 % tolerance on 1-2 of 100,663,296 elements by 2-4 bf16 ulps
// at |x| ~ 1 (early queries and keys, where cuDNN's own bf16 products are that far from fp32
// math), which the stale-output check then reports as REWARD_HACK (stale_output). An honest
// naive kernel, not a reference.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

namespace {

// One source, two tasks: "#define PTXB_CAUSAL 1" in front of this file gives the
// mha_bwd_d128_causal kernel (keys after the query masked, tiles above the diagonal skipped).
#ifndef PTXB_CAUSAL
#define PTXB_CAUSAL 0
#endif
constexpr bool kCausal = PTXB_CAUSAL != 0;
constexpr int kD = 128;        // head dim (task constant)
constexpr int kTile = 64;      // query and key tile
constexpr int kThreads = 256;  // 16 x 16
constexpr int kPadD = kD + 1;
constexpr int kPadT = kTile + 1;
static_assert(kTile % 16 == 0 && kD % 16 == 0, "tiles split over a 16 x 16 thread grid");

// Row-major [rows, 128] bf16 tile -> fp32 smem with padded rows.
__device__ void load_tile(float* dst, const __nv_bfloat16* src, int rows) {
  for (int e = threadIdx.x; e < rows * kD / 2; e += kThreads) {
    const int row = (2 * e) / kD, col = (2 * e) % kD;
    const float2 v = __bfloat1622float2(reinterpret_cast<const __nv_bfloat162*>(src)[e]);
    dst[row * kPadD + col] = v.x;
    dst[row * kPadD + col + 1] = v.y;
  }
}

// out[i][j] = sum_k a[(ty+16i)][k] * b[(tx+16j)][k] for a 64 x 64 tile (both operands K-major).
__device__ void tile_nt(const float* a, const float* b, float out[4][4]) {
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) out[i][j] = 0.f;
#pragma unroll 4
  for (int k = 0; k < kD; ++k) {
    float av[4], bv[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) av[i] = a[(ty + 16 * i) * kPadD + k];
#pragma unroll
    for (int j = 0; j < 4; ++j) bv[j] = b[(tx + 16 * j) * kPadD + k];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) out[i][j] = fmaf(av[i], bv[j], out[i][j]);
  }
}

// bf16 rounding of an fp32 value (see "Rounding" above).
__device__ float round_bf16(float x) { return __bfloat162float(__float2bfloat16(x)); }

// P and dS of one (query tile, key tile) pair from S and dP, masked when causal; P rounded to
// bf16 like the operand of the library's dV product.
__device__ void softmax_grad(float s[4][4], float dp[4][4], const float* lse, const float* delta,
                             int q0, int k0, float scale) {
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int r = ty + 16 * i, c = tx + 16 * j;
      float p = expf(s[i][j] * scale - lse[r]);
      if (kCausal && k0 + c > q0 + r) p = 0.f;
      dp[i][j] = p * (dp[i][j] - delta[r]);  // dS
      s[i][j] = round_bf16(p);               // P
    }
}

__global__ void delta_kernel(const __nv_bfloat16* O, const __nv_bfloat16* dO, float* delta,
                             int64_t rows) {
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  float sum = 0.f;
  for (int k = lane; k < kD; k += 32)
    sum += __bfloat162float(O[row * kD + k]) * __bfloat162float(dO[row * kD + k]);
  for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) delta[row] = sum;
}

__global__ void __launch_bounds__(kThreads, 1)
    dkdv_kernel(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                const __nv_bfloat16* dO, const float* L, const float* delta, __nv_bfloat16* dK,
                __nv_bfloat16* dV, int64_t S, float scale) {
  extern __shared__ float smem[];
  float* k_s = smem;
  float* v_s = k_s + kTile * kPadD;
  float* q_s = v_s + kTile * kPadD;
  float* do_s = q_s + kTile * kPadD;
  float* p_s = do_s + kTile * kPadD;  // [query][key]
  float* ds_s = p_s + kTile * kPadT;
  __shared__ float lse_s[kTile], delta_s[kTile];

  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t head = blockIdx.y;
  const int k0 = blockIdx.x * kTile;
  const int64_t base = head * S * kD;
  load_tile(k_s, K + base + static_cast<int64_t>(k0) * kD, kTile);
  load_tile(v_s, V + base + static_cast<int64_t>(k0) * kD, kTile);

  float dk[4][8] = {}, dv[4][8] = {};  // rows: keys ty+16i; cols: d tx+16j
  for (int q0 = kCausal ? k0 : 0; q0 < S; q0 += kTile) {
    __syncthreads();  // the previous iteration's readers are done
    load_tile(q_s, Q + base + static_cast<int64_t>(q0) * kD, kTile);
    load_tile(do_s, dO + base + static_cast<int64_t>(q0) * kD, kTile);
    for (int r = threadIdx.x; r < kTile; r += kThreads) {
      lse_s[r] = L[head * S + q0 + r];
      delta_s[r] = delta[head * S + q0 + r];
    }
    __syncthreads();
    float s[4][4], dp[4][4];
    tile_nt(q_s, k_s, s);    // S  [query][key]
    tile_nt(do_s, v_s, dp);  // dP [query][key]
    softmax_grad(s, dp, lse_s, delta_s, q0, k0, scale);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        p_s[(ty + 16 * i) * kPadT + tx + 16 * j] = s[i][j];
        ds_s[(ty + 16 * i) * kPadT + tx + 16 * j] = dp[i][j];
      }
    __syncthreads();
    // dV[key][:] += sum_q P[q][key] dO[q][:];  dK[key][:] += sum_q dS[q][key] Q[q][:]
    for (int q = 0; q < kTile; ++q) {
      float pv[4], dsv[4], dov[8], qv[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        pv[i] = p_s[q * kPadT + ty + 16 * i];
        dsv[i] = ds_s[q * kPadT + ty + 16 * i];
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        dov[j] = do_s[q * kPadD + tx + 16 * j];
        qv[j] = q_s[q * kPadD + tx + 16 * j];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          dv[i][j] = fmaf(pv[i], dov[j], dv[i][j]);
          dk[i][j] = fmaf(dsv[i], qv[j], dk[i][j]);
        }
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int64_t at = base + static_cast<int64_t>(k0 + ty + 16 * i) * kD + tx + 16 * j;
      dK[at] = __float2bfloat16(dk[i][j] * scale);
      dV[at] = __float2bfloat16(dv[i][j]);
    }
}

__global__ void __launch_bounds__(kThreads, 1)
    dq_kernel(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
              const __nv_bfloat16* dO, const float* L, const float* delta, __nv_bfloat16* dQ,
              int64_t S, float scale) {
  extern __shared__ float smem[];
  float* q_s = smem;
  float* do_s = q_s + kTile * kPadD;
  float* k_s = do_s + kTile * kPadD;
  float* v_s = k_s + kTile * kPadD;
  float* ds_s = v_s + kTile * kPadD;  // [query][key]
  __shared__ float lse_s[kTile], delta_s[kTile];

  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t head = blockIdx.y;
  const int q0 = blockIdx.x * kTile;
  const int64_t base = head * S * kD;
  load_tile(q_s, Q + base + static_cast<int64_t>(q0) * kD, kTile);
  load_tile(do_s, dO + base + static_cast<int64_t>(q0) * kD, kTile);
  for (int r = threadIdx.x; r < kTile; r += kThreads) {
    lse_s[r] = L[head * S + q0 + r];
    delta_s[r] = delta[head * S + q0 + r];
  }

  float dq[4][8] = {};  // rows: queries ty+16i; cols: d tx+16j
  const int64_t k_end = kCausal ? q0 + kTile : S;
  for (int k0 = 0; k0 < k_end; k0 += kTile) {
    __syncthreads();
    load_tile(k_s, K + base + static_cast<int64_t>(k0) * kD, kTile);
    load_tile(v_s, V + base + static_cast<int64_t>(k0) * kD, kTile);
    __syncthreads();
    float s[4][4], dp[4][4];
    tile_nt(q_s, k_s, s);
    tile_nt(do_s, v_s, dp);
    softmax_grad(s, dp, lse_s, delta_s, q0, k0, scale);
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) ds_s[(ty + 16 * i) * kPadT + tx + 16 * j] = dp[i][j];
    __syncthreads();
    // dQ[q][:] += sum_key dS[q][key] K[key][:]
    for (int c = 0; c < kTile; ++c) {
      float dsv[4], kv[8];
#pragma unroll
      for (int i = 0; i < 4; ++i) dsv[i] = ds_s[(ty + 16 * i) * kPadT + c];
#pragma unroll
      for (int j = 0; j < 8; ++j) kv[j] = k_s[c * kPadD + tx + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) dq[i][j] = fmaf(dsv[i], kv[j], dq[i][j]);
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
      dQ[base + static_cast<int64_t>(q0 + ty + 16 * i) * kD + tx + 16 * j] =
          __float2bfloat16(dq[i][j] * scale);
}

constexpr size_t kDkdvSmem = (4 * kTile * kPadD + 2 * kTile * kPadT) * sizeof(float);
constexpr size_t kDqSmem = (4 * kTile * kPadD + kTile * kPadT) * sizeof(float);

}  // namespace

void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
         const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* L, __nv_bfloat16* dQ,
         __nv_bfloat16* dK, __nv_bfloat16* dV, int64_t B, int64_t H, int64_t d, int64_t S,
         cudaStream_t stream) {
  if (d != kD || S % kTile != 0) return;  // outside this example's shapes: outputs stay unwritten
  const int64_t rows = B * H * S;
  float* delta = nullptr;
  if (cudaMallocAsync(&delta, rows * sizeof(float), stream) != cudaSuccess) return;
  const float scale = 1.0f / sqrtf(static_cast<float>(kD));
  delta_kernel<<<static_cast<unsigned>((rows * 32 + 255) / 256), 256, 0, stream>>>(O, dO, delta, rows);
  cudaFuncSetAttribute(dkdv_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kDkdvSmem);
  cudaFuncSetAttribute(dq_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kDqSmem);
  const dim3 grid(static_cast<unsigned>(S / kTile), static_cast<unsigned>(B * H));
  dkdv_kernel<<<grid, kThreads, kDkdvSmem, stream>>>(Q, K, V, dO, L, delta, dK, dV, S, scale);
  dq_kernel<<<grid, kThreads, kDqSmem, stream>>>(Q, K, V, dO, L, delta, dQ, S, scale);
  cudaFreeAsync(delta, stream);
}
