// The supervisor's device buffers mapped into the runner by CUDA IPC, and the ptxbench_invoke
// argument arrays of each input set (design.md §3.3: inputs and outputs are owned by the trusted
// supervisor; §3.4: timed calls rotate among input sets).
//
// Each set owns 16-byte slots holding its argument values and a `void* params[]` pointing at
// them, built once at bind time so that a call does no allocation or parsing before the window.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <vector>

#include "core/result.h"
#include "protocol/param_layout.h"
#include "protocol/protocol.h"

namespace ptxb {

class BoundSets {
 public:
  BoundSets() = default;
  ~BoundSets() { release(); }
  BoundSets(const BoundSets&) = delete;
  BoundSets& operator=(const BoundSets&) = delete;

  // Opens every IPC handle (identical handles are opened once: CUDA refuses to map the same
  // allocation twice in one process) and builds the argument arrays. Replaces a previous bind.
  Status bind(const BindRequest& request, const std::vector<ParamSlot>& layout,
              cudaStream_t stream);
  // Closes the IPC mappings (cudaIpcCloseMemHandle).
  void release();

  std::size_t set_count() const { return sets_.size(); }
  void* const* params(std::size_t set) const { return sets_[set].params.data(); }
  std::uint64_t mapped_bytes() const { return mapped_bytes_; }

 private:
  struct Slot {
    alignas(16) std::array<unsigned char, 16> bytes{};
  };
  struct Set {
    std::vector<Slot> slots;
    std::vector<void*> params;
  };
  std::vector<void*> opened_;  // distinct mappings, closed on release
  std::vector<Set> sets_;
  std::uint64_t mapped_bytes_ = 0;
};

}  // namespace ptxb
