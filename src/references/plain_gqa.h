// The plain CUDA GQA reference (plain_kernels.h's style): fp32 math as the definitions' Python
// reference writes it, two passes, no online softmax, no tensor cores. For every query row t of
// request b and query head h (KV head h / group):
//   s_j   = sm_scale · q_t,h · k_j       for the keys j visible to t (all for decode; causal
//                                       prefill: j <= kv_len - q_len + i, bottom-right aligned)
//   m     = max_j s_j;  l = Σ_j exp(s_j − m)
//   out   = Σ_j exp(s_j − m) · v_j / l;  lse = (m + ln l) / ln 2   (base 2, as FlashInfer)
// A row with no visible key gets out = 0 and lse = −inf, as the Python reference leaves it.
// One 128-thread block per (query row, query head); each warp takes every 4th key and a lane
// holds head_dim / 32 elements, so head_dim must be a multiple of 32 up to 256. Keys are read
// through kv_indices (paged, page-major rows) or directly (ragged). Used as the correctness
// cross-check of FlashInfer and as the reference where FlashInfer is not built.
#pragma once

#include "references/gqa_reference.h"
#include "trace/dtype.h"

namespace ptxb::gpu {

// `output` is kFloat32 or kBFloat16 (`out_dtype`), [total_q, Hq, D]; lse is call.lse.
Status plain_gqa_attention(const GqaCall& call, void* output, DType out_dtype);

}  // namespace ptxb::gpu
