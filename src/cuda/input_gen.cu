// Kernels behind input_gen.h: counter-based normal generator and poison fill.
#include "cuda/input_gen.h"

#include <cuda_bf16.h>

#include "cuda/cuda_check.h"
#include "cuda/launch.cuh"

namespace ptxb::gpu {
namespace {

// SplitMix64 finalizer (Steele, Lea, Flood 2014): a bijection on 64-bit words with full
// avalanche, used here as a stateless hash of a counter.
__host__ __device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Two standard normals from one 64-bit hash (Box–Muller).
__device__ inline float2 normal_pair(std::uint64_t bits) {
  constexpr float kTwoPow24Inv = 1.0f / 16777216.0f;
  // u1 in (0, 1]: never 0, so logf stays finite. u2 in [0, 1).
  float u1 = (static_cast<float>(bits >> 40) + 1.0f) * kTwoPow24Inv;
  float u2 = static_cast<float>(bits & 0xFFFFFFu) * kTwoPow24Inv;
  float radius = sqrtf(-2.0f * logf(u1));
  float s = 0.0f;
  float c = 0.0f;
  sincospif(2.0f * u2, &s, &c);  // sin/cos(2πu2) without rounding 2π first
  return make_float2(radius * c, radius * s);
}

template <typename T>
__device__ inline T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) {
  return v;
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

template <typename T>
__global__ void fill_normal_kernel(T* data, std::int64_t count, std::uint64_t key, float mean,
                                   float stddev) {
  std::int64_t pairs = (count + 1) / 2;
  for (std::int64_t p = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; p < pairs;
       p += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float2 z = normal_pair(splitmix64(key ^ splitmix64(static_cast<std::uint64_t>(p))));
    std::int64_t i = 2 * p;
    data[i] = from_float<T>(mean + stddev * z.x);
    if (i + 1 < count) data[i + 1] = from_float<T>(mean + stddev * z.y);
  }
}

template <typename T>
__global__ void fill_pattern_kernel(T* data, std::int64_t count, T pattern) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    data[i] = pattern;
  }
}

}  // namespace

Status fill_normal(void* data, DType dtype, std::int64_t count, std::uint64_t seed,
                   std::uint64_t tensor_index, cudaStream_t stream, float mean, float stddev) {
  if (count < 0) return make_error("invalid_argument", "fill_normal: negative count {}", count);
  if (count == 0) return ok_status();
  // Key derivation: hashing the seed before mixing in the tensor index keeps (seed, t) and
  // (seed', t') streams unrelated even when seed ^ seed' == t ^ t'.
  std::uint64_t key = splitmix64(splitmix64(seed) ^ (tensor_index * 0xD6E8FEB86659FD93ull));
  std::int64_t pairs = (count + 1) / 2;
  LaunchShape shape = grid_stride_shape(pairs);
  switch (dtype) {
    case DType::kBFloat16:
      fill_normal_kernel<<<shape.blocks, shape.threads, 0, stream>>>(
          static_cast<__nv_bfloat16*>(data), count, key, mean, stddev);
      break;
    case DType::kFloat32:
      fill_normal_kernel<<<shape.blocks, shape.threads, 0, stream>>>(static_cast<float*>(data),
                                                                     count, key, mean, stddev);
      break;
    default:
      return make_error("invalid_argument", "fill_normal: unsupported dtype {}", dtype_name(dtype));
  }
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

std::uint32_t poison_pattern(DType dtype, int trial) {
  // Quiet NaNs with payloads that arithmetic never produces (see input_gen.h). Even and odd
  // trials differ in sign and payload.
  bool odd = (trial & 1) != 0;
  if (trial >= kVariedPoisonFrom) {
    // Quiet NaN, sign from the low bit, a payload from the rest that is neither zero nor all
    // ones: the canonical NaNs arithmetic produces (0x7FC0, 0x7FFF from an fp32 0x7FFFFFFF,
    // 0x7FFFFFFF) never equal a poison, so a NaN output stays `nonfinite_output`. bf16 has 6
    // free payload bits, fp16 9, fp32 22.
    const auto mix = static_cast<std::uint32_t>(
        (static_cast<std::uint64_t>(trial) >> 1) * 0x9e3779b97f4a7c15ull >> 40);
    const std::uint32_t sign16 = odd ? 0x8000u : 0u;
    switch (dtype_size_bytes(dtype)) {
      case 2:
        if (dtype == DType::kFloat16) return sign16 | 0x7E00u | (1u + mix % 0x1FEu);
        return sign16 | 0x7FC0u | (1u + mix % 0x3Eu);
      default:
        return (odd ? 0x80000000u : 0u) | 0x7FC00000u | (1u + mix % 0x3FFFFEu);
    }
  }
  switch (dtype_size_bytes(dtype)) {
    case 2:
      if (dtype == DType::kFloat16) return odd ? 0xFE93u : 0x7E5Au;
      return odd ? 0xFFD3u : 0x7FE5u;  // bf16 (and any other 16-bit type)
    default:
      return odd ? 0xFFD35A5Au : 0x7FC5A5A5u;  // fp32 and other 32-bit types
  }
}

Status fill_pattern(void* data, int element_bytes, std::int64_t count, std::uint32_t pattern,
                    cudaStream_t stream) {
  if (count < 0) return make_error("invalid_argument", "fill_pattern: negative count {}", count);
  if (count == 0) return ok_status();
  LaunchShape shape = grid_stride_shape(count);
  if (element_bytes == 2) {
    fill_pattern_kernel<<<shape.blocks, shape.threads, 0, stream>>>(
        static_cast<std::uint16_t*>(data), count, static_cast<std::uint16_t>(pattern));
  } else if (element_bytes == 4) {
    fill_pattern_kernel<<<shape.blocks, shape.threads, 0, stream>>>(
        static_cast<std::uint32_t*>(data), count, pattern);
  } else {
    return make_error("invalid_argument", "fill_pattern: element size {} is not 2 or 4",
                      element_bytes);
  }
  PTXB_CUDA_CHECK_LAUNCH();
  return ok_status();
}

Status fill_poison(void* data, DType dtype, std::int64_t count, int trial, cudaStream_t stream) {
  return fill_pattern(data, static_cast<int>(dtype_size_bytes(dtype)), count,
                      poison_pattern(dtype, trial), stream);
}

}  // namespace ptxb::gpu
