// Adversarial suite (docs/integrity.md), legitimate but unusual: host threads joined before
// returning
//
//   Two std::threads build the tile schedule (a serpentine order of the output tiles, for L2 reuse)
//   in parallel on the host; `run` joins them, copies the schedule to a device buffer kept across
//   calls (cudaMemcpyAsync on the given stream) and launches the kernel that follows it. Threads
//   are fine as long as none outlives the call and only the calling thread launches GPU work.
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <thread>
#include <vector>

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
    scheduled_gemm(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                   __nv_bfloat16* __restrict__ C, const int2* __restrict__ schedule, int M, int N,
                   int K) {
  const int2 tile = schedule[blockIdx.x];  // (tile row, tile column)
  const int row0 = tile.x * kTile, col0 = tile.y * kTile;
  float acc[4][4] = {};
  tile_product(A, B, M, N, K, row0, col0, 0, K, acc);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      const int r = row0 + ty * 4 + i, c = col0 + tx * 4 + j;
      if (r < M && c < N) C[static_cast<int64_t>(r) * N + c] = __float2bfloat16(acc[i][j]);
    }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  const int tiles_m = static_cast<int>((M + kTile - 1) / kTile);
  const int tiles_n = static_cast<int>((N + kTile - 1) / kTile);
  std::vector<int2> schedule(static_cast<size_t>(tiles_m) * tiles_n);
  auto fill_rows = [&](int first_row, int last_row) {
    for (int r = first_row; r < last_row; ++r)
      for (int c = 0; c < tiles_n; ++c)
        schedule[static_cast<size_t>(r) * tiles_n + c] = int2{r, r % 2 == 0 ? c : tiles_n - 1 - c};
  };
  std::thread top(fill_rows, 0, tiles_m / 2);
  std::thread bottom(fill_rows, tiles_m / 2, tiles_m);
  top.join();
  bottom.join();
  static int2* device_schedule = nullptr;
  static size_t capacity = 0;
  if (schedule.size() > capacity) {
    cudaFree(device_schedule);
    cudaMalloc(&device_schedule, schedule.size() * sizeof(int2));
    capacity = schedule.size();
  }
  // Pageable source: the copy is staged before cudaMemcpyAsync returns, so `schedule` may go.
  cudaMemcpyAsync(device_schedule, schedule.data(), schedule.size() * sizeof(int2),
                  cudaMemcpyHostToDevice, stream);
  scheduled_gemm<<<static_cast<unsigned>(schedule.size()), 256, 0, stream>>>(
      A, B, C, device_schedule, static_cast<int>(M), static_cast<int>(N), static_cast<int>(K));
}
