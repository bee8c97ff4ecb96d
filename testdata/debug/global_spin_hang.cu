// expect: kernel.cu:17 TIMEOUT (cuda-gdb on a user-triggered core dump)
// Debug-stage failure kernel for gemm_n7168_k5120: a grid-wide "last block done" handshake
// where block 0 waits for a counter that the other blocks never increment (their increment sits
// behind a condition that is never true), so block 0 spins on a global flag forever. The report
// must point at the spin loop.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__device__ unsigned int g_blocks_done = 0;

__global__ void __launch_bounds__(128) handshake(__nv_bfloat16* C, unsigned int blocks) {
  if (blockIdx.x == 0) {
    while (atomicAdd(&g_blocks_done, 0) < blocks - 1) __nanosleep(1000);  // FAULT
  } else if (threadIdx.x == 0 && blockIdx.x > blocks) {  // never true: should be `< blocks`
    atomicAdd(&g_blocks_done, 1);
  }
  C[blockIdx.x * 128 + threadIdx.x] = __float2bfloat16(1.f);
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)A, (void)B, (void)M, (void)N, (void)K;
  handshake<<<64, 128, 0, stream>>>(C, 64);
}
