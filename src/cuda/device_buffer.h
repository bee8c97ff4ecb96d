// RAII device memory and CUDA events for the trusted side of the evaluator.
//
// DeviceBuffer owns one cudaMalloc allocation. cudaMalloc returns addresses aligned to at least
// 256 bytes (CUDA C++ Programming Guide, "Device Memory Accesses"), which is the alignment the
// solution ABI promises candidates (design.md §3.2), so every tensor gets its own buffer.
// Construction goes through create() so that an allocation failure is a Result, not a throw;
// a moved-from or default buffer is empty and frees nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda_runtime_api.h>

#include "core/result.h"
#include "trace/dtype.h"

namespace ptxb::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Allocates `bytes` on the current device (a zero-byte request gives an empty buffer).
  // The contents are uninitialized.
  static Result<DeviceBuffer> create(std::size_t bytes);
  // Allocates `count` elements of `dtype`.
  static Result<DeviceBuffer> create(DType dtype, std::int64_t count);

  void* data() const { return data_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  std::size_t bytes() const { return bytes_; }
  bool empty() const { return data_ == nullptr; }

  // Frees the allocation (errors from cudaFree are ignored: a destructor has nobody to tell,
  // and a sticky error resurfaces at the next checked call anyway).
  void reset();

 private:
  DeviceBuffer(void* data, std::size_t bytes) : data_(data), bytes_(bytes) {}

  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

// A pair of CUDA events bracketing work on one stream, for coarse timing that is not the
// evaluator's timing contract (algorithm autotuning in prepare(), test prints). The
// contract's device times come from CUPTI activity records (design.md §3.4).
class EventTimer {
 public:
  EventTimer() = default;
  ~EventTimer();
  EventTimer(EventTimer&& other) noexcept
      : start_(std::exchange(other.start_, nullptr)), stop_(std::exchange(other.stop_, nullptr)) {}
  EventTimer& operator=(EventTimer&&) = delete;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  static Result<EventTimer> create();

  Status start(cudaStream_t stream);
  Status stop(cudaStream_t stream);
  // Waits for the stop event and returns the elapsed milliseconds between the two events.
  Result<float> elapsed_ms();

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

// Number of elements of a tensor whose dimensions are `dims`; an error when a dimension is
// negative or the product overflows int64.
Result<std::int64_t> element_count(std::initializer_list<std::int64_t> dims);

}  // namespace ptxb::gpu
