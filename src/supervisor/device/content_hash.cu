// Kernel behind content_hash.h.
#include "supervisor/device/content_hash.h"

#include "cuda/cuda_check.h"
#include "cuda/launch.cuh"

namespace ptxb::gpu {
namespace {

__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  // SplitMix64 finalizer (Steele, Lea, Flood 2014).
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Word `w` of the buffer, little-endian, zero-padded past `bytes`.
template <bool kAligned>
__device__ inline std::uint64_t load_word(const unsigned char* data, std::size_t bytes,
                                          std::size_t w) {
  std::size_t offset = w * 8;
  if (kAligned && offset + 8 <= bytes) {
    return reinterpret_cast<const std::uint64_t*>(data)[w];
  }
  std::uint64_t word = 0;
  for (std::size_t b = 0; b < 8 && offset + b < bytes; ++b) {
    word |= static_cast<std::uint64_t>(data[offset + b]) << (8 * b);
  }
  return word;
}

template <bool kAligned>
__global__ void hash_kernel(const unsigned char* data, std::size_t bytes, unsigned long long* sum) {
  __shared__ unsigned long long scratch[32];
  unsigned long long local = 0;
  std::size_t words = (bytes + 7) / 8;
  for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words;
       w += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    local += mix64(load_word<kAligned>(data, bytes, w) ^ mix64(w));
  }
  local = block_reduce(local, SumOp{}, scratch);
  if (threadIdx.x == 0) atomicAdd(sum, local);  // wraps modulo 2^64, as intended
}

}  // namespace

Result<std::uint64_t> device_content_hash(const void* data, std::size_t bytes,
                                          cudaStream_t stream) {
  unsigned long long sum = 0;
  if (bytes > 0) {
    unsigned long long* device_sum = nullptr;
    PTXB_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&device_sum), sizeof(sum), stream));
    PTXB_CUDA_CHECK(cudaMemsetAsync(device_sum, 0, sizeof(sum), stream));
    LaunchShape shape = grid_stride_shape(static_cast<std::int64_t>((bytes + 7) / 8));
    const auto* bytes_ptr = static_cast<const unsigned char*>(data);
    if (reinterpret_cast<std::uintptr_t>(data) % 8 == 0) {
      hash_kernel<true><<<shape.blocks, shape.threads, 0, stream>>>(bytes_ptr, bytes, device_sum);
    } else {
      hash_kernel<false><<<shape.blocks, shape.threads, 0, stream>>>(bytes_ptr, bytes, device_sum);
    }
    cudaError_t launch = cudaGetLastError();
    PTXB_CUDA_CHECK(cudaMemcpyAsync(&sum, device_sum, sizeof(sum), cudaMemcpyDeviceToHost, stream));
    PTXB_CUDA_CHECK(cudaFreeAsync(device_sum, stream));
    PTXB_CUDA_CHECK(cudaStreamSynchronize(stream));
    PTXB_CUDA_CHECK(launch);
  }
  // The length enters last, so buffers that differ only by trailing zero bytes differ.
  return mix64(sum ^ mix64(static_cast<std::uint64_t>(bytes) + 0x5851F42D4C957F2Dull));
}

}  // namespace ptxb::gpu
