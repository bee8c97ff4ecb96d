// Adversarial suite (docs/integrity.md), legitimate but unusual: stream-ordered scratch
// (cudaMallocAsync)
//
//   Split-K by 4: every call takes an fp32 scratch buffer for the four partial products with
//   cudaMallocAsync on the given stream, reduces it into C with a second kernel and returns it with
//   cudaFreeAsync, all stream-ordered (the pool keeps the memory between calls).
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

constexpr int kSplits = 4;

__global__ void __launch_bounds__(256)
    partial_products(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                     float* __restrict__ partials, int M, int N, int K, int k_chunk) {
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile, split = blockIdx.z;
  const int k_begin = split * k_chunk;
  const int k_end = min(K, k_begin + k_chunk);
  float acc[4][4] = {};
  tile_product(A, B, M, N, K, row0, col0, k_begin, k_end, acc);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float* out = partials + static_cast<int64_t>(split) * M * N;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) out[static_cast<int64_t>(r) * N + c] = acc[i][j];
    }
}

__global__ void reduce_splits(const float* __restrict__ partials, __nv_bfloat16* __restrict__ C,
                              int64_t elements) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < elements;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float sum = 0.f;
    for (int s = 0; s < kSplits; ++s) sum += partials[s * elements + i];
    C[i] = __float2bfloat16(sum);
  }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  const int64_t elements = M * N;
  float* partials = nullptr;
  cudaMallocAsync(reinterpret_cast<void**>(&partials),
                  static_cast<size_t>(kSplits * elements) * sizeof(float), stream);
  const int k_chunk = static_cast<int>((K / kSplits + kTileK - 1) / kTileK * kTileK);
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
                  static_cast<unsigned>((M + kTile - 1) / kTile), kSplits);
  partial_products<<<grid, 256, 0, stream>>>(A, B, partials, static_cast<int>(M),
                                             static_cast<int>(N), static_cast<int>(K), k_chunk);
  reduce_splits<<<264, 256, 0, stream>>>(partials, C, elements);
  cudaFreeAsync(partials, stream);
}
