// L2 flush before every timed sample, outside the window (DESIGN §3.4).
//
// Why 2 × L2: H100/H200 L2 is split into two partitions with a hashed address mapping and a
// non-LRU replacement policy, so writing exactly one L2's worth does not reliably evict every
// line; twice the capacity does. Why cudaMemsetAsync rather than a kernel: a memset writes
// through L2 like any store, needs no module of the runner's own (so every module the CUPTI
// callback sees after set-up is the candidate's), and its activity record is a MEMSET in the
// runner's CUSTOM1 scope, excluded from the call. The byte value changes per flush so that no
// layer can elide a write of identical data.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/result.h"

namespace ptxb {

inline constexpr std::uint64_t kL2FlushMultiple = 2;

class L2Flush {
 public:
  L2Flush() = default;
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;

  // Allocates kL2FlushMultiple × `l2_bytes` (at least 1 MiB) of device memory.
  Status allocate(std::uint64_t l2_bytes);
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
