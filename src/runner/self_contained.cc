#include "runner/self_contained.h"

#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/json_io.h"
#include "cuda/cuda_check.h"
#include "protocol/self_contained_spec.h"
#include "runner/candidate_library.h"

namespace ptxb {
namespace {

struct DeviceBuffers {
  std::vector<void*> pointers;
  ~DeviceBuffers() {
    for (void* pointer : pointers) cudaFree(pointer);
  }
};

Status run_once(const std::string& so_path, const std::string& params_json_path) {
  PTXB_ASSIGN_OR_RETURN(Json json, read_json_file(params_json_path));
  PTXB_ASSIGN_OR_RETURN(SelfContainedSpec spec, self_contained_spec_from_json(json));
  PTXB_CUDA_CHECK(cudaSetDevice(0));
  PTXB_CUDA_CHECK(cudaFree(nullptr));
  CandidateLibrary candidate;
  PTXB_RETURN_IF_ERROR(candidate.load(so_path, spec.signature));
  const auto& layout = candidate.layout();
  if (spec.params.size() + 1 != layout.size()) {
    return make_error("params", "{}: {} params for {} parameters of '{}' (the stream is implied)",
                      params_json_path, spec.params.size(), layout.size() - 1,
                      candidate.signature());
  }

  cudaStream_t stream = nullptr;
  PTXB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  DeviceBuffers buffers;
  struct alignas(16) Slot {
    std::array<unsigned char, 16> bytes{};
  };
  std::vector<Slot> slots(layout.size());
  for (std::size_t i = 0; i < spec.params.size(); ++i) {
    const SelfContainedParam& param = spec.params[i];
    const ParamSlot& slot = layout[i];
    if (slot.is_pointer != param.tensor.has_value()) {
      return make_error("params", "{}: parameter {} ('{} {}') needs {}", params_json_path, i,
                        slot.type, slot.name, slot.is_pointer ? "a tensor" : "a scalar");
    }
    if (!param.tensor) {
      if (param.scalar.storage.size() != slot.value_bytes) {
        return make_error("params", "{}: parameter {} ('{} {}') needs {} bytes, got {}",
                          params_json_path, i, slot.type, slot.name, slot.value_bytes,
                          param.scalar.storage.size());
      }
      std::memcpy(slots[i].bytes.data(), param.scalar.storage.data(), param.scalar.storage.size());
      continue;
    }
    PTXB_ASSIGN_OR_RETURN(std::string host, generate_tensor_bytes(*param.tensor, spec.seed, i));
    void* device = nullptr;
    PTXB_CUDA_CHECK(cudaMalloc(&device, host.size()));  // cudaMalloc: ≥ 256-byte aligned (§3.2)
    buffers.pointers.push_back(device);
    PTXB_CUDA_CHECK(cudaMemcpy(device, host.data(), host.size(), cudaMemcpyHostToDevice));
    std::memcpy(slots[i].bytes.data(), &device, sizeof device);
  }
  std::memcpy(slots.back().bytes.data(), &stream, sizeof stream);
  std::vector<void*> params;
  for (auto& slot : slots) params.push_back(slot.bytes.data());
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());

  for (std::uint64_t i = 0; i < spec.warmup_calls; ++i) {
    candidate.invoke()(params.data());
    const cudaError_t warm = cudaStreamSynchronize(stream);
    if (warm != cudaSuccess)
      return gpu::cuda_call_error(warm, "cudaStreamSynchronize after a warm-up call", __FILE__,
                                  __LINE__);
  }

  // ---- the profiled region: exactly one call ----
  PTXB_CUDA_CHECK(cudaProfilerStart());
  candidate.invoke()(params.data());
  const cudaError_t call_status = cudaStreamSynchronize(stream);
  const cudaError_t stop_status = cudaProfilerStop();
  if (call_status != cudaSuccess) {
    return gpu::cuda_call_error(call_status, "cudaStreamSynchronize after the candidate's call",
                                __FILE__, __LINE__);
  }
  if (stop_status != cudaSuccess)
    return gpu::cuda_call_error(stop_status, "cudaProfilerStop()", __FILE__, __LINE__);
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  PTXB_CUDA_CHECK(cudaStreamDestroy(stream));
  return ok_status();
}

}  // namespace

int run_self_contained(const std::string& so_path, const std::string& params_json_path) {
  Status status = run_once(so_path, params_json_path);
  if (!status.ok()) {
    std::fprintf(stderr, "ptxbench-runner: self-contained call failed: %s\n",
                 status.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "ptxbench-runner: self-contained call completed\n");
  return 0;
}

}  // namespace ptxb
