// Launch-shape helpers and block reductions shared by the evaluator's own kernels (input
// generation, poison, comparison, hashing, plain references). Device-only code: include from
// .cu files.
#pragma once

#include <cstdint>

namespace ptxb::gpu {

struct LaunchShape {
  unsigned int blocks;
  unsigned int threads;
};

// A grid-stride launch for `work_items` independent items: 256 threads per block and at most
// 132 SMs x 16 blocks (H200) — enough to saturate HBM for the memory-bound helper kernels,
// few enough that per-block atomics in reductions stay cheap. Never zero blocks.
inline LaunchShape grid_stride_shape(std::int64_t work_items) {
  constexpr std::int64_t kThreads = 256;
  constexpr std::int64_t kMaxBlocks = 132 * 16;
  std::int64_t blocks = (work_items + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return LaunchShape{static_cast<unsigned int>(blocks), static_cast<unsigned int>(kThreads)};
}

inline constexpr unsigned int kFullWarpMask = 0xFFFFFFFFu;

template <typename T, typename Op>
__device__ inline T warp_reduce(T value, Op op) {
  for (int offset = 16; offset > 0; offset /= 2) {
    value = op(value, __shfl_xor_sync(kFullWarpMask, value, offset));
  }
  return value;
}

// Reduces `value` over the block with `op`; every thread gets the result. `scratch` must hold
// 32 elements; blockDim.x must be a multiple of 32. Contains __syncthreads(): call from all
// threads of the block.
template <typename T, typename Op>
__device__ inline T block_reduce(T value, Op op, T* scratch) {
  const unsigned int lane = threadIdx.x % 32;
  const unsigned int warp = threadIdx.x / 32;
  const unsigned int warps = blockDim.x / 32;
  value = warp_reduce(value, op);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  T total = scratch[0];
  for (unsigned int w = 1; w < warps; ++w) total = op(total, scratch[w]);
  return total;
}

struct MaxOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};
struct SumOp {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

}  // namespace ptxb::gpu
