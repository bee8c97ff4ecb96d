#include "runner/nvml_clock.h"

#include <dlfcn.h>

namespace ptxb {
namespace {

// From nvml.h (NVML API, not linked): NVML_SUCCESS = 0, nvmlClockType_t NVML_CLOCK_SM = 1; the
// _v2 entry points are the ones nvml.h maps nvmlInit/nvmlDeviceGetHandleByPciBusId to.
constexpr int kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;

}  // namespace

bool NvmlClock::open(const std::string& pci_bus_id) {
  void* library = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) return false;
  using Init = int (*)();
  using GetHandle = int (*)(const char* pci_bus_id, void** device);
  auto init = reinterpret_cast<Init>(::dlsym(library, "nvmlInit_v2"));
  auto get_handle =
      reinterpret_cast<GetHandle>(::dlsym(library, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto get_clock = reinterpret_cast<GetClockInfo>(::dlsym(library, "nvmlDeviceGetClockInfo"));
  if (init == nullptr || get_handle == nullptr || get_clock == nullptr) return false;
  if (init() != kNvmlSuccess) return false;
  void* device = nullptr;
  if (get_handle(pci_bus_id.c_str(), &device) != kNvmlSuccess) return false;
  device_ = device;
  get_clock_info_ = get_clock;
  return true;
}

std::optional<std::uint32_t> NvmlClock::sm_clock_mhz() const {
  if (get_clock_info_ == nullptr) return std::nullopt;
  unsigned int mhz = 0;
  if (get_clock_info_(device_, kNvmlClockSm, &mhz) != kNvmlSuccess) return std::nullopt;
  return mhz;
}

}  // namespace ptxb
