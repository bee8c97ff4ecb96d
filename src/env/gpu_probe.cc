#include "env/gpu_probe.h"

#include <dlfcn.h>

#include <cuda.h>
#include <nvml.h>

#include <fmt/format.h>

namespace ptxb {
namespace {

// dlopen handle that stays open for the life of the process (the libraries are system
// singletons; closing NVML/libcuda while other code may use them buys nothing).
void* open_library(const std::vector<std::string>& names, std::string& problem) {
  std::string errors;
  for (const auto& name : names) {
    if (void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* message = ::dlerror();
    if (!errors.empty()) errors += "; ";
    errors += message ? message : name + ": unknown dlopen error";
  }
  problem = errors;
  return nullptr;
}

template <typename Fn>
Fn symbol(void* handle, const char* name) {
  return reinterpret_cast<Fn>(::dlsym(handle, name));
}

struct ClockReasonName {
  unsigned long long bit;
  const char* name;
};

// NVML clock-event reasons (nvml.h "ClocksEventReasons"). Idle and application-clock settings
// are benign; thermal and power capping make a timing noisy, so the evaluator records them.
constexpr ClockReasonName kClockReasons[] = {
    {0x1ull, "gpu_idle"},
    {0x2ull, "applications_clocks_setting"},
    {0x4ull, "sw_power_cap"},
    {0x8ull, "hw_slowdown"},
    {0x10ull, "sync_boost"},
    {0x20ull, "sw_thermal_slowdown"},
    {0x40ull, "hw_thermal_slowdown"},
    {0x80ull, "hw_power_brake_slowdown"},
    {0x100ull, "display_clock_setting"},
};

void probe_nvml(GpuProbe& probe) {
  std::string problem;
  void* nvml = open_library({"libnvidia-ml.so.1", "libnvidia-ml.so"}, problem);
  if (!nvml) {
    probe.problems.push_back("NVML unavailable (no NVIDIA driver?): " + problem);
    return;
  }
  auto init = symbol<decltype(&nvmlInit_v2)>(nvml, "nvmlInit_v2");
  auto error_string = symbol<decltype(&nvmlErrorString)>(nvml, "nvmlErrorString");
  if (!init || !error_string) {
    probe.problems.push_back("NVML: nvmlInit_v2 not found in libnvidia-ml");
    return;
  }
  if (nvmlReturn_t rc = init(); rc != NVML_SUCCESS) {
    probe.problems.push_back(fmt::format("NVML: nvmlInit_v2: {}", error_string(rc)));
    return;
  }
  char text[256] = {};
  if (auto get_driver =
          symbol<decltype(&nvmlSystemGetDriverVersion)>(nvml, "nvmlSystemGetDriverVersion");
      get_driver && get_driver(text, sizeof(text)) == NVML_SUCCESS)
    probe.driver_version = text;

  auto by_index =
      symbol<decltype(&nvmlDeviceGetHandleByIndex_v2)>(nvml, "nvmlDeviceGetHandleByIndex_v2");
  auto get_clock = symbol<decltype(&nvmlDeviceGetClockInfo)>(nvml, "nvmlDeviceGetClockInfo");
  auto get_max_clock =
      symbol<decltype(&nvmlDeviceGetMaxClockInfo)>(nvml, "nvmlDeviceGetMaxClockInfo");
  auto get_reasons = symbol<decltype(&nvmlDeviceGetCurrentClocksEventReasons)>(
      nvml, "nvmlDeviceGetCurrentClocksEventReasons");
  auto get_processes = symbol<decltype(&nvmlDeviceGetComputeRunningProcesses_v3)>(
      nvml, "nvmlDeviceGetComputeRunningProcesses_v3");
  auto get_uuid = symbol<decltype(&nvmlDeviceGetUUID)>(nvml, "nvmlDeviceGetUUID");
  for (auto& gpu : probe.gpus) {
    nvmlDevice_t device{};
    if (!by_index || by_index(static_cast<unsigned>(gpu.index), &device) != NVML_SUCCESS) continue;
    if (get_uuid && get_uuid(device, text, sizeof(text)) == NVML_SUCCESS) gpu.uuid = text;
    if (get_clock) {
      get_clock(device, NVML_CLOCK_SM, &gpu.sm_clock_mhz);
      get_clock(device, NVML_CLOCK_MEM, &gpu.memory_clock_mhz);
    }
    if (get_max_clock) get_max_clock(device, NVML_CLOCK_SM, &gpu.sm_clock_max_mhz);
    unsigned long long reasons = 0;
    if (get_reasons && get_reasons(device, &reasons) == NVML_SUCCESS) {
      gpu.clock_event_reasons = reasons;
      for (const auto& reason : kClockReasons)
        if (reasons & reason.bit) gpu.clock_event_reason_names.push_back(reason.name);
    }
    if (get_processes) {
      unsigned count = 0;
      // With a zero-sized buffer NVML returns the count (INSUFFICIENT_SIZE when non-zero).
      nvmlReturn_t rc = get_processes(device, &count, nullptr);
      if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE) gpu.compute_processes = count;
    }
  }
}

void probe_driver(GpuProbe& probe) {
  std::string problem;
  void* cuda = open_library({"libcuda.so.1", "libcuda.so"}, problem);
  if (!cuda) {
    probe.problems.push_back("CUDA driver unavailable: " + problem);
    return;
  }
  auto cu_init = symbol<decltype(&cuInit)>(cuda, "cuInit");
  auto cu_driver_version = symbol<decltype(&cuDriverGetVersion)>(cuda, "cuDriverGetVersion");
  auto cu_count = symbol<decltype(&cuDeviceGetCount)>(cuda, "cuDeviceGetCount");
  auto cu_get = symbol<decltype(&cuDeviceGet)>(cuda, "cuDeviceGet");
  auto cu_attr = symbol<decltype(&cuDeviceGetAttribute)>(cuda, "cuDeviceGetAttribute");
  auto cu_name = symbol<decltype(&cuDeviceGetName)>(cuda, "cuDeviceGetName");
  auto cu_mem = symbol<decltype(&cuDeviceTotalMem_v2)>(cuda, "cuDeviceTotalMem_v2");
  auto cu_error = symbol<decltype(&cuGetErrorString)>(cuda, "cuGetErrorString");
  if (!cu_init || !cu_count || !cu_get || !cu_attr || !cu_name) {
    probe.problems.push_back("CUDA driver: libcuda lacks the expected entry points");
    return;
  }
  if (cu_driver_version) cu_driver_version(&probe.cuda_driver_version);
  if (CUresult rc = cu_init(0); rc != CUDA_SUCCESS) {
    const char* message = nullptr;
    if (cu_error) cu_error(rc, &message);
    probe.problems.push_back(fmt::format("CUDA driver: cuInit: {}", message ? message : "error"));
    return;
  }
  int count = 0;
  cu_count(&count);
  for (int i = 0; i < count; ++i) {
    CUdevice device{};
    if (cu_get(&device, i) != CUDA_SUCCESS) continue;
    GpuInfo gpu;
    gpu.index = i;
    char name[256] = {};
    cu_name(name, sizeof(name), device);
    gpu.name = name;
    int value = 0;
    if (cu_attr(&value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device) == CUDA_SUCCESS)
      gpu.sm_count = value;
    if (cu_attr(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) == CUDA_SUCCESS)
      gpu.compute_capability_major = value;
    if (cu_attr(&value, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device) == CUDA_SUCCESS)
      gpu.compute_capability_minor = value;
    if (cu_attr(&value, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device) == CUDA_SUCCESS)
      gpu.l2_cache_bytes = value;
    std::size_t total = 0;
    if (cu_mem && cu_mem(&total, device) == CUDA_SUCCESS)
      gpu.memory_total_bytes = static_cast<std::int64_t>(total);
    probe.gpus.push_back(gpu);
  }
  if (count == 0) probe.problems.push_back("CUDA driver: no CUDA devices");
}

}  // namespace

std::string arch_for_compute_capability(int major, int minor) {
  // The "a" targets (sm_90a, sm_100a) are the ones with wgmma/TMA multicast/tcgen05 and are
  // what PTXBench tasks are compiled for (PTX ISA: "Architecture-specific features").
  if (major == 9 && minor == 0) return "sm_90a";
  if (major == 10 && minor == 0) return "sm_100a";
  return fmt::format("sm_{}{}", major, minor);
}

GpuProbe probe_gpus() {
  GpuProbe probe;
  probe_driver(probe);
  probe_nvml(probe);
  return probe;
}

Json GpuProbe::to_json() const {
  Json out = Json::object();
  out["driver_version"] = driver_version.empty() ? Json(nullptr) : Json(driver_version);
  out["cuda_driver_version"] = cuda_driver_version ? Json(cuda_driver_version) : Json(nullptr);
  Json list = Json::array();
  for (const auto& gpu : gpus) {
    Json entry = Json::object();
    entry["index"] = gpu.index;
    entry["name"] = gpu.name;
    entry["uuid"] = gpu.uuid;
    entry["arch"] =
        arch_for_compute_capability(gpu.compute_capability_major, gpu.compute_capability_minor);
    entry["compute_capability"] =
        fmt::format("{}.{}", gpu.compute_capability_major, gpu.compute_capability_minor);
    entry["sm_count"] = gpu.sm_count;
    entry["l2_cache_bytes"] = gpu.l2_cache_bytes;
    entry["memory_total_bytes"] = gpu.memory_total_bytes;
    entry["sm_clock_mhz"] = gpu.sm_clock_mhz;
    entry["sm_clock_max_mhz"] = gpu.sm_clock_max_mhz;
    entry["memory_clock_mhz"] = gpu.memory_clock_mhz;
    entry["clock_event_reasons"] = gpu.clock_event_reason_names;
    entry["other_compute_processes"] = gpu.compute_processes;
    list.push_back(entry);
  }
  out["gpus"] = list;
  out["problems"] = problems;
  return out;
}

}  // namespace ptxb
