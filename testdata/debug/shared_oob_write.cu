// expect: kernel.cu:19 MEMORY_ERROR (compute-sanitizer: Invalid __shared__ write)
// Debug-stage failure kernel for gemm_n7168_k5120: a tile transpose whose shared buffer holds
// 32x32 floats but is indexed with the 64-wide tile of the global layout, so threads with
// threadIdx.y >= 16 write past its end (dynamic shared memory of 4 KiB). The report must point
// at the shared store.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kTile = 32;

__global__ void __launch_bounds__(kTile * kTile) stage_tile(__nv_bfloat16* C, int64_t N) {
  extern __shared__ float tile[];  // kTile * kTile floats
  const int x = threadIdx.x, y = threadIdx.y;
  // Row pitch 2 * kTile: should be kTile.
  tile[y * 2 * kTile + x] = static_cast<float>(x + y);  // FAULT
  __syncthreads();
  C[(blockIdx.y * kTile + y) * N + blockIdx.x * kTile + x] = __float2bfloat16(tile[x * kTile + y]);
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)A, (void)B, (void)K;
  const dim3 grid(static_cast<unsigned>(N / kTile), static_cast<unsigned>(M / kTile));
  stage_tile<<<grid, dim3(kTile, kTile), kTile * kTile * sizeof(float), stream>>>(C, N);
}
