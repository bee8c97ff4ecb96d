// What the machine's GPU and driver are, read through NVML and the CUDA driver API.
//
// Both libraries are loaded with dlopen from the system (never linked), so `ptxbench` starts on
// machines without a driver and says what is missing instead of failing to load. Only trusted
// system libraries are loaded here; candidate code is never loaded into this process.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"

namespace ptxb {

struct GpuInfo {
  int index = 0;
  std::string name;
  std::string uuid;
  int sm_count = 0;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::int64_t l2_cache_bytes = 0;  // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
  std::int64_t memory_total_bytes = 0;
  unsigned sm_clock_mhz = 0;      // current
  unsigned sm_clock_max_mhz = 0;  // NVML max clock: the physical-floor peak uses it
  unsigned memory_clock_mhz = 0;
  std::uint64_t clock_event_reasons = 0;  // NVML throttle / clock-event reason bit mask
  std::vector<std::string> clock_event_reason_names;
  unsigned compute_processes = 0;  // other compute processes on this GPU (NVML)
};

struct GpuProbe {
  std::string driver_version;   // e.g. "580.159.04" (NVML)
  int cuda_driver_version = 0;  // e.g. 13000 (cuDriverGetVersion)
  std::vector<GpuInfo> gpus;
  // Why each source could not be read ("libnvidia-ml.so.1 not found: ..."); empty if fine.
  std::vector<std::string> problems;

  bool has_gpu() const { return !gpus.empty(); }
  Json to_json() const;
};

// Reads everything it can; never fails (problems are recorded instead).
GpuProbe probe_gpus();

// "sm_90a"-style target for a compute capability (9.0 → sm_90a, 10.0 → sm_100a).
std::string arch_for_compute_capability(int major, int minor);

}  // namespace ptxb
