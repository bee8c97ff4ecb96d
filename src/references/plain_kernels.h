// Plain CUDA references: independent, simple, obviously correct, fp32 math throughout.
//
// They share no code with cuBLASLt or cuDNN, which is the point: at small sizes they
// cross-check the library references, and they are the correctness reference when no library
// supports a task ("reference unavailable", design.md §4). Inputs are bf16 (converted to fp32 on
// load); outputs can be written as fp32 (a tighter reference for tests) or bf16 (the task
// ABI, round-to-nearest). No tensor cores, no online softmax, no reduced precision: each
// formula below is computed as written, one output element or one row at a time.
//
// GEMM:      C[m,n] = Σ_k A[m,k]·B[n,k]                               (k ascending, fp32)
// Forward:   s_ij = (q_i·k_j)/√D for the keys j visible to query i (all j, or j ≤ i when
//            causal: the top-left aligned mask, which is the lower triangle for S_q = S_kv);
//            LSE_i = m_i + ln Σ_j exp(s_ij − m_i) with m_i = max_j s_ij (natural log);
//            O_i = Σ_j exp(s_ij − LSE_i)·v_j.
// Backward:  P_ij = exp(s_ij − LSE_i) with the given LSE; dP_ij = dO_i·v_j;
//            Δ_i = Σ_d dO_id·O_id (rowsum(dO∘O)); dS_ij = P_ij·(dP_ij − Δ_i);
//            dQ_i = (1/√D)·Σ_j dS_ij·k_j; dK_j = (1/√D)·Σ_i dS_ij·q_i; dV_j = Σ_i P_ij·dO_i.
// Tensors are [B, H, S, D] row-major; LSE is [B, H, S]. One thread block handles one row
// (a query row for the forward and dQ, a key row for dK/dV), keeping that row's scores in
// shared memory (S floats, or 2·S for the backward; opted in above 48 KB, up to the device's
// sharedMemPerBlockOptin, i.e. S ≤ ~28K on an H200).
#pragma once

#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "core/result.h"
#include "trace/dtype.h"

namespace ptxb::gpu {

// `C` is kFloat32 or kBFloat16 (`c_dtype`), [M, N].
Status plain_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, void* C, DType c_dtype,
                  std::int64_t M, std::int64_t N, std::int64_t K, cudaStream_t stream);

// `O` is kFloat32 or kBFloat16 (`o_dtype`); LSE is fp32.
Status plain_attention_forward(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                               const __nv_bfloat16* V, void* O, DType o_dtype, float* LSE,
                               std::int64_t B, std::int64_t H, std::int64_t S, std::int64_t D,
                               bool causal, cudaStream_t stream);

// dQ, dK, dV are all `grad_dtype` (kFloat32 or kBFloat16).
Status plain_attention_backward(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                const __nv_bfloat16* V, const __nv_bfloat16* O,
                                const __nv_bfloat16* dO, const float* LSE, void* dQ, void* dK,
                                void* dV, DType grad_dtype, std::int64_t B, std::int64_t H,
                                std::int64_t S, std::int64_t D, bool causal, cudaStream_t stream);

}  // namespace ptxb::gpu
