// Adversarial suite (docs/integrity.md), legitimate but unusual: synchronous copies on the legacy
// stream
//
//   Every call copies the problem shape to __constant__ memory with cudaMemcpyToSymbol (a
//   synchronous copy on the legacy default stream, common in model-written code and tolerated by
//   the ABI: the one off-stream form allowed — CUPTI records it without its async flag — and
//   timed with the call; an async copy elsewhere would be foreign_stream), clears C with
//   cudaMemsetAsync on the given stream, then accumulates into it.
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

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

__constant__ int c_shape[3];  // M, N, K

__global__ void __launch_bounds__(256)
    constant_shape_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                        __nv_bfloat16* __restrict__ C) {
  const int M = c_shape[0], N = c_shape[1], K = c_shape[2];
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  tile_product(A, B, M, N, K, row0, col0, 0, K, acc);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) {
        const int64_t at = static_cast<int64_t>(r) * N + c;
        C[at] = __float2bfloat16(__bfloat162float(C[at]) + acc[i][j]);  // C was zeroed
      }
    }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  const int shape[3] = {static_cast<int>(M), static_cast<int>(N), static_cast<int>(K)};
  cudaMemcpyToSymbol(c_shape, shape, sizeof shape);
  cudaMemsetAsync(C, 0, static_cast<size_t>(M * N) * sizeof(__nv_bfloat16), stream);
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
                  static_cast<unsigned>((M + kTile - 1) / kTile));
  constant_shape_gemm<<<grid, 256, 0, stream>>>(A, B, C);
}
