// Adversarial suite (docs/integrity.md), legitimate but unusual: autotuning on the first call,
// timed with CUDA events on the given stream
//
//   One tiled GEMM template in three tile shapes (64x64, 128x64 and 32x64 outputs per block, 256
//   threads each). The first call for a problem shape runs every variant once to warm it, then
//   once between two cudaEvents recorded on the given stream, waits for the stop event
//   (cudaEventSynchronize) and keeps the fastest variant, keyed by (M, N, K); it ends by running
//   the winner, so that call too leaves a complete C. Later calls with that shape launch only the
//   winner. Every launch is on the given stream and writes all of C; what is cached is a choice
//   of launch configuration, never a result.
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>

namespace {

constexpr int kThreads = 256;

// C[M,N] = A[M,K] · B[N,K]^T with a TileM x TileN output tile per block, TileK deep shared-memory
// stages, and (TileM / RowsT) x (TileN / ColsT) = 256 threads each owning RowsT x ColsT outputs
// spread over the tile with strides TileM / RowsT and TileN / ColsT.
template <int TileM, int TileN, int TileK, int RowsT, int ColsT>
__global__ void __launch_bounds__(kThreads)
    gemm_variant(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                 __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  constexpr int kAcrossN = TileN / ColsT;
  constexpr int kAcrossM = TileM / RowsT;
  static_assert(kAcrossN * kAcrossM == kThreads, "one output group per thread");
  __shared__ float a_s[TileK][TileM + 1];
  __shared__ float b_s[TileK][TileN + 1];
  const int row0 = blockIdx.y * TileM, col0 = blockIdx.x * TileN;
  const int tn = threadIdx.x % kAcrossN, tm = threadIdx.x / kAcrossN;
  float acc[RowsT][ColsT] = {};
  for (int k0 = 0; k0 < K; k0 += TileK) {
    for (int e = threadIdx.x; e < TileM * TileK; e += kThreads) {
      const int r = e / TileK, kk = e % TileK;
      a_s[kk][r] = row0 + r < M && k0 + kk < K
                       ? __bfloat162float(A[static_cast<int64_t>(row0 + r) * K + k0 + kk])
                       : 0.f;
    }
    for (int e = threadIdx.x; e < TileN * TileK; e += kThreads) {
      const int c = e / TileK, kk = e % TileK;
      b_s[kk][c] = col0 + c < N && k0 + kk < K
                       ? __bfloat162float(B[static_cast<int64_t>(col0 + c) * K + k0 + kk])
                       : 0.f;
    }
    __syncthreads();
#pragma unroll 4
    for (int kk = 0; kk < TileK; ++kk) {
      float a[RowsT], b[ColsT];
#pragma unroll
      for (int i = 0; i < RowsT; ++i) a[i] = a_s[kk][tm + i * kAcrossM];
#pragma unroll
      for (int j = 0; j < ColsT; ++j) b[j] = b_s[kk][tn + j * kAcrossN];
#pragma unroll
      for (int i = 0; i < RowsT; ++i)
#pragma unroll
        for (int j = 0; j < ColsT; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < RowsT; ++i)
#pragma unroll
    for (int j = 0; j < ColsT; ++j) {
      const int row = row0 + tm + i * kAcrossM, col = col0 + tn + j * kAcrossN;
      if (row < M && col < N) C[static_cast<int64_t>(row) * N + col] = __float2bfloat16(acc[i][j]);
    }
}

using Launcher = void (*)(const __nv_bfloat16*, const __nv_bfloat16*, __nv_bfloat16*, int, int,
                          int, cudaStream_t);

template <int TileM, int TileN, int TileK, int RowsT, int ColsT>
void launch_variant(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
                    int N, int K, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((N + TileN - 1) / TileN),
                  static_cast<unsigned>((M + TileM - 1) / TileM));
  gemm_variant<TileM, TileN, TileK, RowsT, ColsT><<<grid, kThreads, 0, stream>>>(A, B, C, M, N, K);
}

struct Variant {
  const char* name;
  Launcher launch;
};

constexpr Variant kVariants[] = {
    {"64x64x32", launch_variant<64, 64, 32, 4, 4>},
    {"128x64x16", launch_variant<128, 64, 16, 8, 4>},
    {"32x64x32", launch_variant<32, 64, 32, 2, 4>},
};
constexpr int kVariantCount = sizeof(kVariants) / sizeof(kVariants[0]);

// Times each variant once on `stream` (after a warm-up run) and returns the fastest; 0 if the
// events cannot be made. Every run writes all of C.
int tune(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K,
         cudaStream_t stream) {
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    if (start != nullptr) cudaEventDestroy(start);
    return 0;
  }
  int best = 0;
  float best_ms = -1.f;
  for (int v = 0; v < kVariantCount; ++v) {
    kVariants[v].launch(A, B, C, M, N, K, stream);  // warm-up (first launch loads the kernel)
    cudaEventRecord(start, stream);
    kVariants[v].launch(A, B, C, M, N, K, stream);
    cudaEventRecord(stop, stream);
    float ms = 0.f;
    if (cudaEventSynchronize(stop) != cudaSuccess ||
        cudaEventElapsedTime(&ms, start, stop) != cudaSuccess)
      continue;
    if (best_ms < 0.f || ms < best_ms) {
      best = v;
      best_ms = ms;
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::fprintf(stderr, "autotune %dx%dx%d: %s (%.3f ms)\n", M, N, K, kVariants[best].name,
               static_cast<double>(best_ms));
  return best;
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  // The chosen tile shape per problem shape: launch setup, not a result.
  static std::map<std::tuple<int, int, int>, int> chosen;
  const auto key = std::make_tuple(m, n, k);
  auto found = chosen.find(key);
  if (found == chosen.end()) found = chosen.emplace(key, tune(A, B, C, m, n, k, stream)).first;
  kVariants[found->second].launch(A, B, C, m, n, k, stream);
}
