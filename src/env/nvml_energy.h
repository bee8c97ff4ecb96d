// The GPU's total energy counter (NVML nvmlDeviceGetTotalEnergyConsumption, millijoules since
// the driver was loaded; Volta and later), read by the supervisor. The counter is device-wide,
// so it is read only by the trusted side, never by a runner the candidate controls.
#pragma once

#include <cstdint>

#include "core/result.h"

namespace ptxb {

class NvmlEnergy {
 public:
  // Opens NVML (dlopen'ed; no link-time dependency) and the device with that NVML index.
  static Result<NvmlEnergy> open(unsigned index);
  // Millijoules consumed since the driver loaded.
  Result<std::uint64_t> total_mj() const;

 private:
  using Read = int (*)(void* device, unsigned long long* mj);
  using Describe = const char* (*)(int code);
  void* device_ = nullptr;
  Read read_ = nullptr;
  Describe describe_ = nullptr;
};

}  // namespace ptxb
