// Facts about the GPU an evaluation ran on: what the supervisor probes through NVML and the
// driver, plus the datasheet numbers behind the physical floor (design.md §3.4). Recorded in the
// result's environment and in the GPU-state guard's "after timing" probe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// Facts about the GPU the supervisor uses for the physical floor and the environment block.
struct DeviceFacts {
  std::string name;
  int sm_count = 0;
  std::uint32_t max_sm_clock_mhz = 0;           // NVML max SM clock (0: unknown)
  double bf16_dense_flop_per_clock_per_sm = 0;  // tensor cores, dense
  double memory_bytes_per_second = 0;           // datasheet HBM bandwidth
  std::int64_t l2_bytes = 0;
  // GPU state (design.md §3.4 guard): compute processes holding a context on this GPU (NVML; the
  // supervisor itself is one) and the clock-event (throttle) reasons active now.
  int compute_processes = -1;  // -1: unknown
  std::vector<std::string> clock_event_reasons;
  std::uint32_t sm_clock_mhz = 0;

  // design.md §3.4: max(FLOPs / tensor peak, bytes / HBM bandwidth), in ms; 0 when unknown.
  double physical_floor_ms(double flops, double min_bytes) const;
  Json to_json() const;
  static Result<DeviceFacts> from_json(const Json& json);
};

}  // namespace ptxb
