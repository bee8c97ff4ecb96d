// Adversarial suite (docs/integrity.md), legitimate but unusual: the kernel launched through the
// driver API (cuLaunchKernel from cudaGetDriverEntryPointByVersion)
//
//   A tiled GEMM (128x64 output tiles, 8x4 fp32 accumulators per thread) that is never launched
//   with <<<>>>: the first call looks up cuLaunchKernel with cudaGetDriverEntryPointByVersion (the
//   non-deprecated form of cudaGetDriverEntryPoint; nothing of libcuda is imported) and the
//   kernel's CUfunction with cudaGetFuncBySymbol, both cached; every call then launches that
//   CUfunction with cuLaunchKernel on the given stream. The code is the analysed cubin's own
//   kernel, reached through the driver: no module is loaded.
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace {

constexpr int kTileM = 128;
constexpr int kTileN = 64;
constexpr int kStep = 16;                        // k per shared-memory stage
constexpr int kPerThreadM = 8;
constexpr int kPerThreadN = 4;
constexpr int kThreadsN = kTileN / kPerThreadN;  // 16
constexpr int kThreadsM = kTileM / kPerThreadM;  // 16
constexpr int kThreads = kThreadsN * kThreadsM;  // 256
constexpr int kPitchA = kTileM + 1;              // k-major staging, padded against conflicts
constexpr int kPitchB = kTileN + 1;

// C[M,N] = A[M,K] · B[N,K]^T: one 128x64 tile per block; thread t owns rows (t / kThreadsN) +
// i * kThreadsM and columns (t % kThreadsN) + j * kThreadsN of it.
__global__ void __launch_bounds__(kThreads)
    gemm_driver_launched(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                         __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ float a_s[kStep * kPitchA];
  __shared__ float b_s[kStep * kPitchB];
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const int tn = threadIdx.x % kThreadsN, tm = threadIdx.x / kThreadsN;
  float acc[kPerThreadM][kPerThreadN] = {};
  for (int k0 = 0; k0 < K; k0 += kStep) {
    for (int e = threadIdx.x; e < kTileM * kStep; e += kThreads) {
      const int r = e / kStep, kk = e % kStep;
      const bool ok = row0 + r < M && k0 + kk < K;
      a_s[kk * kPitchA + r] =
          ok ? __bfloat162float(A[static_cast<int64_t>(row0 + r) * K + k0 + kk]) : 0.f;
    }
    for (int e = threadIdx.x; e < kTileN * kStep; e += kThreads) {
      const int c = e / kStep, kk = e % kStep;
      const bool ok = col0 + c < N && k0 + kk < K;
      b_s[kk * kPitchB + c] =
          ok ? __bfloat162float(B[static_cast<int64_t>(col0 + c) * K + k0 + kk]) : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kStep; ++kk) {
      float a[kPerThreadM], b[kPerThreadN];
#pragma unroll
      for (int i = 0; i < kPerThreadM; ++i) a[i] = a_s[kk * kPitchA + tm + i * kThreadsM];
#pragma unroll
      for (int j = 0; j < kPerThreadN; ++j) b[j] = b_s[kk * kPitchB + tn + j * kThreadsN];
#pragma unroll
      for (int i = 0; i < kPerThreadM; ++i)
#pragma unroll
        for (int j = 0; j < kPerThreadN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kPerThreadM; ++i)
#pragma unroll
    for (int j = 0; j < kPerThreadN; ++j) {
      const int row = row0 + tm + i * kThreadsM, col = col0 + tn + j * kThreadsN;
      if (row < M && col < N) C[static_cast<int64_t>(row) * N + col] = __float2bfloat16(acc[i][j]);
    }
}

// What the launches need from the driver, looked up once per process.
struct DriverLaunch {
  PFN_cuLaunchKernel_v4000 launch = nullptr;
  CUfunction function = nullptr;
};

const DriverLaunch& driver_launch() {
  static const DriverLaunch found = [] {
    DriverLaunch d;
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault, &query);
    if (err == cudaSuccess && query == cudaDriverEntryPointSuccess && entry != nullptr)
      d.launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(entry);
    else
      std::fprintf(stderr, "cudaGetDriverEntryPointByVersion(cuLaunchKernel): %s (query %d)\n",
                   cudaGetErrorString(err), static_cast<int>(query));
    // cudaFunction_t and CUfunction are the same handle type (struct CUfunc_st*).
    cudaFunction_t function = nullptr;
    const cudaError_t lookup =
        cudaGetFuncBySymbol(&function, reinterpret_cast<const void*>(gemm_driver_launched));
    if (lookup == cudaSuccess)
      d.function = function;
    else
      std::fprintf(stderr, "cudaGetFuncBySymbol: %s\n", cudaGetErrorString(lookup));
    return d;
  }();
  return found;
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  const DriverLaunch& driver = driver_launch();
  if (driver.launch == nullptr || driver.function == nullptr) return;
  int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  // kernelParams: one pointer per kernel parameter, each to a value of the parameter's exact type.
  void* params[] = {&A, &B, &C, &m, &n, &k};
  const unsigned grid_x = static_cast<unsigned>((n + kTileN - 1) / kTileN);
  const unsigned grid_y = static_cast<unsigned>((m + kTileM - 1) / kTileM);
  const CUresult result = driver.launch(driver.function, grid_x, grid_y, 1, kThreads, 1, 1, 0,
                                        static_cast<CUstream>(stream), params, nullptr);
  if (result != CUDA_SUCCESS)
    std::fprintf(stderr, "cuLaunchKernel failed: CUresult %d\n", static_cast<int>(result));
}
