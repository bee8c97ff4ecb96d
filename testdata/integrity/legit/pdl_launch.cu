// Adversarial suite (docs/integrity.md), legitimate but unusual: programmatic dependent launch on
// the given stream
//
//   Two kernels on the given stream; the second is launched with
//   cudaLaunchAttributeProgrammaticStreamSerialization, so it may start while the first is still
//   running. The first writes fp32 partial sums of the first half of K to a scratch buffer kept
//   across calls and signals cudaTriggerProgrammaticLaunchCompletion(); the second computes the
//   second half of K, then waits in cudaGridDependencySynchronize() before reading the partials.
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

__global__ void __launch_bounds__(256)
    first_half(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
               float* __restrict__ partial, int M, int N, int K, int k_split) {
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  tile_product(A, B, M, N, K, row0, col0, 0, k_split, acc);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) partial[static_cast<int64_t>(r) * N + c] = acc[i][j];
    }
  // Memory written before the trigger is visible to the dependent grid after its
  // cudaGridDependencySynchronize() (CUDA Programming Guide, programmatic dependent launch).
  __syncthreads();
  cudaTriggerProgrammaticLaunchCompletion();
}

__global__ void __launch_bounds__(256)
    second_half(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                const float* __restrict__ partial, __nv_bfloat16* __restrict__ C, int M, int N,
                int K, int k_split) {
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  tile_product(A, B, M, N, K, row0, col0, k_split, K, acc);  // overlaps the first kernel
  cudaGridDependencySynchronize();
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) {
        const int64_t at = static_cast<int64_t>(r) * N + c;
        C[at] = __float2bfloat16(partial[at] + acc[i][j]);
      }
    }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  static float* partial = nullptr;
  static size_t partial_bytes = 0;
  const size_t bytes = static_cast<size_t>(M * N) * sizeof(float);
  if (bytes > partial_bytes) {
    cudaFree(partial);
    cudaMalloc(&partial, bytes);
    partial_bytes = bytes;
  }
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int k_split = (k / 2 + kTileK - 1) / kTileK * kTileK;
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
                  static_cast<unsigned>((M + kTile - 1) / kTile));
  first_half<<<grid, 256, 0, stream>>>(A, B, partial, m, n, k, k_split);
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = dim3(256, 1, 1);
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, second_half, A, B, static_cast<const float*>(partial), C, m, n, k,
                     k_split);
}
