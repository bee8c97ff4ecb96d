// Kernel and per-device registry behind l2_flush.h.
#include "gpu/l2_flush.h"

#include <map>
#include <memory>
#include <mutex>

#include "gpu/cuda_check.h"
#include "gpu/launch.cuh"

namespace ptxb::gpu {
namespace {

// 16-byte stores: one full 32-byte sector per two threads, so the kernel runs at HBM write
// bandwidth (120 MB at ~4 TB/s ≈ 30 µs on an H200).
__global__ void flush_kernel(uint4* data, std::size_t count, std::uint32_t value) {
  uint4 v = make_uint4(value, value ^ 0x55555555u, value ^ 0xAAAAAAAAu, ~value);
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    data[i] = v;
  }
}

}  // namespace

Result<L2Flusher> L2Flusher::create(int device) {
  int l2_bytes = 0;
  PTXB_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  if (l2_bytes <= 0) {
    return make_error("cuda", "device {} reports an L2 cache size of {} bytes", device, l2_bytes);
  }
  L2Flusher flusher;
  flusher.device_ = device;
  std::size_t bytes = kL2FlushFactor * static_cast<std::size_t>(l2_bytes);
  bytes = (bytes + sizeof(uint4) - 1) / sizeof(uint4) * sizeof(uint4);
  PTXB_ASSIGN_OR_RETURN(flusher.buffer_, DeviceBuffer::create(bytes));
  return Result<L2Flusher>(std::move(flusher));  // explicit: nvcc does not apply P1825
}

Status L2Flusher::flush(cudaStream_t stream) {
  std::size_t count = buffer_.bytes() / sizeof(uint4);
  LaunchShape shape = grid_stride_shape(static_cast<std::int64_t>(count));
  flush_kernel<<<shape.blocks, shape.threads, 0, stream>>>(buffer_.as<uint4>(), count,
                                                           ++generation_);
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

Status flush_l2(cudaStream_t stream) {
  // Function-local statics: constructed on first call, so loading the library touches no GPU.
  // The map is deliberately leaked: freeing device memory from a static destructor would race
  // the CUDA runtime's own teardown at exit.
  static std::mutex mutex;
  static auto* flushers = new std::map<int, std::unique_ptr<L2Flusher>>();
  int device = 0;
  PTXB_CUDA_CHECK(cudaGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  auto it = flushers->find(device);
  if (it == flushers->end()) {
    PTXB_ASSIGN_OR_RETURN(L2Flusher flusher, L2Flusher::create(device));
    it = flushers->emplace(device, std::make_unique<L2Flusher>(std::move(flusher))).first;
  }
  return it->second->flush(stream);
}

}  // namespace ptxb::gpu
