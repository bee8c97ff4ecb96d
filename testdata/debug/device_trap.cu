// expect: kernel.cu:18 MEMORY_ERROR (a trap ends the grid with cudaErrorLaunchFailure, which the evaluator classes as a memory fault: on Hopper an out-of-bounds access raises it too; memcheck reports the PC after the trap, the store at line 20)
// Debug-stage failure kernel for gemm_n7168_k5120: a "can't happen" guard that fires (the
// tile count is computed with the wrong dimension) and executes the PTX `trap` instruction,
// which aborts the grid with cudaErrorLaunchFailure. The report must point at the trap.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kTile = 128;

__global__ void __launch_bounds__(128) guarded_tiles(__nv_bfloat16* C, int64_t N,
                                                     int64_t tiles) {
  // Every block checks that the grid matches the tile count it was told.
  if (gridDim.x != tiles) {
    asm volatile("trap;");  // FAULT
  }
  C[blockIdx.x * int64_t{kTile} + threadIdx.x] = __float2bfloat16(static_cast<float>(N));
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)A, (void)B, (void)K;
  const int64_t tiles = M * N / kTile;
  guarded_tiles<<<static_cast<unsigned>(M / kTile), kTile, 0, stream>>>(C, N, tiles);
}
