// The batch bound's snapshot of outputs (docs/integrity.md "The batch bound").
//
// The supervisor's bracket around a batch must end only when the candidate's work is done, but
// the runner's reply is candidate-controlled: it can arrive while kernels still run. So the
// bracket ends when this snapshot is taken: one kernel, launched the moment the reply arrives,
// copies a secret sample of blocks of every output into private memory. A candidate whose
// work is still running then has written none of the sampled blocks it had not reached, and
// the later re-read (changed()) sees them differ. With 32 blocks of 4 KiB per output the
// chance that late work on a tenth of an output escapes is 0.9^32 ≈ 3 % per output, and a
// batch has K outputs (K ≥ 2): such a candidate is caught almost surely.
//
// Whether the snapshot kernel runs at once or waits for the candidate's context (the GPU
// time-slices between contexts) only moves the bracket's end later: the bound stays an upper
// bound of the real time.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/result.h"
#include "cuda/device_buffer.h"

namespace ptxb::gpu {

class OutputSnapshot {
 public:
  struct Region {
    const void* data = nullptr;
    std::uint64_t bytes = 0;
  };
  static constexpr std::uint32_t kBlockBytes = 4096;
  static constexpr int kBlocksPerRegion = 32;

  // Draws the blocks (16-byte aligned offsets) from `secret` and uploads their list, so that
  // take() is a single kernel launch. Synchronized.
  Status prepare(const std::vector<Region>& regions, std::uint64_t secret, cudaStream_t stream);
  // Copies the blocks into the snapshot buffer and waits for it.
  Status take(cudaStream_t stream);
  // Copies the blocks again and returns how many differ from the snapshot.
  Result<std::int64_t> changed(cudaStream_t stream);

  std::size_t block_count() const { return blocks_; }

 private:
  Status gather(DeviceBuffer& into, cudaStream_t stream);

  DeviceBuffer list_;  // device array of BlockRef
  DeviceBuffer first_, second_;
  std::size_t blocks_ = 0;
};

}  // namespace ptxb::gpu
