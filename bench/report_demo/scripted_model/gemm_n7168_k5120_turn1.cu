// Scripted demo answer (bench/report_demo/make_report.sh): gemm_n7168_k5120, turn 1.
// first try: a wgmma wrapper with the wrong accumulator count.
// The fake evaluator of `ptxbench-testing run --test-fake-eval` reads the verdict below; this
// file is never compiled.
// ptxbench-fake-eval: status=COMPILE_ERROR speedup=1.0 target=not_run tag=gemm_n7168_k5120.1
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {
constexpr int kStages = 4;  // pipeline depth of this turn
}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N, int64_t K, cudaStream_t stream) {
  (void)kStages;
}
