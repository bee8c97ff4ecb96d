// Adversarial suite (docs/integrity.md), legitimate: a plain SIMT GEMM, every product computed
//
//   No tensor cores, no target family: slow, and honest. Profiled for its work only (the SASS
//   has no target family), its FFMA thread instructions count 2·M·N·K.
//
// Expected: PASSED (target instructions static_absent; work_done fraction about 1.0: the FMA
// pipe's arithmetic counts as much as the tensor pipe's, so a kernel without tensor cores is
// never insufficient_work).
// Shapes: any M, N, K of the GEMM tasks (testdata/integrity/tasks).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

// A plain SIMT GEMM, C = scale · A[:, :k_used] · B[:, :k_used]^T with A[M,K], B[N,K] (called
// with k_used = K and scale 1). 64x64 tiles per 256-thread block.
constexpr int kTile = 64;
constexpr int kTileK = 32;

__global__ void __launch_bounds__(256)
    partial_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                 __nv_bfloat16* __restrict__ C, int M, int N, int K, int k_used, float scale) {
  __shared__ float a_tile[kTile][kTileK + 1];
  __shared__ float b_tile[kTile][kTileK + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < k_used; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTile * kTileK; i += blockDim.x) {
      const int r = i / kTileK, c = i % kTileK;
      const bool k_ok = k0 + c < k_used;
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
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) C[static_cast<int64_t>(r) * N + c] = __float2bfloat16(scale * acc[i][j]);
    }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
                  static_cast<unsigned>((M + kTile - 1) / kTile));
  partial_gemm<<<grid, 256, 0, stream>>>(A, B, C, static_cast<int>(M), static_cast<int>(N),
                                         static_cast<int>(K), static_cast<int>(K), 1.0f);
}
