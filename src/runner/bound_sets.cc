#include "runner/bound_sets.h"

#include <cstring>
#include <map>

#include "cuda/cuda_check.h"

namespace ptxb {

void BoundSets::release() {
  for (void* pointer : opened_) cudaIpcCloseMemHandle(pointer);  // best effort at teardown
  opened_.clear();
  sets_.clear();
  mapped_bytes_ = 0;
}

Status BoundSets::bind(const BindRequest& request, const std::vector<ParamSlot>& layout,
                       cudaStream_t stream) {
  release();
  if (layout.empty() || !layout.back().is_stream)
    return make_error("abi", "bind: layout without a stream");
  for (std::size_t s = 0; s < request.sets.size(); ++s) {
    Status matches = check_set_against_layout(layout, request.sets[s]);
    if (!matches.ok()) return matches.error().with_context(fmt::format("bind: set {}", s));
  }
  std::vector<void*> buffer_pointers(request.buffers.size(), nullptr);
  std::map<std::array<std::uint8_t, 64>, void*> by_handle;
  for (std::size_t b = 0; b < request.buffers.size(); ++b) {
    const IpcBuffer& buffer = request.buffers[b];
    auto known = by_handle.find(buffer.handle);
    if (known != by_handle.end()) {
      buffer_pointers[b] = known->second;
      continue;
    }
    cudaIpcMemHandle_t handle;
    static_assert(sizeof(handle) == 64, "cudaIpcMemHandle_t is CUDA_IPC_HANDLE_SIZE (64) bytes");
    std::memcpy(&handle, buffer.handle.data(), sizeof(handle));
    void* pointer = nullptr;
    const cudaError_t status =
        cudaIpcOpenMemHandle(&pointer, handle, cudaIpcMemLazyEnablePeerAccess);
    if (status != cudaSuccess) {
      return gpu::cuda_call_error(status, "cudaIpcOpenMemHandle", __FILE__, __LINE__)
          .with_context(fmt::format("bind: buffer {}", b));
    }
    opened_.push_back(pointer);
    by_handle.emplace(buffer.handle, pointer);
    buffer_pointers[b] = pointer;
    mapped_bytes_ += buffer.bytes;
  }
  for (const auto& values : request.sets) {
    Set set;
    set.slots.resize(layout.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].is_buffer) {
        void* pointer = static_cast<char*>(buffer_pointers[values[i].buffer]) + values[i].offset;
        std::memcpy(set.slots[i].bytes.data(), &pointer, sizeof pointer);
      } else {
        std::memcpy(set.slots[i].bytes.data(), values[i].storage.data(), values[i].storage.size());
      }
    }
    std::memcpy(set.slots.back().bytes.data(), &stream, sizeof stream);  // the runner's stream
    for (auto& slot : set.slots) set.params.push_back(slot.bytes.data());
    sets_.push_back(std::move(set));
  }
  return ok_status();
}

}  // namespace ptxb
