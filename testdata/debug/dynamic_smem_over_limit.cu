// expect: kernel.cu:30 RUNTIME_ERROR (the launch, inferred)
// Debug-stage failure kernel for gemm_n7168_k5120: 200 KiB of dynamic shared memory without
// cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize): above the default 48 KiB
// the launch fails (cudaErrorInvalidValue; H200: up to 227 KiB once opted in). The report must
// point at the launch.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kStageBytes = 200 * 1024;

__global__ void __launch_bounds__(256) staged_copy(const __nv_bfloat16* A, __nv_bfloat16* C,
                                                   int64_t elements) {
  extern __shared__ __nv_bfloat16 stage[];
  const int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if (i < elements) stage[threadIdx.x] = A[i];
  __syncthreads();
  if (i < elements) C[i] = stage[threadIdx.x];
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)B, (void)K;
  const int64_t elements = M * N;
  staged_copy<<<static_cast<unsigned>((elements + 255) / 256), 256, kStageBytes, stream>>>(A, C, elements);  // FAULT
}
