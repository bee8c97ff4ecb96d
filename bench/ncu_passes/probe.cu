// The probe of bench/ncu_passes.sh: three distinct FP32-FMA kernels per "call" (as a backward
// pass launches several), 12 calls, each kernel about 2 ms on an H200 (2^24 threads x 4096
// FFMA). Only ncu's pass count and wall time per metric set are measured on it, never its
// output. Built on the device by the script: nvcc -O3 -arch=sm_90a.
#include <cstdio>
#include <cuda_runtime.h>
template <int K> __global__ void work(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = 1.0001f;
#pragma unroll 64
  for (int j = 0; j < 4096; ++j) a = fmaf(a, b, 1e-7f * K);
  x[i] = a;
}
int main() {
  const int n = 1 << 24;
  float* x;
  cudaMalloc(&x, n * sizeof(float) * 16);
  for (int call = 0; call < 12; ++call) {
    work<1><<<n / 256, 256>>>(x, n);
    work<2><<<n / 256, 256>>>(x + n, n);
    work<3><<<n / 256, 256>>>(x + 2 * n, n);
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("done %s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
