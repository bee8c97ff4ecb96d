// expect: kernel.cu:20 TIMEOUT (cuda-gdb on a user-triggered core dump)
// Debug-stage failure kernel for gemm_n7168_k5120: an mbarrier initialised for 128 arrivals that
// only one warp (32 threads) arrives on, so phase 0 never completes and every thread spins in
// try_wait (PTX ISA 9.7.13.15: the phase completes when the pending count reaches zero). The
// report must point at the wait loop, where cuda-gdb finds the hung warps.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__device__ __forceinline__ void arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void wait_phase(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n" : "=r"(done) : "r"(bar), "r"(parity) : "memory");  // FAULT
  }
}

__global__ void __launch_bounds__(128) wait_kernel(__nv_bfloat16* C) {
  __shared__ alignas(8) uint64_t bar_storage;
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(&bar_storage));
  if (threadIdx.x == 0)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 128;\n" ::"r"(bar) : "memory");
  __syncthreads();
  if (threadIdx.x < 32) arrive(bar);  // three warps never arrive
  wait_phase(bar, 0);
  C[threadIdx.x] = __float2bfloat16(1.f);
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)A, (void)B, (void)M, (void)N, (void)K;
  wait_kernel<<<1, 128, 0, stream>>>(C);
}
