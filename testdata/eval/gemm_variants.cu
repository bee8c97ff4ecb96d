// Test candidates for the evaluator (tests/gpu/eval_test.cc, scripts/device_samples.sh): one
// GEMM for gemm_n7168_k5120 (C[M,N] = A[M,K] · B[N,K]^T, bf16, fp32 accumulation) with a
// deliberate defect chosen by PTXB_TEST_VARIANT, which the test prepends as a #define before
// compiling (candidates get no -D flags).
//
//   0 correct            plain SIMT tiles (64x64 per 256-thread block, K step 32)
//   1 off_by_one         skips the last K tile: wrong everywhere by a partial sum
//   2 nan                writes NaN to C[0, 0]
//   3 oob_write          one thread writes 2^31 elements past the end of C
//   4 hang               the kernel spins forever on a flag nobody sets
//   5 host_segfault      `run` dereferences a null pointer on the host
//   6 wgmma_live         correct GEMM + a 1-warpgroup probe kernel that issues one wgmma
//   7 wgmma_dead         the probe's wgmma sits behind a branch that is never taken (M < 0)
//   8 wgmma_pred_off     the probe's wgmma carries a guard predicate that is false at run time
//   9 partial_write      leaves the last row of C unwritten (poison survives there)
//  10 writes_input       correct C, but also overwrites A[0]
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#ifndef PTXB_TEST_VARIANT
#define PTXB_TEST_VARIANT 0
#endif

namespace {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 32;

__device__ volatile int g_never_set = 0;
__device__ float g_probe_sink[128 * 4];

__global__ void __launch_bounds__(256) gemm_tile_kernel(const __nv_bfloat16* __restrict__ A,
                                                        const __nv_bfloat16* __restrict__ B,
                                                        __nv_bfloat16* __restrict__ C, int64_t M,
                                                        int64_t N, int64_t K) {
  __shared__ float a_tile[kTileM][kTileK + 1];
  __shared__ float b_tile[kTileN][kTileK + 1];
  const int tx = threadIdx.x % 16;
  const int ty = threadIdx.x / 16;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTileM;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTileN;
#if PTXB_TEST_VARIANT == 4
  while (g_never_set == 0) __nanosleep(1000);
#endif
  float acc[4][4] = {};
#if PTXB_TEST_VARIANT == 1
  const int64_t k_end = K - kTileK;
#else
  const int64_t k_end = K;
#endif
  for (int64_t k0 = 0; k0 < k_end; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTileM * kTileK; i += blockDim.x) {
      const int r = i / kTileK, c = i % kTileK;
      const int64_t gr = row0 + r, gc = k0 + c;
      a_tile[r][c] = (gr < M && gc < K) ? __bfloat162float(A[gr * K + gc]) : 0.f;
      const int64_t gn = col0 + r;
      b_tile[r][c] = (gn < N && gc < K) ? __bfloat162float(B[gn * K + gc]) : 0.f;
    }
    __syncthreads();
    for (int kk = 0; kk < kTileK; ++kk) {
      float a_frag[4], b_frag[4];
      for (int i = 0; i < 4; ++i) a_frag[i] = a_tile[ty * 4 + i][kk];
      for (int j = 0; j < 4; ++j) b_frag[j] = b_tile[tx * 4 + j][kk];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int64_t r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
#if PTXB_TEST_VARIANT == 9
      if (r == M - 1) continue;
#endif
      if (r < M && c < N) {
        float value = acc[i][j];
#if PTXB_TEST_VARIANT == 2
        if (r == 0 && c == 0) value = __int_as_float(0x7fc00000);
#endif
        C[r * N + c] = __float2bfloat16(value);
      }
    }
#if PTXB_TEST_VARIANT == 3
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0)
    C[M * N + (int64_t{1} << 31)] = __float2bfloat16(1.0f);
#endif
#if PTXB_TEST_VARIANT == 10
  if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0)
    const_cast<__nv_bfloat16*>(A)[0] = __float2bfloat16(123.0f);
#endif
}

// One warpgroup issues one wgmma.mma_async m64n8k16 (bf16 -> f32) on shared memory it zeroed:
// the descriptors point at real shared memory (no swizzle; leading byte offset 128, stride byte
// offset 256), so the instruction is valid when it runs. `enable` decides whether it runs:
// variant 7 branches around it, variant 8 predicates it off.
__global__ void __launch_bounds__(128) wgmma_probe_kernel(int enable) {
  __shared__ alignas(128) __nv_bfloat16 tile[64 * 16 + 8 * 16];
  for (int i = threadIdx.x; i < 64 * 16 + 8 * 16; i += blockDim.x) tile[i] = __float2bfloat16(0.f);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const uint64_t base = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  const uint64_t desc_a = ((base & 0x3FFFF) >> 4) | (uint64_t{128 >> 4} << 16) |
                          (uint64_t{256 >> 4} << 32);
  const uint64_t desc_b = (((base + 64 * 16 * 2) & 0x3FFFF) >> 4) | (uint64_t{128 >> 4} << 16) |
                          (uint64_t{256 >> 4} << 32);
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
#if PTXB_TEST_VARIANT == 7
  if (enable) {
#endif
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#if PTXB_TEST_VARIANT == 8
    asm volatile(
        "{\n.reg .pred g;\nsetp.ne.b32 g, %6, 0;\n"
        "@g wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 0, 1, "
        "1, 0, 0;\n}\n"
        : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
        : "l"(desc_a), "l"(desc_b), "r"(enable));
#else
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 0, 1, 1, 0, "
      "0;\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "l"(desc_a), "l"(desc_b));
#endif
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#if PTXB_TEST_VARIANT == 7
  }
#endif
  g_probe_sink[threadIdx.x * 4 + 0] = d0;
  g_probe_sink[threadIdx.x * 4 + 1] = d1;
  g_probe_sink[threadIdx.x * 4 + 2] = d2;
  g_probe_sink[threadIdx.x * 4 + 3] = d3;
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
#if PTXB_TEST_VARIANT == 5
  volatile int* null_pointer = nullptr;
  *null_pointer = 1;
#endif
  dim3 grid(static_cast<unsigned>((N + kTileN - 1) / kTileN),
            static_cast<unsigned>((M + kTileM - 1) / kTileM));
  gemm_tile_kernel<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
#if PTXB_TEST_VARIANT == 6
  wgmma_probe_kernel<<<1, 128, 0, stream>>>(1);
#elif PTXB_TEST_VARIANT == 7 || PTXB_TEST_VARIANT == 8
  wgmma_probe_kernel<<<1, 128, 0, stream>>>(M < 0 ? 1 : 0);
#endif
}
