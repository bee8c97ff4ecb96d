// 64-bit content hash of a device buffer, computed on the GPU (design.md §3.5: "inputs verified
// unchanged after each call").
//
// The hash is a sum, modulo 2^64, of SplitMix64(word ⊕ SplitMix64(word index)) over the
// buffer's 8-byte words (the tail, if the size is not a multiple of 8, is zero-padded into one
// last word), finally mixed with the byte length. A sum of per-position hashes can be reduced
// in any order (atomicAdd), and any single changed word changes the result; two different
// buffers collide with probability about 2^-64 for non-adversarial changes. It is an integrity
// check against accidental or lazy in-place writes by a candidate, not a cryptographic MAC:
// the candidate never sees the hash, which is computed by the supervisor after the call.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/result.h"

namespace ptxb::gpu {

// Hashes `bytes` bytes at `data` (device memory; any alignment the allocation gives, the
// kernel reads whole words only when `data` is 8-byte aligned and falls back to bytes
// otherwise). Waits for `stream` and returns the hash.
Result<std::uint64_t> device_content_hash(const void* data, std::size_t bytes, cudaStream_t stream);

}  // namespace ptxb::gpu
