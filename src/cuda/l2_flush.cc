#include "cuda/l2_flush.h"

#include <algorithm>

#include "cuda/cuda_check.h"

namespace ptxb {

L2Flush::~L2Flush() {
  if (buffer_ != nullptr) cudaFree(buffer_);
}

Status L2Flush::allocate(std::uint64_t l2_bytes) {
  const std::uint64_t bytes = std::max<std::uint64_t>(kL2FlushMultiple * l2_bytes, 1u << 20);
  PTXB_CUDA_CHECK(cudaMalloc(&buffer_, bytes));
  bytes_ = bytes;
  return ok_status();
}

Status L2Flush::allocate_for_current_device() {
  int device = 0;
  PTXB_CUDA_CHECK(cudaGetDevice(&device));
  int l2_bytes = 0;
  PTXB_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  if (l2_bytes <= 0)
    return make_error("cuda", "device {} reports an L2 cache size of {} bytes", device, l2_bytes);
  return allocate(static_cast<std::uint64_t>(l2_bytes));
}

cudaError_t L2Flush::flush(cudaStream_t stream) {
  cudaError_t status = cudaMemsetAsync(buffer_, next_value_, bytes_, stream);
  next_value_ = static_cast<unsigned char>(next_value_ == 255 ? 1 : next_value_ + 1);
  if (status != cudaSuccess) return status;
  return cudaStreamSynchronize(stream);
}

}  // namespace ptxb
