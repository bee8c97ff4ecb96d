// A replay answer for the scale-out tests (tests/cluster): the fake evaluator reads the verdict
// from the next line; no GPU and no compiler is involved.
// ptxbench-fake-eval: status=COMPILE_ERROR sleep_ms=250 tag=gemm1
#include <cuda_bf16.h>
void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N, int64_t K, cudaStream_t stream) {}
