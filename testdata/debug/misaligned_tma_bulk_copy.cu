// expect: kernel.cu:27 MEMORY_ERROR (a misaligned bulk copy: the TMA unit's 16-byte rule)
// Debug-stage failure kernel for gemm_n7168_k5120: cp.async.bulk (the TMA unit's 1-D copy)
// from a global address 8 bytes past a 16-byte boundary. PTX ISA 9.7.9.25: the global and
// shared addresses and the size must be multiples of 16 bytes; a misaligned operand raises a
// GPU exception. The report must point at the copy.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr uint32_t kBytes = 1024;

__global__ void __launch_bounds__(128) bulk_copy_kernel(const __nv_bfloat16* A,
                                                        __nv_bfloat16* C) {
  __shared__ alignas(128) __nv_bfloat16 tile[kBytes / 2];
  __shared__ alignas(8) uint64_t bar_storage;
  const uint32_t bar = static_cast<uint32_t>(__cvta_generic_to_shared(&bar_storage));
  const uint32_t dst = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
                 "r"(kBytes) : "memory");
    const __nv_bfloat16* source = A + 4;  // 8 bytes: not a multiple of 16
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst), "l"(source), "r"(kBytes), "r"(bar) : "memory");  // FAULT
  }
  __syncthreads();
  uint32_t done = 0;
  while (!done)
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done) : "r"(bar) : "memory");
  C[threadIdx.x] = tile[threadIdx.x];
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)B, (void)M, (void)N, (void)K;
  bulk_copy_kernel<<<1, 128, 0, stream>>>(A, C);
}
