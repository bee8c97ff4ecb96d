#include "env/nvml_energy.h"

#include <dlfcn.h>

namespace ptxb {

Result<NvmlEnergy> NvmlEnergy::open(unsigned index) {
  void* nvml = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (nvml == nullptr) {
    const char* why = ::dlerror();
    return make_error("nvml", "libnvidia-ml.so.1: {}", why ? why : "cannot be loaded");
  }
  // The _v2 entry points are what nvml.h maps nvmlInit/nvmlDeviceGetHandleByIndex to.
  using Init = int (*)();
  using ByIndex = int (*)(unsigned, void**);
  auto init = reinterpret_cast<Init>(::dlsym(nvml, "nvmlInit_v2"));
  auto by_index = reinterpret_cast<ByIndex>(::dlsym(nvml, "nvmlDeviceGetHandleByIndex_v2"));
  NvmlEnergy energy;
  energy.read_ = reinterpret_cast<Read>(::dlsym(nvml, "nvmlDeviceGetTotalEnergyConsumption"));
  energy.describe_ = reinterpret_cast<Describe>(::dlsym(nvml, "nvmlErrorString"));
  if (!init || !by_index || !energy.read_ || !energy.describe_)
    return make_error("nvml", "libnvidia-ml.so.1 lacks the energy entry points");
  if (int rc = init(); rc != 0)
    return make_error("nvml", "nvmlInit_v2: {} ({}:{})", energy.describe_(rc), __FILE__, __LINE__);
  if (int rc = by_index(index, &energy.device_); rc != 0)
    return make_error("nvml", "nvmlDeviceGetHandleByIndex_v2({}): {} ({}:{})", index,
                      energy.describe_(rc), __FILE__, __LINE__);
  return energy;
}

Result<std::uint64_t> NvmlEnergy::total_mj() const {
  unsigned long long mj = 0;
  if (int rc = read_(device_, &mj); rc != 0)
    return make_error("nvml", "nvmlDeviceGetTotalEnergyConsumption: {} ({}:{})", describe_(rc),
                      __FILE__, __LINE__);
  return static_cast<std::uint64_t>(mj);
}

}  // namespace ptxb
