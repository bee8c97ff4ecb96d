// expect: kernel.cu:16 MEMORY_ERROR (compute-sanitizer: Invalid __global__ read)
// Debug-stage failure kernel for gemm_n7168_k5120: `run` passes a null operand to the kernel
// (a forgotten device pointer); the first load of A faults. The report must point at the load.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void __launch_bounds__(256) first_column(const __nv_bfloat16* A,
                                                    __nv_bfloat16* C, int64_t M, int64_t N,
                                                    int64_t K) {
  const int64_t row = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (row >= M) return;
  const float a = __bfloat162float(A[row * K]);  // FAULT
  C[row * N] = __float2bfloat16(a);
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)A, (void)B;
  const __nv_bfloat16* operand = nullptr;  // should have been A
  first_column<<<static_cast<unsigned>((M + 255) / 256), 256, 0, stream>>>(operand, C, M, N, K);
}
