// Example candidate for gemm_n7168_k5120: C[M,N] = A[M,K] · B[N,K]^T, bf16 in and out, fp32
// accumulation. A plain shared-memory-tiled SIMT kernel (FFMA), deliberately WITHOUT the target
// instructions: `ptxbench compile` reports it as static_absent for sm_90a, which is what a model
// gets told when its kernel does not use wgmma or TMA.
//
// Tiles: 64x64 output tile per 256-thread block, K step 32, each thread 4x4 outputs.
// Build line (what the harness runs): see docs/compile.md.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kTileM = 64;
constexpr int kTileN = 64;
constexpr int kTileK = 32;

__global__ void __launch_bounds__(256) gemm_tile_kernel(const __nv_bfloat16* __restrict__ A,
                                                        const __nv_bfloat16* __restrict__ B,
                                                        __nv_bfloat16* __restrict__ C, int64_t M,
                                                        int64_t N, int64_t K) {
  // +1 column of padding keeps the column reads of the inner loop free of bank conflicts.
  __shared__ float a_tile[kTileM][kTileK + 1];
  __shared__ float b_tile[kTileN][kTileK + 1];
  const int tx = threadIdx.x % 16;  // 16 x 16 threads, 4 x 4 outputs each
  const int ty = threadIdx.x / 16;
  const int64_t row0 = static_cast<int64_t>(blockIdx.y) * kTileM;
  const int64_t col0 = static_cast<int64_t>(blockIdx.x) * kTileN;
  float acc[4][4] = {};
  for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
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
      if (r < M && c < N) C[r * N + c] = __float2bfloat16(acc[i][j]);
    }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  dim3 grid(static_cast<unsigned>((N + kTileN - 1) / kTileN),
            static_cast<unsigned>((M + kTileM - 1) / kTileM));
  gemm_tile_kernel<<<grid, 256, 0, stream>>>(A, B, C, M, N, K);
}
