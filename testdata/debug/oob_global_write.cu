// expect: kernel.cu:17 MEMORY_ERROR (compute-sanitizer: Invalid __global__ write)
// Debug-stage failure kernel for gemm_n7168_k5120 (tests/debug, scripts/debug_goldens.sh): a
// fill kernel whose last block writes one row past the end of C. The report must point at the
// store (the line marked FAULT).
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void __launch_bounds__(256) fill_rows(__nv_bfloat16* C, int64_t M, int64_t N) {
  const int64_t row = blockIdx.x;
  // Off by one row: the grid has M + 1 blocks.
  for (int64_t col = threadIdx.x; col < N; col += blockDim.x) {
    const int64_t index = row * N + col;
    C[index] = __float2bfloat16(0.f);  // FAULT
  }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)A, (void)B, (void)K;
  fill_rows<<<static_cast<unsigned>(M + 64), 256, 0, stream>>>(C, M, N);
}
