// expect: kernel.cu:22 MEMORY_ERROR (compute-sanitizer: Invalid __local__ write)
// Debug-stage failure kernel for gemm_n7168_k5120: a per-thread accumulator array indexed at
// run time, so ptxas places it in local memory (a 256 B stack frame in the compile feedback,
// where spills would go too), and an index computed from the column overruns it. The report
// must point at the local store.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kAccumulators = 64;

__global__ void __launch_bounds__(256) row_sums(const __nv_bfloat16* A, __nv_bfloat16* C,
                                                int64_t M, int64_t K) {
  float partial[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) partial[i] = 0.f;
  const int64_t row = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (row >= M) return;
  // Bucket by column instead of column % kAccumulators: up to K buckets.
  for (int64_t k = 0; k < K; k += 97) partial[k] += __bfloat162float(A[row * K + k]);  // FAULT
  float total = 0.f;
  for (int i = 0; i < kAccumulators; ++i) total += partial[i];
  C[row] = __float2bfloat16(total);
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)B, (void)N;
  row_sums<<<static_cast<unsigned>((M + 255) / 256), 256, 0, stream>>>(A, C, M, K);
}
