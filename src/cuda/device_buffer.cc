#include "cuda/device_buffer.h"

#include <limits>

#include "cuda/cuda_check.h"

namespace ptxb::gpu {

Result<DeviceBuffer> DeviceBuffer::create(std::size_t bytes) {
  if (bytes == 0) return DeviceBuffer();
  void* data = nullptr;
  PTXB_CUDA_CHECK(cudaMalloc(&data, bytes));
  return DeviceBuffer(data, bytes);
}

Result<DeviceBuffer> DeviceBuffer::create(DType dtype, std::int64_t count) {
  if (count < 0) return make_error("invalid_argument", "negative element count {}", count);
  std::size_t element = dtype_size_bytes(dtype);
  if (static_cast<std::uint64_t>(count) > std::numeric_limits<std::size_t>::max() / element) {
    return make_error("invalid_argument", "{} elements of {} overflow size_t", count,
                      dtype_name(dtype));
  }
  return create(static_cast<std::size_t>(count) * element);
}

void DeviceBuffer::reset() {
  if (data_ != nullptr) cudaFree(data_);
  data_ = nullptr;
  bytes_ = 0;
}

EventTimer::~EventTimer() {
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
}

Result<EventTimer> EventTimer::create() {
  EventTimer timer;
  PTXB_CUDA_CHECK(cudaEventCreate(&timer.start_));
  PTXB_CUDA_CHECK(cudaEventCreate(&timer.stop_));
  return timer;
}

Status EventTimer::start(cudaStream_t stream) {
  PTXB_CUDA_CHECK(cudaEventRecord(start_, stream));
  return ok_status();
}

Status EventTimer::stop(cudaStream_t stream) {
  PTXB_CUDA_CHECK(cudaEventRecord(stop_, stream));
  return ok_status();
}

Result<float> EventTimer::elapsed_ms() {
  PTXB_CUDA_CHECK(cudaEventSynchronize(stop_));
  float ms = 0.0f;
  PTXB_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
  return ms;
}

Result<std::int64_t> element_count(std::initializer_list<std::int64_t> dims) {
  std::int64_t count = 1;
  for (std::int64_t dim : dims) {
    if (dim < 0) return make_error("invalid_argument", "negative dimension {}", dim);
    if (dim != 0 && count > std::numeric_limits<std::int64_t>::max() / dim) {
      return make_error("invalid_argument", "tensor element count overflows int64");
    }
    count *= dim;
  }
  return count;
}

}  // namespace ptxb::gpu
