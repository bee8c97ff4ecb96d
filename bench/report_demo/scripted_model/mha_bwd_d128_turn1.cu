// Scripted demo answer (bench/report_demo/make_report.sh): mha_bwd_d128, turn 1.
// plain CUDA backward, no wgmma.
// The fake evaluator of `ptxbench-testing run --test-fake-eval` reads the verdict below; this
// file is never compiled.
// ptxbench-fake-eval: status=PASSED speedup=0.31 target=static_absent tag=mha_bwd_d128.1
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {
constexpr int kStages = 4;  // pipeline depth of this turn
}  // namespace

void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* L, __nv_bfloat16* dQ, __nv_bfloat16* dK, __nv_bfloat16* dV, int64_t B, int64_t H, int64_t d, int64_t S, cudaStream_t stream) {
  (void)kStages;
}
