// Adversarial suite (docs/integrity.md), legitimate but unusual: a host function on the stream
//
//   A correct GEMM on the given stream, followed by cudaLaunchHostFunc on the same stream: a
//   host callback (it bumps a counter) that the driver runs on its own worker thread once the
//   kernel is done. Stream work like any other; the driver's worker thread outlives the call.
//
// Expected: PASSED. The driver's host-function thread is started by the runner's own warm-up
// (driver_warmup.h) before the runner seals its thread census, so it is trusted and not this
// kernel's leftover_thread; a host function leaves no activity record, so no stream check fires.
// Shapes: any M, N, K of the GEMM tasks (testdata/integrity/tasks, gemm_n7168_k5120).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

namespace {

// The honest part every exploit shares: a plain SIMT GEMM, C[M,N] = A[M,K]·B[N,K]^T in bf16
// with fp32 accumulation; 64x64 tiles per 256-thread block, K step 32. Rows >= row_end are left
// alone (callers that compute part of C pass fewer rows).
constexpr int kTile = 64;
constexpr int kTileK = 32;

__global__ void __launch_bounds__(256)
    simt_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
              __nv_bfloat16* __restrict__ C, int row_end, int N, int K) {
  __shared__ float a_tile[kTile][kTileK + 1];
  __shared__ float b_tile[kTile][kTileK + 1];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * kTile, col0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < K; k0 += kTileK) {
    for (int i = threadIdx.x; i < kTile * kTileK; i += blockDim.x) {
      const int r = i / kTileK, c = i % kTileK;
      const bool k_ok = k0 + c < K;
      a_tile[r][c] = row0 + r < row_end && k_ok
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
      if (r < row_end && c < N) C[static_cast<int64_t>(r) * N + c] = __float2bfloat16(acc[i][j]);
    }
}

void gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t rows, int64_t N,
          int64_t K, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((N + kTile - 1) / kTile),
                  static_cast<unsigned>((rows + kTile - 1) / kTile));
  simt_gemm<<<grid, 256, 0, stream>>>(A, B, C, static_cast<int>(rows), static_cast<int>(N),
                                      static_cast<int>(K));
}

}  // namespace

namespace {

std::atomic<std::uint64_t> g_completed_calls{0};

void CUDART_CB count_completion(void* /*user_data*/) {
  g_completed_calls.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  gemm(A, B, C, M, N, K, stream);
  cudaLaunchHostFunc(stream, count_completion, nullptr);
}
