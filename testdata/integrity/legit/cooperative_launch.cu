// Adversarial suite (docs/integrity.md), legitimate but unusual: a cooperative launch with a
// grid-wide barrier
//
//   One kernel, launched with cudaLaunchCooperativeKernel on the given stream, does a split-K GEMM
//   in two phases separated by cooperative_groups::this_grid().sync(): first every block walks
//   (64x64 tile, K quarter) work items and stores their fp32 partial products to a scratch buffer
//   (cudaMalloc once, grown when a larger problem comes), then, after the grid-wide barrier, the
//   same blocks sum the four quarters of every element in a fixed order and write bf16 C. The grid
//   is sized to what can be co-resident (SM count x cudaOccupancyMaxActiveBlocksPerMultiprocessor,
//   queried once and cached), as a cooperative launch requires.
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace {

namespace cg = cooperative_groups;

constexpr int kBlockRows = 64;                                      // output rows per tile
constexpr int kBlockCols = 64;                                      // output columns per tile
constexpr int kDepth = 32;                                          // k per shared-memory stage
constexpr int kRowsPerThread = 4;                                   // accumulator rows
constexpr int kColsPerThread = 4;                                   // accumulator columns
constexpr int kColThreads = kBlockCols / kColsPerThread;            // 16
constexpr int kRowThreads = kBlockRows / kRowsPerThread;            // 16
constexpr int kThreads = kColThreads * kRowThreads;                 // 256
constexpr int kQuarters = 4;                                        // K slices

// Thread t of the block accumulates rows (t / kColThreads) + i * kRowThreads and columns
// (t % kColThreads) + j * kColThreads of the tile at (row0, col0): interleaved ownership keeps the
// shared-memory reads conflict-free and the C stores coalesced. k runs over [k_lo, k_hi).
__device__ void accumulate(const __nv_bfloat16* A, const __nv_bfloat16* B, int M, int N, int K,
                           int row0, int col0, int k_lo, int k_hi, float* a_s, float* b_s,
                           float (&acc)[kRowsPerThread][kColsPerThread]) {
  const int tc = threadIdx.x % kColThreads, tr = threadIdx.x / kColThreads;
  for (int k0 = k_lo; k0 < k_hi; k0 += kDepth) {
    // Stage both operands k-major ([kDepth][tile + 1]), converted to fp32 once.
    for (int e = threadIdx.x; e < kBlockRows * kDepth; e += kThreads) {
      const int r = e / kDepth, kk = e % kDepth;
      const int row = row0 + r, k = k0 + kk;
      a_s[kk * (kBlockRows + 1) + r] =
          row < M && k < k_hi ? __bfloat162float(A[static_cast<int64_t>(row) * K + k]) : 0.f;
    }
    for (int e = threadIdx.x; e < kBlockCols * kDepth; e += kThreads) {
      const int c = e / kDepth, kk = e % kDepth;
      const int col = col0 + c, k = k0 + kk;
      b_s[kk * (kBlockCols + 1) + c] =
          col < N && k < k_hi ? __bfloat162float(B[static_cast<int64_t>(col) * K + k]) : 0.f;
    }
    __syncthreads();
#pragma unroll 4
    for (int kk = 0; kk < kDepth; ++kk) {
      float a[kRowsPerThread], b[kColsPerThread];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) a[i] = a_s[kk * (kBlockRows + 1) + tr + i * kRowThreads];
#pragma unroll
      for (int j = 0; j < kColsPerThread; ++j) b[j] = b_s[kk * (kBlockCols + 1) + tc + j * kColThreads];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i)
#pragma unroll
        for (int j = 0; j < kColsPerThread; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
}

// partials: kQuarters planes of M x N fp32. Must be launched cooperatively (grid.sync()).
__global__ void __launch_bounds__(kThreads)
    cooperative_split_k(const __nv_bfloat16* A, const __nv_bfloat16* B, float* partials,
                        __nv_bfloat16* C, int M, int N, int K, int k_quarter) {
  __shared__ float a_s[kDepth * (kBlockRows + 1)];
  __shared__ float b_s[kDepth * (kBlockCols + 1)];
  const int tiles_n = (N + kBlockCols - 1) / kBlockCols;
  const int tiles_m = (M + kBlockRows - 1) / kBlockRows;
  const int items = tiles_m * tiles_n * kQuarters;
  const int64_t plane = static_cast<int64_t>(M) * N;
  const int tc = threadIdx.x % kColThreads, tr = threadIdx.x / kColThreads;

  // Phase 1: partial products, any number of work items per block.
  for (int item = blockIdx.x; item < items; item += gridDim.x) {
    const int quarter = item % kQuarters, tile = item / kQuarters;
    const int row0 = (tile / tiles_n) * kBlockRows, col0 = (tile % tiles_n) * kBlockCols;
    const int k_lo = quarter * k_quarter, k_hi = min(K, k_lo + k_quarter);
    float acc[kRowsPerThread][kColsPerThread] = {};
    accumulate(A, B, M, N, K, row0, col0, k_lo, k_hi, a_s, b_s, acc);
    float* out = partials + quarter * plane;
    for (int i = 0; i < kRowsPerThread; ++i)
      for (int j = 0; j < kColsPerThread; ++j) {
        const int row = row0 + tr + i * kRowThreads, col = col0 + tc + j * kColThreads;
        if (row < M && col < N) out[static_cast<int64_t>(row) * N + col] = acc[i][j];
      }
  }

  // Every quarter of every tile is stored (and visible) before any block reads it back.
  cg::this_grid().sync();

  // Phase 2: sum the quarters in a fixed order, grid-stride over C.
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t at = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; at < plane;
       at += stride) {
    float sum = 0.f;
#pragma unroll
    for (int q = 0; q < kQuarters; ++q) sum += partials[q * plane + at];
    C[at] = __float2bfloat16(sum);
  }
}

// Launch setup that does not depend on the inputs: queried once per process.
struct CoResidency {
  bool supported = false;
  int sms = 0;
  int blocks_per_sm = 0;
};

const CoResidency& co_residency() {
  static const CoResidency limits = [] {
    CoResidency r;
    int device = 0, cooperative = 0;
    if (cudaGetDevice(&device) != cudaSuccess) return r;
    cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device);
    cudaDeviceGetAttribute(&r.sms, cudaDevAttrMultiProcessorCount, device);
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, cooperative_split_k,
                                                      kThreads, 0) != cudaSuccess)
      r.blocks_per_sm = 0;
    r.supported = cooperative != 0 && r.sms > 0 && r.blocks_per_sm > 0;
    return r;
  }();
  return limits;
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  const CoResidency& limits = co_residency();
  if (!limits.supported) {
    std::fprintf(stderr, "cooperative launch not available (sms %d, blocks/SM %d)\n", limits.sms,
                 limits.blocks_per_sm);
    return;
  }
  static float* partials = nullptr;
  static size_t partials_bytes = 0;
  const size_t bytes = static_cast<size_t>(kQuarters) * static_cast<size_t>(M * N) * sizeof(float);
  if (bytes > partials_bytes) {
    cudaFree(partials);
    partials = nullptr;
    partials_bytes = 0;
    if (cudaMalloc(&partials, bytes) != cudaSuccess) {
      std::fprintf(stderr, "cudaMalloc of %zu bytes of scratch failed\n", bytes);
      return;
    }
    partials_bytes = bytes;
  }
  int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int tiles = ((m + kBlockRows - 1) / kBlockRows) * ((n + kBlockCols - 1) / kBlockCols);
  // Quarters rounded up to whole stages; the last one may be shorter (or empty for tiny K).
  int k_quarter = ((k + kQuarters - 1) / kQuarters + kDepth - 1) / kDepth * kDepth;
  const int grid = std::max(1, std::min(tiles * kQuarters, limits.sms * limits.blocks_per_sm));
  void* args[] = {&A, &B, &partials, &C, &m, &n, &k, &k_quarter};
  const cudaError_t err = cudaLaunchCooperativeKernel(
      reinterpret_cast<const void*>(cooperative_split_k), dim3(grid), dim3(kThreads), args, 0,
      stream);
  if (err != cudaSuccess)
    std::fprintf(stderr, "cudaLaunchCooperativeKernel failed: %s\n", cudaGetErrorString(err));
}
