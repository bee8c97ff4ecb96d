// PTXBench knowledge pack, Blackwell (sm_100a; B200): 5th-generation tensor core (tcgen05).
//
// PTX ISA 9.7.16 "TensorCore 5th Generation Family Instructions". Model:
//   * Accumulators live in Tensor Memory (TMEM): 128 lanes x 512 columns of 32-bit cells per
//     CTA, addressed by a 32-bit value (lane << 16) | column (PTX ISA 9.7.16.1.1 "Tensor Memory
//     Addressing"). One warp allocates columns (power of two, 32..512), writes the base address
//     to shared memory, and the same warp must free them before the CTA exits.
//   * tcgen05.mma is issued by ONE thread; it reads A and B from shared memory through 64-bit
//     descriptors (or A from TMEM) and accumulates D in TMEM asynchronously. Completion is
//     signalled by tcgen05.commit onto an mbarrier (arrive::one), which tracks all prior async
//     tcgen05 operations of the issuing thread.
//   * Warp w of a warpgroup can access TMEM lanes 32*(w%4) .. 32*(w%4)+31 only (PTX ISA
//     9.7.16.8.1 "Access restrictions"): the epilogue needs 4 warps to read a 128-lane tile.
//   * Ordering across threads goes through the usual barriers bracketed by
//     tcgen05_fence_before_thread_sync() / tcgen05_fence_after_thread_sync() (PTX ISA 9.7.16.6.3
//     "Specialized inter-thread synchronization"): e.g. MMA thread: mma...; commit(bar).
//     Epilogue: mbar_wait(bar); tcgen05_fence_after_thread_sync(); tmem_ld...; tmem_wait_ld().
// cta_group::2: a CTA pair (ranks 2i, 2i+1 of a cluster) computes one M=256 (or 128) tile, each
// CTA holding half of A and of D in its own TMEM and shared memory; the instructions are issued
// by the even CTA only, and alloc/dealloc must be executed by one warp of EACH CTA of the pair.
#pragma once

#include <cstdint>

#include "ptxb/blackwell/detail/tmem_operands.cuh"
#include "ptxb/hopper/common.cuh"

namespace ptxb {

// ---- TMEM allocation (PTX ISA 9.7.16.7.1 "tcgen05.alloc, tcgen05.dealloc,
//      tcgen05.relinquish_alloc_permit") ----
// Executed by all 32 threads of one warp. `ncols`: power of two in [32, 512]. The TMEM address
// is written to `smem_result` (4 bytes of shared memory); read it after a barrier bracketed by
// tcgen05 fences. alloc blocks while the columns are taken by other CTAs on the SM.
template <int kCtaGroup = 1>
PTXB_DEVICE void tmem_alloc(uint32_t* smem_result, uint32_t ncols) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2, "cta_group::1 or ::2");
  if constexpr (kCtaGroup == 1) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(
                     smem_u32(smem_result)), "r"(ncols) : "memory");
  } else {
    asm volatile("tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(
                     smem_u32(smem_result)), "r"(ncols) : "memory");
  }
}
// Frees columns allocated by tmem_alloc (same warp, same ncols). All tcgen05 work reading or
// writing them must be complete (mbarrier of the last commit waited, tmem_wait_ld/st done).
template <int kCtaGroup = 1>
PTXB_DEVICE void tmem_dealloc(uint32_t tmem_addr, uint32_t ncols) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2, "cta_group::1 or ::2");
  if constexpr (kCtaGroup == 1) {
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(tmem_addr),
                 "r"(ncols) : "memory");
  } else {
    asm volatile("tcgen05.dealloc.cta_group::2.sync.aligned.b32 %0, %1;" ::"r"(tmem_addr),
                 "r"(ncols) : "memory");
  }
}
// Promises this CTA will not allocate again, letting CTAs waiting in tmem_alloc proceed.
template <int kCtaGroup = 1>
PTXB_DEVICE void tmem_relinquish_alloc_permit() {
  if constexpr (kCtaGroup == 1) {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  } else {
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::2.sync.aligned;" ::: "memory");
  }
}

// ---- Instruction descriptor, .kind::f16 (PTX ISA 9.7.16.4.2 "Instruction descriptor",
//      table for .kind::tf32/.kind::f16/.kind::f8f6f4/.kind::i8) ----
// 32-bit value:
//   bits 0-1  sparsity selector (0)        bit 2   sparsity (0 = dense)   bit 3 saturate (0)
//   bits 4-5  D type: 0 = F16, 1 = F32     bit 6   reserved
//   bits 7-9  A type: 0 = F16, 1 = BF16    bits 10-12 B type (same coding)
//   bit 13    negate A                     bit 14  negate B
//   bit 15    transpose A (0 = K-major)    bit 16  transpose B (0 = K-major)
//   bits 17-22 N >> 3                      bit 23  reserved
//   bits 24-28 M >> 4                      bit 29  reserved   bits 30-31 max shift (.ws only, 0)
// Valid shapes, dense kind::f16: cta_group::1 M = 64 or 128 with N = 8..256 step 8 (M = 64
// needs N % 8 == 0, M = 128 N % 16 == 0); cta_group::2 M = 128 or 256 with N = 16..256 step 16.
// K is 16 per instruction.
__host__ __device__ constexpr uint32_t make_idesc_bf16_f32(uint32_t m, uint32_t n,
                                                           bool a_mn_major = false,
                                                           bool b_mn_major = false,
                                                           bool negate_a = false,
                                                           bool negate_b = false) {
  return (1u << 4)                                  // D = F32
         | (1u << 7)                                // A = BF16
         | (1u << 10)                               // B = BF16
         | (static_cast<uint32_t>(negate_a) << 13) | (static_cast<uint32_t>(negate_b) << 14) |
         (static_cast<uint32_t>(a_mn_major) << 15) | (static_cast<uint32_t>(b_mn_major) << 16) |
         ((n >> 3) << 17) | ((m >> 4) << 24);
}

// ---- Shared-memory descriptor (PTX ISA 9.7.16.4.1 "Shared memory descriptor") ----
// 64-bit value; same start/LBO/SBO meaning and canonical layouts as Hopper's wgmma descriptor
// (see ptxb/hopper/wgmma.cuh), but a different tail:
//   bits  0-13 start address >> 4     bits 16-29 LBO >> 4     bits 32-45 SBO >> 4
//   bits 46-48 fixed 0b001 (descriptor version; a zero here is an invalid descriptor)
//   bits 49-51 base offset            bit 52 LBO mode (0 = relative offset)
//   bits 53-60 fixed 0                bits 61-63 swizzle: 0 none, 1 128B with 32B atom,
//                                                  2 128B, 4 64B, 6 32B
__host__ __device__ constexpr uint64_t umma_swizzle_code(SmemSwizzle swizzle) {
  return swizzle == SmemSwizzle::k128B  ? 2
         : swizzle == SmemSwizzle::k64B ? 4
         : swizzle == SmemSwizzle::k32B ? 6
                                        : 0;
}
__host__ __device__ constexpr uint64_t make_umma_desc(uint32_t smem_addr, uint32_t lbo_bytes,
                                                      uint32_t sbo_bytes, SmemSwizzle swizzle,
                                                      uint32_t base_offset = 0) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) |
         (static_cast<uint64_t>((lbo_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<uint64_t>((sbo_bytes & 0x3FFFF) >> 4) << 32) | (1ull << 46) |
         (static_cast<uint64_t>(base_offset & 7) << 49) | (umma_swizzle_code(swizzle) << 61);
}
// Canonical K-major swizzled tile (rows of exactly `span` bytes, 8-row groups packed), the
// layout TMA writes with the same swizzle and a box inner dimension of `span` bytes.
template <SmemSwizzle kSwizzle>
PTXB_DEVICE uint64_t make_umma_desc_kmajor(const void* tile) {
  static_assert(kSwizzle != SmemSwizzle::kNone, "give LBO/SBO explicitly for no-swizzle");
  return make_umma_desc(smem_u32(tile), 16, 8 * static_cast<uint32_t>(kSwizzle), kSwizzle);
}

// ---- tcgen05.mma .kind::f16 (PTX ISA 9.7.16.10.9.1 "tcgen05.mma") ----
// D[tmem] (+)= A[smem desc] * B[smem desc]; issued by ONE thread. accumulate = false ignores
// (overwrites) D: use it for the first K step. The descriptors and idesc must agree on shape,
// major-ness and swizzle with how TMA wrote the tiles.
template <int kCtaGroup = 1>
PTXB_DEVICE void tcgen05_mma_bf16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc,
                                  uint32_t idesc, bool accumulate) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2, "cta_group::1 or ::2");
  const uint32_t enable_input_d = accumulate ? 1u : 0u;
  if constexpr (kCtaGroup == 1) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
        "tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(enable_input_d) : "memory");
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
        "tcgen05.mma.cta_group::2.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(d_tmem),
        "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(enable_input_d) : "memory");
  }
}
// A operand from TMEM instead of shared memory (e.g. P in attention).
template <int kCtaGroup = 1>
PTXB_DEVICE void tcgen05_mma_bf16_ts(uint32_t d_tmem, uint32_t a_tmem, uint64_t b_desc,
                                     uint32_t idesc, bool accumulate) {
  static_assert(kCtaGroup == 1 || kCtaGroup == 2, "cta_group::1 or ::2");
  const uint32_t enable_input_d = accumulate ? 1u : 0u;
  if constexpr (kCtaGroup == 1) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
        "tcgen05.mma.cta_group::1.kind::f16 [%0], [%1], %2, %3, p;\n}" ::"r"(d_tmem),
        "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(enable_input_d) : "memory");
  } else {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
        "tcgen05.mma.cta_group::2.kind::f16 [%0], [%1], %2, %3, p;\n}" ::"r"(d_tmem),
        "r"(a_tmem), "l"(b_desc), "r"(idesc), "r"(enable_input_d) : "memory");
  }
}

// ---- tcgen05.commit (PTX ISA 9.7.16.12.1) ----
// Makes the mbarrier track completion of all prior async tcgen05 ops (mma, cp) of this thread:
// one arrival when they are done. Count it as one of the barrier's expected arrivals.
template <int kCtaGroup = 1>
PTXB_DEVICE void tcgen05_commit(uint64_t* bar) {
  if constexpr (kCtaGroup == 1) {
    asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
            smem_u32(bar)) : "memory");
  } else {
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
            smem_u32(bar)) : "memory");
  }
}
// Multicast: arrive on the mbarrier at the same offset in every CTA whose rank bit is set in
// `cta_mask` (e.g. both CTAs of a pair releasing their shared-memory stage).
template <int kCtaGroup = 1>
PTXB_DEVICE void tcgen05_commit_multicast(uint64_t* bar, uint16_t cta_mask) {
  if constexpr (kCtaGroup == 1) {
    asm volatile(
        "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
        " [%0], %1;" ::"r"(smem_u32(bar)), "h"(cta_mask) : "memory");
  } else {
    asm volatile(
        "tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64"
        " [%0], %1;" ::"r"(smem_u32(bar)), "h"(cta_mask) : "memory");
  }
}

// ---- tcgen05.ld / tcgen05.st, shape .32x32b (PTX ISA 9.7.16.8.3/4) ----
// Warp-collective: lane i of the warp accesses TMEM lane (taddr.lane + i), kNum consecutive
// 32-bit columns starting at taddr.column, into r[0..kNum-1]. taddr.lane must be the first
// lane of this warp's 32-lane quarter (32 * (warp % 4)). Registers are NOT valid until
// tmem_wait_ld(); a store is not visible to later tcgen05 ops until tmem_wait_st().
namespace detail {
template <int kNum>
struct Tmem32x32b;
#define PTXB_TMEM_SPECIALIZE(NUM, NEXT)                                                       \
  template <>                                                                                 \
  struct Tmem32x32b<NUM> {                                                                    \
    static PTXB_DEVICE void ld(uint32_t (&r)[NUM], uint32_t taddr) {                          \
      asm volatile("tcgen05.ld.sync.aligned.32x32b.x" #NUM ".b32 {" PTXB_TMEM_REGS_##NUM      \
                   "}, [%" #NEXT "];"                                                         \
                   : PTXB_TMEM_OUT_##NUM(r)                                                   \
                   : "r"(taddr)                                                               \
                   : "memory");                                                               \
    }                                                                                         \
    static PTXB_DEVICE void st(uint32_t taddr, const uint32_t (&r)[NUM]) {                    \
      asm volatile("tcgen05.st.sync.aligned.32x32b.x" #NUM ".b32 [%" #NEXT "], {"             \
                   PTXB_TMEM_REGS_##NUM "};" ::PTXB_TMEM_IN_##NUM(r),                          \
                   "r"(taddr)                                                                 \
                   : "memory");                                                               \
    }                                                                                         \
  };
PTXB_TMEM_FOR_EACH_NUM(PTXB_TMEM_SPECIALIZE)
#undef PTXB_TMEM_SPECIALIZE
}  // namespace detail

template <int kNum>
PTXB_DEVICE void tmem_ld_32x32b(uint32_t (&r)[kNum], uint32_t taddr) {
  static_assert(kNum >= 1 && kNum <= 128 && (kNum & (kNum - 1)) == 0, ".x1 .. .x128");
  detail::Tmem32x32b<kNum>::ld(r, taddr);
}
template <int kNum>
PTXB_DEVICE void tmem_st_32x32b(uint32_t taddr, const uint32_t (&r)[kNum]) {
  static_assert(kNum >= 1 && kNum <= 128 && (kNum & (kNum - 1)) == 0, ".x1 .. .x128");
  detail::Tmem32x32b<kNum>::st(taddr, r);
}
// Waits for all prior tcgen05.ld (resp. tcgen05.st) of this thread (PTX ISA 9.7.16.8.5).
PTXB_DEVICE void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }
PTXB_DEVICE void tmem_wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory"); }

// ---- tcgen05.cp (PTX ISA 9.7.16.9.2) ----
// Asynchronous copy shared memory (described by a tcgen05 shared-memory descriptor) -> TMEM,
// shape .128x256b (128 lanes x 256 bits); issued by one thread, completes via tcgen05_commit.
template <int kCtaGroup = 1>
PTXB_DEVICE void tcgen05_cp_128x256b(uint32_t taddr, uint64_t smem_desc) {
  if constexpr (kCtaGroup == 1) {
    asm volatile("tcgen05.cp.cta_group::1.128x256b [%0], %1;" ::"r"(taddr), "l"(smem_desc)
                 : "memory");
  } else {
    asm volatile("tcgen05.cp.cta_group::2.128x256b [%0], %1;" ::"r"(taddr), "l"(smem_desc)
                 : "memory");
  }
}

// ---- tcgen05.fence (PTX ISA 9.7.16.11.1) ----
// before_thread_sync: orders this thread's prior async tcgen05 ops before a following
// synchronisation (bar.sync, mbarrier arrive); after_thread_sync: orders tcgen05 ops after a
// preceding synchronisation. Pattern: fence_before; __syncthreads(); fence_after.
PTXB_DEVICE void tcgen05_fence_before_thread_sync() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}
PTXB_DEVICE void tcgen05_fence_after_thread_sync() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

}  // namespace ptxb
