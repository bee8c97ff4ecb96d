// PTXBench knowledge pack, Hopper (sm_90a): warpgroup MMA (wgmma) for bf16 inputs, f32 accumulate.
//
// PTX ISA "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions" (9.7.15).
// One wgmma.mma_async computes D(64xN, f32) (+)= A(64x16, bf16) * B(16xN, bf16) for the 128
// threads of a warpgroup (4 consecutive warps, first warp index a multiple of 4). All 128 threads
// must execute every wgmma.* instruction here with identical descriptors (".sync.aligned").
//
// Lifecycle of one batch (what hangs or corrupts if broken):
//   1. Operands ready: shared tiles written by TMA are visible once their mbarrier phase completed;
//      tiles written by ordinary st.shared need fence_proxy_async_smem() + a barrier first
//      (wgmma reads shared memory through the async proxy, PTX ISA "Async proxy").
//   2. wgmma_fence() before the first wgmma of a batch, and whenever the accumulator or A
//      registers were touched by other instructions since the last wgmma (PTX ISA:
//      "wgmma.fence must be used to fence register accesses"; missing it is undefined behaviour).
//   3. wgmma_bf16_ss / wgmma_bf16_rs ... (asynchronous: they return before the math is done).
//   4. wgmma_commit_group() bundles all uncommitted wgmmas of this thread into one group.
//   5. wgmma_wait_group<N>() blocks until at most N groups are pending. Until then do NOT read or
//      write the accumulators, do not modify the A registers of an RS wgmma, and do not overwrite
//      the shared tiles it reads (e.g. release the smem stage only after the wait).
//   6. wgmma_fence_operand(acc) after the wait, so the compiler cannot hoist accumulator reads
//      above it (the registers are not data-dependent on the wait instruction).
#pragma once

#include <cstdint>

#include "ptxb/hopper/common.cuh"
#include "ptxb/hopper/detail/wgmma_operands.cuh"

namespace ptxb {

// ---- Shared-memory matrix descriptor (PTX ISA 9.7.15.5.1.2.2 "Matrix Descriptor Format") ----
// 64-bit value, identical in all threads of the warpgroup:
//   bits  0-13  start address        (byte address & 0x3FFFF) >> 4
//   bits 16-29  leading byte offset  (LBO) >> 4
//   bits 32-45  stride byte offset   (SBO) >> 4
//   bits 49-51  base offset          0 when the swizzle pattern starts on its repeat boundary
//                                    (1024 / 512 / 256 B for 128B / 64B / 32B), else
//                                    (pattern start address >> 7) & 7; unused without swizzle
//   bits 62-63  swizzle mode         0 none (interleave), 1 = 128B, 2 = 64B, 3 = 32B
// Addresses and offsets are therefore 16-byte granular; tiles must be 16-byte aligned.
//
// K-major operands (A is 64xK row-major, B is NxK "column-major", i.e. both K-contiguous; this is
// imm-trans = 0), element = 2 bytes, "core matrix" = 8 rows x 16 bytes (PTX ISA 9.7.15.5.1.2.1
// "Canonical Layouts", K-major rows):
//   * no swizzle: each core matrix is 128 contiguous bytes (row r at +16*r).
//       LBO = byte distance between the two K-adjacent core matrices (k 0-7 -> k 8-15),
//       SBO = byte distance between M/N-adjacent core matrices (rows 0-7 -> rows 8-15).
//   * 32B/64B/128B swizzle: rows of exactly `span` bytes (16/32/64 bf16 of K), 8 rows form one
//       swizzle atom of 8*span bytes; SBO = distance between 8-row groups (8*span when packed);
//       LBO is unused for K-major and conventionally encoded as 1.
//       Stepping K by 16 elements inside the span = adding 32 bytes to the start address
//       (wgmma_desc_advance); the hardware applies the XOR on the final address, like TMA does.
enum class WgmmaLayoutType : uint64_t { kInterleave = 0, k128B = 1, k64B = 2, k32B = 3 };

__host__ __device__ constexpr uint64_t wgmma_desc_field(uint32_t bytes) {
  return static_cast<uint64_t>((bytes & 0x3FFFF) >> 4);
}

__host__ __device__ constexpr WgmmaLayoutType wgmma_layout_type(SmemSwizzle swizzle) {
  return swizzle == SmemSwizzle::k128B  ? WgmmaLayoutType::k128B
         : swizzle == SmemSwizzle::k64B ? WgmmaLayoutType::k64B
         : swizzle == SmemSwizzle::k32B ? WgmmaLayoutType::k32B
                                        : WgmmaLayoutType::kInterleave;
}

// Generic descriptor from raw fields. `smem_addr` is a 32-bit shared address (smem_u32).
__host__ __device__ constexpr uint64_t make_wgmma_desc(uint32_t smem_addr, uint32_t lbo_bytes,
                                                       uint32_t sbo_bytes, SmemSwizzle swizzle,
                                                       uint32_t base_offset = 0) {
  return wgmma_desc_field(smem_addr) | (wgmma_desc_field(lbo_bytes) << 16) |
         (wgmma_desc_field(sbo_bytes) << 32) | (static_cast<uint64_t>(base_offset & 7) << 49) |
         (static_cast<uint64_t>(wgmma_layout_type(swizzle)) << 62);
}

// Canonical K-major tile, swizzled: rows of exactly `span` bytes, 8-row groups packed
// (SBO = 8 * span). `tile` must be aligned to 8 * span bytes (TMA with the same swizzle and a
// box inner dimension of `span` bytes produces exactly this layout).
template <SmemSwizzle kSwizzle>
PTXB_DEVICE uint64_t make_wgmma_desc_kmajor(const void* tile) {
  static_assert(kSwizzle != SmemSwizzle::kNone, "use make_wgmma_desc_kmajor_interleave");
  constexpr uint32_t span = static_cast<uint32_t>(kSwizzle);
  return make_wgmma_desc(smem_u32(tile), 16, 8 * span, kSwizzle);
}

// Canonical K-major tile without swizzle: 8x16-byte core matrices of 128 contiguous bytes;
// `lbo_bytes` between K-adjacent core matrices, `sbo_bytes` between M/N-adjacent ones.
PTXB_DEVICE uint64_t make_wgmma_desc_kmajor_interleave(const void* tile, uint32_t lbo_bytes,
                                                       uint32_t sbo_bytes) {
  return make_wgmma_desc(smem_u32(tile), lbo_bytes, sbo_bytes, SmemSwizzle::kNone);
}

// Moves the start address by `bytes` (multiple of 16), e.g. +32 per K step of 16 bf16 inside a
// swizzled row, or +2*LBO per K step in the interleaved layout.
__host__ __device__ constexpr uint64_t wgmma_desc_advance(uint64_t desc, uint32_t bytes) {
  return desc + static_cast<uint64_t>(bytes >> 4);
}

// ---- Ordering primitives (PTX ISA 9.7.15.6 / 9.7.15.7 / 9.7.15.8) ----
PTXB_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
PTXB_DEVICE void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most kPending committed groups of this thread are still in flight.
template <int kPending>
PTXB_DEVICE void wgmma_wait_group() {
  static_assert(kPending >= 0 && kPending <= 7, "wgmma.wait_group takes an immediate 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Compiler-only fence on accumulator/A registers: forces the value to be materialised in a
// register at this point, so reads are not hoisted above a wait and writes not sunk below a
// wgmma. Emits no instruction.
PTXB_DEVICE void wgmma_fence_operand(float& reg) { asm volatile("" : "+f"(reg)::"memory"); }
PTXB_DEVICE void wgmma_fence_operand(uint32_t& reg) { asm volatile("" : "+r"(reg)::"memory"); }
template <int kCount>
PTXB_DEVICE void wgmma_fence_operand(float (&regs)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) wgmma_fence_operand(regs[i]);
}
template <int kCount>
PTXB_DEVICE void wgmma_fence_operand(uint32_t (&regs)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) wgmma_fence_operand(regs[i]);
}

// ---- wgmma.mma_async m64nNk16 .f32.bf16.bf16 ----
namespace detail {
template <int N>
struct WgmmaBf16;

// SS: "{d...}, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b"
// RS: "{d...}, {a0..a3}, b-desc, scale-d, imm-scale-a, imm-scale-b, imm-trans-b"
// scale-d is a predicate: false computes D = A*B (accumulator ignored), true D = A*B + D.
#define PTXB_STR_(x) #x
#define PTXB_STR(x) PTXB_STR_(x)
#define PTXB_WGMMA_SPECIALIZE(N, R, o0, o1, o2, o3, o4, o5, o6, o7, o8)                        \
  template <>                                                                                  \
  struct WgmmaBf16<N> {                                                                        \
    template <int kScaleA, int kScaleB, int kTransA, int kTransB>                              \
    static PTXB_DEVICE void ss(float (&d)[R], uint64_t desc_a, uint64_t desc_b,                \
                               uint32_t scale_d) {                                             \
      asm volatile(                                                                            \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %" #o2 ", 0;\n"                                    \
          "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 {" PTXB_WGMMA_ACC_##R     \
          "}, %" #o0 ", %" #o1 ", p, %" #o3 ", %" #o4 ", %" #o5 ", %" #o6 ";\n}\n"             \
          : PTXB_WGMMA_OUT_##R(d)                                                              \
          : "l"(desc_a), "l"(desc_b), "r"(scale_d), "n"(kScaleA), "n"(kScaleB), "n"(kTransA), \
            "n"(kTransB)                                                                       \
          : "memory");                                                                         \
    }                                                                                          \
    template <int kScaleA, int kScaleB, int kTransB>                                           \
    static PTXB_DEVICE void rs(float (&d)[R], const uint32_t (&a)[4], uint64_t desc_b,         \
                               uint32_t scale_d) {                                             \
      asm volatile(                                                                            \
          "{\n.reg .pred p;\nsetp.ne.b32 p, %" #o5 ", 0;\n"                                    \
          "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 {" PTXB_WGMMA_ACC_##R     \
          "}, {%" #o0 ", %" #o1 ", %" #o2 ", %" #o3 "}, %" #o4 ", p, %" #o6 ", %" #o7          \
          ", %" #o8 ";\n}\n"                                                                   \
          : PTXB_WGMMA_OUT_##R(d)                                                              \
          : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d),             \
            "n"(kScaleA), "n"(kScaleB), "n"(kTransB)                                           \
          : "memory");                                                                         \
    }                                                                                          \
  };
PTXB_WGMMA_FOR_EACH_N(PTXB_WGMMA_SPECIALIZE)
#undef PTXB_WGMMA_SPECIALIZE
}  // namespace detail

// D(64xN) (+)= A(64x16) * B(16xN), A and B from shared memory through descriptors.
//   d:          N/2 f32 accumulators per thread. Fragment layout (PTX ISA figure "WGMMA .m64nNk16
//               register fragment layout for accumulator matrix D"): thread t of the warpgroup,
//               warp w = t/32, lane l = t%32, register i holds
//                 row = 16*w + l/4 + 8*((i/2)%2),  col = 8*(i/4) + 2*(l%4) + (i%2).
//   accumulate: false -> D = A*B (initial contents ignored), true -> D += A*B.
//   kScaleA/B:  1, or -1 to negate A / B.
//   kTransA/B:  0 = K-major (A row-major MxK, B stored NxK with K contiguous); 1 = M-/N-major
//               (A stored KxM, B stored KxN with M/N contiguous); the descriptor must then
//               describe the MN-major canonical layout.
template <int N, int kScaleA = 1, int kScaleB = 1, int kTransA = 0, int kTransB = 0>
PTXB_DEVICE void wgmma_bf16_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                               bool accumulate) {
  static_assert(N >= 8 && N <= 256 && N % 8 == 0, "wgmma m64nNk16: N in {8, 16, ..., 256}");
  static_assert((kScaleA == 1 || kScaleA == -1) && (kScaleB == 1 || kScaleB == -1),
                "imm-scale-a/b are 1 or -1 (negate)");
  static_assert((kTransA == 0 || kTransA == 1) && (kTransB == 0 || kTransB == 1), "imm-trans 0/1");
  detail::WgmmaBf16<N>::template ss<kScaleA, kScaleB, kTransA, kTransB>(d, desc_a, desc_b,
                                                                       accumulate ? 1u : 0u);
}

// RS form: A from registers (always K-major), B from shared memory.
//   a: 4 registers, each two bf16 (low half = lower column), PTX ISA figure "WGMMA .m64nNk16
//      register fragment layout for matrix A": thread t, w = t/32, l = t%32,
//        a[0] = A[16w + l/4    ][2(l%4) + {0,1}]     a[1] = A[16w + l/4 + 8][2(l%4) + {0,1}]
//        a[2] = A[16w + l/4    ][2(l%4) + 8 + {0,1}] a[3] = A[16w + l/4 + 8][2(l%4) + 8 + {0,1}]
//      (the same per-warp layout as mma.m16n8k16's A; an m64nNk16 accumulator converted with
//      pack_bf16x2 for columns 16j..16j+15 is exactly an A fragment: the FA3 "P in registers").
//   The A registers must stay unchanged until the wgmma completes (wgmma_wait_group).
template <int N, int kScaleA = 1, int kScaleB = 1, int kTransB = 0>
PTXB_DEVICE void wgmma_bf16_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                               bool accumulate) {
  static_assert(N >= 8 && N <= 256 && N % 8 == 0, "wgmma m64nNk16: N in {8, 16, ..., 256}");
  static_assert((kScaleA == 1 || kScaleA == -1) && (kScaleB == 1 || kScaleB == -1),
                "imm-scale-a/b are 1 or -1 (negate)");
  static_assert(kTransB == 0 || kTransB == 1, "imm-trans-b 0/1");
  detail::WgmmaBf16<N>::template rs<kScaleA, kScaleB, kTransB>(d, a, desc_b,
                                                               accumulate ? 1u : 0u);
}

}  // namespace ptxb
