// Test candidates for tests/gpu/runner_test.cc, one shared object per VARIANT, each with a
// hand-written trampoline following the compile stage's ABI (docs/compile.md):
//   params[i] → storage of the i-th `run` argument; the last is the cudaStream_t.
// Shapes: x, y are float[n]; y = 2·x. Grid: ceil(n/256) blocks of 256 threads.
// Build (done by the test): nvcc -gencode arch=compute_90a,code=sm_90a -O2 -shared
//   -Xcompiler -fPIC -cudart shared -DVARIANT=<v> candidate.cu -o candidate_<v>.so
//   VARIANT 0: correct, everything on `stream`.
//   VARIANT 1: launches on the legacy default stream (foreign_stream).
//   VARIANT 2: correct, but leaves a thread that launches a kernel a few ms after run returns
//              (out_of_window).
//   VARIANT 3: writes through a wild pointer (sticky cudaErrorIllegalAddress).
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <thread>

__global__ void scale_by_two(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}

__global__ void late_kernel(int* sink) {
  if (sink != nullptr) *sink = 1;
}

__global__ void wild_write(float* y) { y[threadIdx.x + (1ll << 40)] = 1.0f; }

void run(const float* x, float* y, int64_t n, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((n + 255) / 256);
#if VARIANT == 1
  (void)stream;
  scale_by_two<<<blocks, 256>>>(x, y, n);
#elif VARIANT == 3
  wild_write<<<1, 32, 0, stream>>>(y);
#else
  scale_by_two<<<blocks, 256, 0, stream>>>(x, y, n);
#endif
#if VARIANT == 2
  static bool started = false;
  if (!started) {
    started = true;
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      late_kernel<<<1, 1>>>(nullptr);
      cudaDeviceSynchronize();
    }).detach();
  }
#endif
}

extern "C" __attribute__((visibility("default"))) void ptxbench_invoke(void* const* params) {
  run(*static_cast<const float* const*>(params[0]), *static_cast<float* const*>(params[1]),
      *static_cast<const int64_t*>(params[2]), *static_cast<const cudaStream_t*>(params[3]));
}

extern "C" __attribute__((visibility("default"))) const char* ptxbench_abi_signature() {
  return "void run(const float* x, float* y, int64_t n, cudaStream_t stream)";
}
