// The current SM clock from NVML, for the trace (design.md §3.4 "report ... SM clock").
// Optional: libnvidia-ml.so.1 is dlopen'ed (the runner links no NVML; a sandbox may hide it), and
// every failure just means "no clock reading".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace ptxb {

class NvmlClock {
 public:
  // Opens NVML and finds the device with this PCI bus id ("0000:19:00.0", cudaDeviceGetPCIBusId).
  // Returns false (and stays inert) when NVML or the device is unavailable.
  bool open(const std::string& pci_bus_id);
  // NVML_CLOCK_SM in MHz, nullopt without NVML.
  std::optional<std::uint32_t> sm_clock_mhz() const;

 private:
  using GetClockInfo = int (*)(void* device, int clock_type, unsigned int* mhz);
  void* device_ = nullptr;
  GetClockInfo get_clock_info_ = nullptr;
};

}  // namespace ptxb
