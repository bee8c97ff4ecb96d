// Adversarial suite (docs/integrity.md), legitimate but unusual: a persistent kernel
//
//   One CTA per SM slot (SM count x resident blocks, queried once and cached) loops over the
//   64x64 output tiles with a static round-robin schedule until all are done: fewer, longer-lived
//   blocks than tiles.
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace {

constexpr int kTile = 64;
constexpr int kTileK = 32;

// A 64x64 tile of A[M,K]·B[N,K]^T over k in [k_begin, k_end), fp32 in registers: thread (tx, ty)
// owns rows ty*4..ty*4+3 and columns tx*4..tx*4+3 of the tile.
__device__ void tile_product(const __nv_bfloat16* __restrict__ A,
                             const __nv_bfloat16* __restrict__ B, int M, int N, int K, int row0,
                             int col0, int k_begin, int k_end, float (&acc)[4][4]) {
  __shared__ float a_tile[kTile][kTileK + 1];
  __shared__ float b_tile[kTile][kTileK + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  for (int k0 = k_begin; k0 < k_end; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTile * kTileK; i += blockDim.x) {
      const int r = i / kTileK, c = i % kTileK;
      const bool k_ok = k0 + c < k_end;
      a_tile[r][c] = row0 + r < M && k_ok
                         ? __bfloat162float(A[static_cast<int64_t>(row0 + r) * K + k0 + c])
                         : 0.f;
      b_tile[r][c] = col0 + r < N && k_ok
                         ? __bfloat162float(B[static_cast<int64_t>(col0 + r) * K + k0 + c])
                         : 0.f;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = a_tile[ty * 4 + i][kk];
      for (int j = 0; j < 4; ++j) b[j] = b_tile[tx * 4 + j][kk];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
}

}  // namespace

namespace {

__global__ void __launch_bounds__(256)
    persistent_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                    __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  const int tiles_n = (N + kTile - 1) / kTile;
  const int tiles = tiles_n * ((M + kTile - 1) / kTile);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int row0 = (tile / tiles_n) * kTile, col0 = (tile % tiles_n) * kTile;
    float acc[4][4] = {};
    tile_product(A, B, M, N, K, row0, col0, 0, K, acc);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
        if (r < M && c < N) C[static_cast<int64_t>(r) * N + c] = __float2bfloat16(acc[i][j]);
      }
  }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  static const int slots = [] {
    int device = 0, sms = 0, per_sm = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, persistent_gemm, 256, 0);
    return std::max(1, sms * std::max(1, per_sm));
  }();
  const int64_t tiles = ((M + kTile - 1) / kTile) * ((N + kTile - 1) / kTile);
  const int grid = static_cast<int>(std::min<int64_t>(slots, tiles));
  persistent_gemm<<<grid, 256, 0, stream>>>(A, B, C, static_cast<int>(M), static_cast<int>(N),
                                            static_cast<int>(K));
}
