// L2 flush before every timed sample (DESIGN §3.4), so that no sample starts with its inputs
// (or, for the reference, its weights) already resident in L2 from the previous call.
//
// Why 2x the L2 size: Hopper's L2 (60 MB on the H200 as reported by
// cudaDeviceProp::l2CacheSize) is split into two partitions joined by a crossbar, lines may be
// held in both partitions, and the replacement policy is not documented to be LRU; writing
// exactly l2CacheSize bytes therefore does not provably evict every old line. Writing twice
// the capacity leaves the cache holding only flush-buffer lines in practice, for about 30 µs
// of HBM write time per sample (outside the timed window). A *kernel* writes it (not cudaMemset) so
// the flush is an ordinary kernel on the caller's stream, ordered before the sample's window and
// visible as such in a CUPTI trace; each flush writes a new value so no level of the memory
// system can elide the stores as redundant.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/result.h"
#include "gpu/device_buffer.h"

namespace ptxb::gpu {

// Measurement rule, pinned here: bytes written per flush = kL2FlushFactor x l2CacheSize.
inline constexpr std::size_t kL2FlushFactor = 2;

class L2Flusher {
 public:
  // Allocates kL2FlushFactor x the L2 size of `device`.
  static Result<L2Flusher> create(int device);

  // Enqueues the flush kernel on `stream` (asynchronous).
  Status flush(cudaStream_t stream);

  std::size_t buffer_bytes() const { return buffer_.bytes(); }
  int device() const { return device_; }

 private:
  int device_ = 0;
  std::uint32_t generation_ = 0;
  DeviceBuffer buffer_;
};

// Flushes the L2 of the current device on `stream`, with one lazily created process-wide
// L2Flusher per device (created on first use, never inside a static initializer).
Status flush_l2(cudaStream_t stream);

}  // namespace ptxb::gpu
