// PTXBench knowledge pack, Hopper (sm_90a): shared helpers for every wrapper header.
//
// All device wrappers are `__device__ __forceinline__` functions around one inline-PTX
// statement. Conventions used throughout the pack:
//   * Shared-memory operands are passed as generic pointers and converted here to 32-bit
//     shared-window addresses (PTX ISA "State spaces": the .shared window is addressed with
//     32-bit offsets; `cvta.to.shared` is what __cvta_generic_to_shared emits).
//   * `asm volatile` + "memory" clobber wherever the instruction orders, reads or writes memory
//     that the compiler cannot see through the operands (mbarriers, async copies, fences): the
//     clobber stops the compiler from moving ordinary loads/stores across the instruction, and
//     `volatile` stops it from deleting or merging the statement.
//   * Host helpers report failures on stderr naming the call and the error string.
#pragma once

#include <cstdint>

#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL) && \
    !defined(__CUDA_ARCH_SPECIFIC__) && !defined(__CUDA_ARCH_FAMILY_SPECIFIC__)
// wgmma, setmaxnreg and multicast TMA exist only on arch-specific targets (sm_90a, sm_100a):
// compile with -gencode arch=compute_90a,code=sm_90a (plain sm_90 rejects them).
#error "ptxb pack headers need an arch-specific target: -gencode arch=compute_90a,code=sm_90a"
#endif

#define PTXB_DEVICE __device__ __forceinline__

namespace ptxb {

// 32-bit address of a shared-memory object, as PTX .shared instructions expect it.
PTXB_DEVICE uint32_t smem_u32(const void* ptr) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(ptr));
}

// Shared-memory swizzle modes, named by the span (bytes) inside which 16-byte chunks are permuted.
// The same pattern is produced by TMA (CU_TENSOR_MAP_SWIZZLE_*) and consumed by wgmma/tcgen05
// descriptors: chunk index (address bits 4..6) XOR row-in-pattern (address bits 7..9), masked to
// log2(span/16) bits. The pattern is a function of the absolute shared-memory address, so a
// swizzled buffer must start on a multiple of its repeat (8 x span: 256 / 512 / 1024 bytes) for
// TMA and the MMA descriptor to agree with a zero descriptor base offset.
enum class SmemSwizzle : int { kNone = 0, k32B = 32, k64B = 64, k128B = 128 };

// Byte offset of the 16-bit element (row, col) in a K-major tile whose rows are `span` bytes
// wide and that starts at a repeat-aligned address, after the hardware swizzle. Host and device.
__host__ __device__ constexpr uint32_t swizzled_offset(SmemSwizzle swizzle, uint32_t row_bytes,
                                                       uint32_t row, uint32_t byte_in_row) {
  const uint32_t linear = row * row_bytes + byte_in_row;
  const uint32_t span = static_cast<uint32_t>(swizzle);
  if (span == 0) return linear;
  const uint32_t mask = span / 16 - 1;  // 1, 3 or 7 chunk bits
  return linear ^ (((linear >> 7) & mask) << 4);
}

}  // namespace ptxb
