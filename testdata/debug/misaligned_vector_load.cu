// expect: kernel.cu:18 MEMORY_ERROR (compute-sanitizer: Invalid __global__ read, misaligned)
// Debug-stage failure kernel for gemm_n7168_k5120: a 16-byte vector load from A offset by one
// bf16 element (2 bytes), so the address is not 16-byte aligned (cudaErrorMisalignedAddress).
// The report must point at the uint4 load.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__global__ void __launch_bounds__(256) copy_vectors(const __nv_bfloat16* A, __nv_bfloat16* C,
                                                    int64_t elements) {
  const int64_t vector = blockIdx.x * int64_t{blockDim.x} + threadIdx.x;
  if ((vector + 1) * 8 + 1 > elements) return;
  // + 1 element: the classic "skip the header" that breaks 16-byte alignment.
  const uint4* source = reinterpret_cast<const uint4*>(A + vector * 8 + 1);
  const uint4 bits = *source;  // FAULT
  reinterpret_cast<uint4*>(C)[vector] = bits;
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  (void)B, (void)K;
  const int64_t vectors = M * N / 8;
  copy_vectors<<<static_cast<unsigned>((vectors + 255) / 256), 256, 0, stream>>>(A, C, M * N);
}
