// Adversarial suite (docs/integrity.md), legitimate but unusual: a thread-block-cluster launch
//
//   cudaLaunchKernelEx with a cluster of 2 CTAs along M: the two CTAs compute vertically adjacent
//   64x64 tiles that need the same B tile, so each loads half of it into its own shared memory and
//   reads the other half from its partner through distributed shared memory
//   (cluster.map_shared_rank), with cluster.sync() around every k step.
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cooperative_groups.h>

#include <cstdint>

namespace {

namespace cg = cooperative_groups;

constexpr int kTile = 64;
constexpr int kTileK = 32;
constexpr int kHalf = kTile / 2;

__global__ void __launch_bounds__(256)
    cluster_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                 __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ float a_tile[kTile][kTileK + 1];
  __shared__ float b_half[kHalf][kTileK + 1];  // B rows col0 + rank*32 .. +31 of this k step
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();  // 0 or 1: the cluster spans gridDim.y pairs
  const float* peer_half = cluster.map_shared_rank(&b_half[0][0], rank ^ 1u);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTile * kTileK; i += blockDim.x) {
      const int r = i / kTileK, c = i % kTileK;
      a_tile[r][c] = row0 + r < M && k0 + c < K
                         ? __bfloat162float(A[static_cast<int64_t>(row0 + r) * K + k0 + c])
                         : 0.f;
    }
    for (int i = threadIdx.x; i < kHalf * kTileK; i += blockDim.x) {
      const int r = i / kTileK, c = i % kTileK;
      const int n = col0 + static_cast<int>(rank) * kHalf + r;
      b_half[r][c] =
          n < N && k0 + c < K ? __bfloat162float(B[static_cast<int64_t>(n) * K + k0 + c]) : 0.f;
    }
    cluster.sync();  // both halves of the B tile (and this CTA's A tile) are in place
#pragma unroll 4
    for (int kk = 0; kk < kTileK; ++kk) {
      float a[4], b[4];
      for (int i = 0; i < 4; ++i) a[i] = a_tile[ty * 4 + i][kk];
      for (int j = 0; j < 4; ++j) {
        const int col = tx * 4 + j;  // 0..63 within the B tile
        const int half = col / kHalf, r = col % kHalf;
        b[j] = half == static_cast<int>(rank) ? b_half[r][kk] : peer_half[r * (kTileK + 1) + kk];
      }
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
    cluster.sync();  // the partner has read my half before I overwrite it
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) C[static_cast<int64_t>(r) * N + c] = __float2bfloat16(acc[i][j]);
    }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  // The cluster pairs tiles along M, so the M tile count is rounded up to even (the extra tile
  // row, if any, is all out of range and only shares its B tile).
  const unsigned tiles_m = static_cast<unsigned>((M + kTile - 1) / kTile);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>((N + kTile - 1) / kTile), (tiles_m + 1) / 2 * 2, 1);
  config.blockDim = dim3(256, 1, 1);
  config.stream = stream;
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 1;
  attribute.val.clusterDim.y = 2;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, cluster_gemm, A, B, C, static_cast<int>(M), static_cast<int>(N),
                     static_cast<int>(K));
}
