// Deterministic input generation and output poisoning, on the GPU.
//
// Inputs (design.md §4: Q, K, V, dO, A, B ~ normal(0, 1)) are a pure function of
// (seed, tensor_index, element index): the same seed gives bit-identical tensors in every
// process and every trial, on the same GPU architecture and build, and nothing is generated on
// the host or copied over PCIe (8192x5120 bf16 in well under a millisecond).
//
// Generator (counter-based, in the spirit of Random123 / Salmon et al., SC'11): a 64-bit key
// k = mix(seed, tensor_index) is combined with the index p of a *pair* of elements and hashed
// with the SplitMix64 finalizer (Steele, Lea, Flood, OOPSLA'14; it passes BigCrush as a
// counter-mode generator). The 64 hash bits give two 24-bit uniforms, u1 in (0, 1] and u2 in
// [0, 1), and the Box–Muller transform (Box & Muller, 1958) turns them into two independent
// standard normals, r·cos(2πu2) and r·sin(2πu2) with r = sqrt(-2 ln u1), written to elements
// 2p and 2p+1. u1 never reaches 0, so r is finite (|z| <= sqrt(2·24·ln 2) ≈ 5.77). The math is
// fp32 with the CUDA library's accurate logf/sqrtf/sincospif (no fast-math intrinsics), then
// rounded to nearest for bf16.
//
// Poison: outputs are pre-filled with a bit pattern that a correct kernel overwrites. Trials
// alternate between two different patterns (design.md §3.5), so an element counts as unwritten
// only if it still holds the pattern of each trial (see UnwrittenTracker in compare.h). The
// patterns are quiet NaNs with unusual payloads: arithmetic NaNs produced by real code carry
// the canonical payload (0x7FC0 / 0x7FFFFFFF on NVIDIA GPUs), so a computed NaN is never
// mistaken for "unwritten", while a kernel that accumulates into its output (C += ...)
// instead of writing it still produces NaNs and fails the NaN rule.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/result.h"
#include "trace/dtype.h"

namespace ptxb::gpu {

// Fills `count` elements of `dtype` (kBFloat16 or kFloat32) with normal(mean, stddev) values
// that depend only on (seed, tensor_index, element index). Enqueued on `stream`.
Status fill_normal(void* data, DType dtype, std::int64_t count, std::uint64_t seed,
                   std::uint64_t tensor_index, cudaStream_t stream, float mean = 0.0f,
                   float stddev = 1.0f);

// The poison bit pattern of trial `trial` for outputs of `dtype` (16-bit patterns for bf16 and
// fp16, 32-bit for fp32 and int32): consecutive trials always get different patterns. Below
// kVariedPoisonFrom there are two patterns (even and odd trials); from it on the payload is
// drawn from the trial number too, so a caller that picks trials at random gets patterns a
// kernel cannot know in advance.
inline constexpr int kVariedPoisonFrom = 1024;
std::uint32_t poison_pattern(DType dtype, int trial);

// Fills `count` elements whose size is `element_bytes` (2 or 4) with the low `element_bytes`
// bytes of `pattern`. Enqueued on `stream`.
Status fill_pattern(void* data, int element_bytes, std::int64_t count, std::uint32_t pattern,
                    cudaStream_t stream);

// fill_pattern with poison_pattern(dtype, trial) and the element size of `dtype`.
Status fill_poison(void* data, DType dtype, std::int64_t count, int trial, cudaStream_t stream);

}  // namespace ptxb::gpu
