// Test kernel (PTXBench compile tests): provokes ptxas "Potential Performance Loss" warnings so
// that the ptxas-report parser is tested on real output.
//   setmaxnreg_kernel: setmaxnreg.inc (PTX ISA 9.7.19.5) in a kernel without __launch_bounds__;
//                      ptxas cannot honour it and ignores it.
//   wgmma_spill_kernel: a wgmma whose accumulators live across a non-inlined call, so ptxas
//                       serializes the wgmma pipeline.
//   spill_kernel: a large local array indexed dynamically -> stack frame and local memory.
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -O3 -Xptxas -v -c perf_warnings.cu
#include <cuda_runtime.h>
#include <cstdint>

__global__ void setmaxnreg_kernel(float* out) {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
  out[threadIdx.x] = 1.0f;
}

__device__ __noinline__ float opaque(float x) { return x * 3.0f; }

__global__ void wgmma_spill_kernel(float* out, uint64_t desc_a, uint64_t desc_b) {
  float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "l"(desc_a), "l"(desc_b), "r"(1));
  d0 = opaque(d0);
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  out[threadIdx.x * 4 + 0] = d0;
  out[threadIdx.x * 4 + 1] = d1;
  out[threadIdx.x * 4 + 2] = d2;
  out[threadIdx.x * 4 + 3] = d3;
}

__global__ void __launch_bounds__(1024, 1) spill_kernel(const int* index, float* out) {
  float scratch[512];
  for (int i = 0; i < 512; ++i) scratch[i] = out[i * blockDim.x + threadIdx.x];
  out[threadIdx.x] = scratch[index[threadIdx.x] & 511];
}
