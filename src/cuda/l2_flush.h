// The L2 flush before every timed sample, outside the window (design.md §3.4): the one flush of
// the project, used by the runner before each candidate and reference call and by the cuBLASLt
// reference's own algorithm selection.
//
// Why 2 × L2 (kL2FlushMultiple): H100/H200 L2 is split into two partitions with a hashed
// address mapping and an undocumented, not provably LRU replacement policy, so writing exactly
// one L2's worth does not reliably evict every line; writing twice the capacity leaves the cache
// holding only flush-buffer lines in practice (about 30 µs of HBM writes on an H200, outside the
// window).
//
// Why cudaMemsetAsync rather than a kernel: a memset writes through L2 like any store, and needs
// no module of the runner's own, so every module the runner's CUPTI callback sees after set-up is
// the candidate's; its activity record is a MEMSET in the runner's own correlation scope,
// excluded from the call. The byte value changes per flush so that no layer can elide a write of
// identical data.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/result.h"

namespace ptxb {

// Measurement rule, pinned here: bytes written per flush = kL2FlushMultiple × the L2 size.
inline constexpr std::uint64_t kL2FlushMultiple = 2;

class L2Flush {
 public:
  L2Flush() = default;
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  // Allocates kL2FlushMultiple × `l2_bytes` (at least 1 MiB) of device memory.
  Status allocate(std::uint64_t l2_bytes);
  // Allocates for the current device's L2 (cudaDevAttrL2CacheSize).
  Status allocate_for_current_device();
  // Enqueues the flush on `stream` and waits for it (so it is over before the window opens).
  // Returns the raw CUDA status: after a candidate's sticky error this is where the runner first
  // sees it, and the reply names the error (cudaGetErrorName).
  cudaError_t flush(cudaStream_t stream);
  std::uint64_t bytes() const { return bytes_; }

 private:
  void* buffer_ = nullptr;
  std::uint64_t bytes_ = 0;
  unsigned char next_value_ = 1;
};

}  // namespace ptxb
