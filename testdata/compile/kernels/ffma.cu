// Test kernel (PTXBench compile tests): a plain SIMT kernel (FFMA only), no target instructions.
// The word cudnn in this comment (and "cuBLAS" in the string below) must not make it FORBIDDEN:
// only includes and linked symbols count.
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -O3 -c ffma.cu
#include <cuda_runtime.h>
#include <cstdint>

__global__ void axpy_kernel(const float* x, float* y, float a, int64_t n) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = fmaf(a, x[i], y[i]);
}

static const char* kNote = "not using cuBLAS here";

void run(const float* x, float* y, int64_t n, cudaStream_t stream) {
  (void)kNote;
  axpy_kernel<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(x, y, 2.0f, n);
}
