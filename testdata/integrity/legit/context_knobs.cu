// Adversarial suite (docs/integrity.md), legitimate but unusual: context-wide and per-function
// knobs set once per process
//
//   A 64x64-tile GEMM that stages 128-deep slices of A and B as fp32 in 65 KiB of dynamic shared
//   memory, more than the 48 KiB a launch gets by default. The first call sets, once per process:
//   the device cache preference (cudaDeviceSetCacheConfig) and the kernel's own
//   (cudaFuncSetCacheConfig), the kernel's maximum dynamic shared memory and its preferred
//   shared-memory carveout (cudaFuncSetAttribute), and a larger per-thread stack
//   (cudaDeviceSetLimit(cudaLimitStackSize), read back first with cudaDeviceGetLimit). These are
//   launch setup, not results; every call then runs the kernel on the given stream.
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace {

constexpr int kEdge = 64;                 // output tile edge
constexpr int kDeep = 128;                // k per shared-memory stage
constexpr int kSpan = 4;                  // 4x4 outputs per thread
constexpr int kLanes = kEdge / kSpan;     // 16 threads along each tile edge
constexpr int kThreads = kLanes * kLanes;  // 256
constexpr int kPitch = kEdge + 1;
constexpr int kSmemBytes = 2 * kDeep * kPitch * static_cast<int>(sizeof(float));  // 66,560 B
static_assert(kSmemBytes > 48 * 1024, "needs the opt-in dynamic shared memory attribute");
constexpr size_t kStackBytes = 2048;

__global__ void __launch_bounds__(kThreads)
    gemm_deep_stage(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                    __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  extern __shared__ float staged[];
  float* a_s = staged;                  // [kDeep][kPitch], k-major
  float* b_s = staged + kDeep * kPitch;  // [kDeep][kPitch], k-major
  const int row0 = blockIdx.y * kEdge, col0 = blockIdx.x * kEdge;
  const int lc = threadIdx.x % kLanes, lr = threadIdx.x / kLanes;
  float acc[kSpan][kSpan] = {};
  for (int k0 = 0; k0 < K; k0 += kDeep) {
    for (int e = threadIdx.x; e < kEdge * kDeep; e += kThreads) {
      const int t = e / kDeep, kk = e % kDeep, k = k0 + kk;
      a_s[kk * kPitch + t] = row0 + t < M && k < K
                                 ? __bfloat162float(A[static_cast<int64_t>(row0 + t) * K + k])
                                 : 0.f;
      b_s[kk * kPitch + t] = col0 + t < N && k < K
                                 ? __bfloat162float(B[static_cast<int64_t>(col0 + t) * K + k])
                                 : 0.f;
    }
    __syncthreads();
#pragma unroll 4
    for (int kk = 0; kk < kDeep; ++kk) {
      float a[kSpan], b[kSpan];
#pragma unroll
      for (int i = 0; i < kSpan; ++i) a[i] = a_s[kk * kPitch + lr + i * kLanes];
#pragma unroll
      for (int j = 0; j < kSpan; ++j) b[j] = b_s[kk * kPitch + lc + j * kLanes];
#pragma unroll
      for (int i = 0; i < kSpan; ++i)
#pragma unroll
        for (int j = 0; j < kSpan; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kSpan; ++i)
#pragma unroll
    for (int j = 0; j < kSpan; ++j) {
      const int row = row0 + lr + i * kLanes, col = col0 + lc + j * kLanes;
      if (row < M && col < N) C[static_cast<int64_t>(row) * N + col] = __float2bfloat16(acc[i][j]);
    }
}

void report(const char* what, cudaError_t err) {
  if (err != cudaSuccess) std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
}

// The knobs, once per process. Only the dynamic shared memory limit is needed for the launch to
// work; the others are preferences, reported if refused and otherwise ignored.
bool set_knobs_once() {
  static const bool ready = [] {
    report("cudaDeviceSetCacheConfig", cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    report("cudaFuncSetCacheConfig",
           cudaFuncSetCacheConfig(gemm_deep_stage, cudaFuncCachePreferShared));
    report("cudaFuncSetAttribute(carveout)",
           cudaFuncSetAttribute(gemm_deep_stage, cudaFuncAttributePreferredSharedMemoryCarveout,
                                cudaSharedmemCarveoutMaxShared));
    size_t stack = 0;
    if (cudaDeviceGetLimit(&stack, cudaLimitStackSize) == cudaSuccess && stack < kStackBytes)
      report("cudaDeviceSetLimit(stack)", cudaDeviceSetLimit(cudaLimitStackSize, kStackBytes));
    const cudaError_t smem = cudaFuncSetAttribute(
        gemm_deep_stage, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    report("cudaFuncSetAttribute(max dynamic shared memory)", smem);
    return smem == cudaSuccess;
  }();
  return ready;
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  if (!set_knobs_once()) return;
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const dim3 grid(static_cast<unsigned>((n + kEdge - 1) / kEdge),
                  static_cast<unsigned>((m + kEdge - 1) / kEdge));
  gemm_deep_stage<<<grid, kThreads, kSmemBytes, stream>>>(A, B, C, m, n, k);
}
