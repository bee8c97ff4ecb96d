// A replay answer for the scale-out tests (tests/cluster): the fake evaluator reads the verdict
// from the next line; no GPU and no compiler is involved.
// ptxbench-fake-eval: status=RUNTIME_ERROR sleep_ms=250 tag=mha3
#include <cuda_bf16.h>
void run(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o, float* lse, cudaStream_t stream) {}
