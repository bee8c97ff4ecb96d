// Test kernel (PTXBench compile tests): two kernels in one file, so that target-instruction
// families are attributed to the kernel that holds them.
//   wgmma_kernel: one warpgroup (128 threads) issues one wgmma.mma_async m64n8k16 bf16 -> f32
//                 (PTX ISA 9.7.15) from shared-memory descriptors; SASS HGMMA.
//   tma_load_kernel: one thread issues a 2D cp.async.bulk.tensor load (PTX ISA 9.7.9.25) into
//                    shared memory, completed on an mbarrier; SASS UTMALDG.
// Not meant to compute anything useful: tiny, so the test suite's nvcc time stays short.
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -O3 -c hopper_two_kernels.cu
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdint>

__global__ void wgmma_kernel(float* out, uint64_t desc_a, uint64_t desc_b) {
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "l"(desc_a), "l"(desc_b), "r"(1));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x * 4 + 0] = d0;
  out[threadIdx.x * 4 + 1] = d1;
  out[threadIdx.x * 4 + 2] = d2;
  out[threadIdx.x * 4 + 3] = d3;
}

__global__ void tma_load_kernel(const __grid_constant__ CUtensorMap tensor_map, float* out) {
  __shared__ alignas(128) float tile[16 * 16];
  __shared__ alignas(8) uint64_t barrier;
  const uint32_t tile_addr = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  const uint32_t bar_addr = static_cast<uint32_t>(__cvta_generic_to_shared(&barrier));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(bar_addr));
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar_addr),
                 "r"(static_cast<uint32_t>(sizeof(tile))));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(tile_addr),
        "l"(&tensor_map), "r"(0), "r"(0), "r"(bar_addr)
        : "memory");
    asm volatile(
        "{\n.reg .pred done;\nwait:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
        "@!done bra wait;\n}\n" ::"r"(bar_addr));
  }
  __syncthreads();
  out[threadIdx.x] = tile[threadIdx.x % 256];
}
