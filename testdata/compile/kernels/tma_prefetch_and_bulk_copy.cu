// Test kernel (PTXBench compile tests): bulk-async instructions that are NOT TMA loads/stores.
//   prefetch_kernel: cp.async.bulk.prefetch.tensor (PTX ISA 9.7.9.26) -> SASS UTMAPF (prefetch to
//                    L2, no data moved to shared memory).
//   bulk_copy_kernel: non-tensor cp.async.bulk (PTX ISA 9.7.9.24) -> SASS UBLKCP.
// design.md §3.6: neither counts as the TMA family.
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -O3 -c tma_prefetch_and_bulk_copy.cu
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>

__global__ void prefetch_kernel(const __grid_constant__ CUtensorMap tensor_map) {
  if (threadIdx.x == 0)
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global [%0, {%1, %2}];\n" ::"l"(&tensor_map),
                 "r"(0), "r"(0)
                 : "memory");
}

__global__ void bulk_copy_kernel(const float* src, float* out) {
  __shared__ alignas(128) float buffer[256];
  __shared__ alignas(8) uint64_t barrier;
  const uint32_t buffer_addr = static_cast<uint32_t>(__cvta_generic_to_shared(buffer));
  const uint32_t bar_addr = static_cast<uint32_t>(__cvta_generic_to_shared(&barrier));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar_addr));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar_addr),
                 "r"(static_cast<uint32_t>(sizeof(buffer))));
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
            buffer_addr),
        "l"(src), "r"(static_cast<uint32_t>(sizeof(buffer))), "r"(bar_addr)
        : "memory");
    asm volatile(
        "{\n.reg .pred done;\nwait:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
        "@!done bra wait;\n}\n" ::"r"(bar_addr));
  }
  __syncthreads();
  out[threadIdx.x] = buffer[threadIdx.x % 256];
}
