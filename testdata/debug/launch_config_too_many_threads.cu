// expect: kernel.cu:25 RUNTIME_ERROR (the launch, inferred: the error surfaces at the sync)
// Debug-stage failure kernel for gemm_n7168_k5120: 2048 threads per block, twice the limit, so
// the launch fails (cudaErrorInvalidValue on CUDA 13, H200); `run` never checks, and the error
// surfaces at the runner's synchronization. No kernel ran, so neither compute-sanitizer nor
// cuda-gdb has a device line: the report must point at the launch.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void zero_rows(__nv_bfloat16* C, int64_t N) {
  for (int64_t col = threadIdx.x; col < N; col += blockDim.x)
    C[blockIdx.x * N + col] = __float2bfloat16(0.f);
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)A, (void)B, (void)K;
  // "More threads, fewer blocks": over the 1024-thread limit of a block.
  const unsigned threads = 2048;
  zero_rows<<<static_cast<unsigned>(M), threads, 0, stream>>>(C, N);  // FAULT
}
