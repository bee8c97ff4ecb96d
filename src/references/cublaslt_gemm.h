// cuBLASLt reference for C[M,N] = A[M,K]·B[N,K]ᵀ (bf16 in/out, fp32 accumulation).
//
// Row-major onto cuBLASLt's column-major convention: a row-major X[r,c] is, byte for byte, the
// column-major matrix Xᵀ[c,r]. So we ask cuBLASLt for Cᵀ = B·Aᵀ in column-major terms:
//   cuBLASLt "A" = our B buffer, stored K×N column-major (ld = K), op = T  → op(A) is N×K
//   cuBLASLt "B" = our A buffer, stored K×M column-major (ld = K), op = N  → op(B) is K×M
//   cuBLASLt "D" = our C buffer, N×M column-major (ld = N)                  = C row-major [M,N]
// This is the "TN" layout (both operands K-major), the one cuBLAS's Hopper kernels favour and
// the one PyTorch's torch.mm(A, B.t()) reaches, so nothing is transposed in memory.
//
// Algorithm selection, in prepare() and once per shape (never in a timed window):
//   1. cublasLtMatmulAlgoGetHeuristic with a kWorkspaceBytes workspace, up to
//      kHeuristicCandidates results. Result #0 is what cuBLAS itself runs by default for this
//      problem (cublasLtMatmul without an algo, and cublasGemmEx, use heuristic #0).
//   2. Every candidate is run on the real shape with random inputs: kWarmupRuns untimed, then
//      kTimedRuns each preceded by an L2 flush and bracketed by CUDA events; its median is kept.
//   3. The candidate with the lowest median wins. Because #0 is always a candidate, the
//      reference is never slower than cuBLAS's default path (up to event-timing noise).
// describe() records every candidate's identity (algo id, tile, stages, split-K, swizzle,
// cluster shape) and median, the winner, and cublasLtGetVersion().
#pragma once

#include <map>
#include <memory>
#include <vector>

#include <cublasLt.h>

#include "cuda/device_buffer.h"
#include "references/reference.h"

namespace ptxb::gpu {

class CublasLtGemm final : public GemmReference {
 public:
  // Autotuning parameters (see the file comment).
  static constexpr std::size_t kWorkspaceBytes = 32u << 20;  // 32 MiB: cuBLAS's own Hopper default
  static constexpr int kHeuristicCandidates = 8;
  static constexpr int kWarmupRuns = 3;
  static constexpr int kTimedRuns = 10;

  CublasLtGemm();
  ~CublasLtGemm() override;
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  std::string name() const override { return "cublaslt_gemm"; }
  Status prepare_shape(const GemmShape& shape, cudaStream_t stream) override;
  // Use cuBLASLt's heuristic candidate #`heuristic_index` for `shape` instead of autotuning in
  // this process (before prepare). The supervisor pins every runner's library to the choice its
  // own instance made (EvalOptions::pin_reference_algorithm): autotuning in each process races
  // candidates 0.5 % apart and can leave two processes timing different algorithms. The
  // heuristic list is deterministic for one library, GPU and shape; a pinned index missing from
  // it is an error at prepare.
  void pin(const GemmShape& shape, int heuristic_index) { pins_[shape] = heuristic_index; }
  Status run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, std::int64_t M,
             std::int64_t N, std::int64_t K, cudaStream_t stream) override;
  Json describe() const override;

 private:
  struct Candidate {
    cublasLtMatmulAlgo_t algo;
    std::size_t workspace_bytes = 0;
    int heuristic_index = 0;
    float median_ms = -1.0f;  // -1: failed to run
    std::string failure;
  };
  // Descriptors for one shape plus the chosen algorithm.
  struct Plan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a_layout = nullptr;  // cuBLASLt "A" = our B
    cublasLtMatrixLayout_t b_layout = nullptr;  // cuBLASLt "B" = our A
    cublasLtMatrixLayout_t c_layout = nullptr;
    std::vector<Candidate> candidates;
    int chosen = -1;  // index into candidates
    ~Plan();
  };

  Status ensure_handle();
  Status create_descriptors(const GemmShape& shape, Plan& plan);
  Status autotune(const GemmShape& shape, Plan& plan, cudaStream_t stream);
  Status matmul(const Plan& plan, const cublasLtMatmulAlgo_t& algo, const __nv_bfloat16* A,
                const __nv_bfloat16* B, __nv_bfloat16* C, cudaStream_t stream);

  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
  std::map<GemmShape, std::unique_ptr<Plan>> plans_;
  std::map<GemmShape, int> pins_;
};

// {"name": "cuBLASLt", "version": 130100, "version_string": "13.1.0", "cudart_version", "path"}
Json cublaslt_library_info();

}  // namespace ptxb::gpu
