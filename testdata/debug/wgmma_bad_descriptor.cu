// expect: kernel.cu:26 MEMORY_ERROR (wgmma reads shared memory outside the CTA's window)
// Debug-stage failure kernel for gemm_n7168_k5120: one m64n8k16 wgmma whose A descriptor holds
// the start address in bytes instead of bytes >> 4 (PTX ISA 9.7.15.5.1: bits 0-13 are the
// address divided by 16), so it points 16x too far, past the block's shared memory. The report
// must point at the wgmma.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void __launch_bounds__(128) wgmma_kernel(float* sink) {
  __shared__ alignas(128) __nv_bfloat16 tile[64 * 16 + 8 * 16];
  for (int i = threadIdx.x; i < 64 * 16 + 8 * 16; i += blockDim.x) tile[i] = __float2bfloat16(1.f);
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const uint64_t base = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  // Missing >> 4 on the start address: 0x3000 + base is read as 16x that many bytes, ~192 KiB
  // into a window where this block holds 2.3 KiB (the LBO and SBO fields are right).
  const uint64_t desc_a = ((base + 0x3000) & 0x3FFF) | (uint64_t{128 >> 4} << 16) | (uint64_t{256 >> 4} << 32);
  const uint64_t desc_b = (((base + 64 * 16 * 2) & 0x3FFFF) >> 4) | (uint64_t{128 >> 4} << 16) |
                          (uint64_t{256 >> 4} << 32);
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, 0, 1, 1, 0, 0;\n" : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(desc_a), "l"(desc_b));  // FAULT
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  sink[threadIdx.x] = d0 + d1 + d2 + d3;
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)A, (void)B, (void)M, (void)N, (void)K;
  wgmma_kernel<<<1, 128, 0, stream>>>(reinterpret_cast<float*>(C));
}
