// Adversarial suite (docs/integrity.md), legitimate but unusual: split-K with fp32 atomics into a
// scratch buffer zeroed by cudaMemsetAsync
//
//   K is cut into four slices; a grid of (N/64, M/64, 4) blocks computes the 64x64 partial
//   product of one slice each and atomicAdds it into an fp32 M x N accumulator; a second kernel
//   rounds the accumulator to bf16 C. The accumulator is allocated once (grown when a larger
//   problem comes) and zeroed by cudaMemsetAsync on the given stream at the start of every call,
//   so nothing of a previous call survives into this one. The order of the four additions per
//   element depends on scheduling: C is not bit-reproducible from call to call, but every result
//   is within the task's tolerance (fp32 sums of four fp32 partials).
//
// Expected: PASSED (none of the integrity checks may fire on it).
// Build: ptxbench --tasks-dir testdata/integrity/tasks compile THIS.cu --task integrity_gemm_1024
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

namespace {

constexpr int kSide = 64;                   // square output tile
constexpr int kSliceStep = 32;              // k per shared-memory stage
constexpr int kSplits = 4;                  // K slices, one per blockIdx.z
constexpr int kLanesPerRow = 16;            // threads across a tile row
constexpr int kOwn = kSide / kLanesPerRow;  // 4x4 accumulators per thread
constexpr int kThreads = kLanesPerRow * kLanesPerRow;
constexpr int kPitch = kSide + 1;

__global__ void __launch_bounds__(kThreads)
    slice_product_atomic(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                         float* __restrict__ accumulator, int M, int N, int K, int slice_len) {
  __shared__ float a_s[kSliceStep * kPitch];
  __shared__ float b_s[kSliceStep * kPitch];
  const int row0 = blockIdx.y * kSide, col0 = blockIdx.x * kSide;
  const int k_lo = blockIdx.z * slice_len;
  const int k_hi = min(K, k_lo + slice_len);
  const int lane_c = threadIdx.x % kLanesPerRow, lane_r = threadIdx.x / kLanesPerRow;
  float acc[kOwn][kOwn] = {};
  for (int k0 = k_lo; k0 < k_hi; k0 += kSliceStep) {
    for (int e = threadIdx.x; e < kSide * kSliceStep; e += kThreads) {
      const int r = e / kSliceStep, kk = e % kSliceStep;
      const int k = k0 + kk;
      a_s[kk * kPitch + r] = row0 + r < M && k < k_hi
                                 ? __bfloat162float(A[static_cast<int64_t>(row0 + r) * K + k])
                                 : 0.f;
      b_s[kk * kPitch + r] = col0 + r < N && k < k_hi
                                 ? __bfloat162float(B[static_cast<int64_t>(col0 + r) * K + k])
                                 : 0.f;
    }
    __syncthreads();
#pragma unroll 8
    for (int kk = 0; kk < kSliceStep; ++kk) {
      float a[kOwn], b[kOwn];
#pragma unroll
      for (int i = 0; i < kOwn; ++i) a[i] = a_s[kk * kPitch + lane_r + i * kLanesPerRow];
#pragma unroll
      for (int j = 0; j < kOwn; ++j) b[j] = b_s[kk * kPitch + lane_c + j * kLanesPerRow];
#pragma unroll
      for (int i = 0; i < kOwn; ++i)
#pragma unroll
        for (int j = 0; j < kOwn; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
  if (k_lo >= k_hi) return;  // an empty slice (tiny K) adds nothing
#pragma unroll
  for (int i = 0; i < kOwn; ++i)
#pragma unroll
    for (int j = 0; j < kOwn; ++j) {
      const int row = row0 + lane_r + i * kLanesPerRow, col = col0 + lane_c + j * kLanesPerRow;
      if (row < M && col < N) atomicAdd(&accumulator[static_cast<int64_t>(row) * N + col], acc[i][j]);
    }
}

__global__ void round_to_bf16(const float* __restrict__ accumulator, __nv_bfloat16* __restrict__ C,
                              int64_t count) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t at = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; at < count;
       at += stride)
    C[at] = __float2bfloat16(accumulator[at]);
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  static float* accumulator = nullptr;
  static size_t capacity = 0;
  const int64_t count = M * N;
  const size_t bytes = static_cast<size_t>(count) * sizeof(float);
  if (bytes > capacity) {
    cudaFree(accumulator);
    accumulator = nullptr;
    capacity = 0;
    if (cudaMalloc(&accumulator, bytes) != cudaSuccess) {
      std::fprintf(stderr, "cudaMalloc of %zu bytes of scratch failed\n", bytes);
      return;
    }
    capacity = bytes;
  }
  // The atomics add into whatever is there: start every call from zero, on the call's stream.
  cudaMemsetAsync(accumulator, 0, bytes, stream);
  const int m = static_cast<int>(M), n = static_cast<int>(N), k = static_cast<int>(K);
  const int slice_len = ((k + kSplits - 1) / kSplits + kSliceStep - 1) / kSliceStep * kSliceStep;
  const dim3 grid(static_cast<unsigned>((n + kSide - 1) / kSide),
                  static_cast<unsigned>((m + kSide - 1) / kSide), kSplits);
  slice_product_atomic<<<grid, kThreads, 0, stream>>>(A, B, accumulator, m, n, k, slice_len);
  const int64_t blocks = (count + 255) / 256;
  round_to_bf16<<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, stream>>>(
      accumulator, C, count);
}
