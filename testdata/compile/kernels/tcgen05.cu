// Test kernel (PTXBench compile tests, Blackwell sm_100a): allocates 32 columns of tensor memory
// (PTX ISA 9.7.16.7.1 tcgen05.alloc), loads one 32x32b slice per warp with tcgen05.ld (SASS LDTM),
// and frees it again. SASS: UTC* for alloc/dealloc/relinquish, LDTM for the load.
// Build: nvcc -gencode arch=compute_100a,code=sm_100a -O3 -c tcgen05.cu
#include <cuda_runtime.h>
#include <cstdint>

__global__ void tmem_kernel(uint32_t* out) {
  __shared__ uint32_t tmem_base;
  const uint32_t slot = static_cast<uint32_t>(__cvta_generic_to_shared(&tmem_base));
  if (threadIdx.x < 32) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 32;\n" ::"r"(slot));
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;\n");
  }
  __syncthreads();
  const uint32_t taddr = tmem_base;
  uint32_t value;
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {%0}, [%1];\n" : "=r"(value) : "r"(taddr));
  asm volatile("tcgen05.wait::ld.sync.aligned;\n" ::: "memory");
  out[threadIdx.x] = value;
  __syncthreads();
  if (threadIdx.x < 32)
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 32;\n" ::"r"(taddr));
}
