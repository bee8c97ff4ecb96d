// PTXBench knowledge pack, Hopper (sm_90a): ldmatrix / stmatrix (warp-wide 8x8 b16 tiles).
//
// PTX ISA 9.7.14.5.15 "ldmatrix", 9.7.14.5.16 "stmatrix". One warp moves 1, 2 or 4 matrices of
// 8x8 16-bit elements between shared memory and registers. Row addresses: lanes 8i..8i+7 give
// the 16-byte-aligned shared addresses of rows 0..7 of matrix i (x1 uses lanes 0-7, x2 lanes
// 0-15; the other lanes' addresses are ignored but must be valid values). Register j of every
// lane holds matrix j: lane l has row l/4, columns 2(l%4) and 2(l%4)+1 (low half = lower
// column) -- the mma/wgmma A-fragment and accumulator-pair layout. kTrans = true transposes
// each 8x8 matrix in flight (lane l then holds column l/4, rows 2(l%4), 2(l%4)+1).
// stmatrix is the exact inverse (same addressing, same register layout): the fast path from
// wgmma accumulators (after pack_bf16x2) to a shared tile for a TMA store.
#pragma once

#include <cstdint>

#include "ptxb/hopper/common.cuh"

namespace ptxb {

template <bool kTrans = false>
PTXB_DEVICE void ldmatrix_x1(uint32_t (&r)[1], const void* row_addr) {
  if constexpr (kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];"
                 : "=r"(r[0]) : "r"(smem_u32(row_addr)) : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                 : "=r"(r[0]) : "r"(smem_u32(row_addr)) : "memory");
  }
}
template <bool kTrans = false>
PTXB_DEVICE void ldmatrix_x2(uint32_t (&r)[2], const void* row_addr) {
  if constexpr (kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(smem_u32(row_addr)) : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(smem_u32(row_addr)) : "memory");
  }
}
template <bool kTrans = false>
PTXB_DEVICE void ldmatrix_x4(uint32_t (&r)[4], const void* row_addr) {
  if constexpr (kTrans) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(row_addr)) : "memory");
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_u32(row_addr)) : "memory");
  }
}

template <bool kTrans = false>
PTXB_DEVICE void stmatrix_x1(void* row_addr, const uint32_t (&r)[1]) {
  if constexpr (kTrans) {
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(
                     smem_u32(row_addr)), "r"(r[0]) : "memory");
  } else {
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(smem_u32(row_addr)),
                 "r"(r[0]) : "memory");
  }
}
template <bool kTrans = false>
PTXB_DEVICE void stmatrix_x2(void* row_addr, const uint32_t (&r)[2]) {
  if constexpr (kTrans) {
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(
                     smem_u32(row_addr)), "r"(r[0]), "r"(r[1]) : "memory");
  } else {
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(
                     smem_u32(row_addr)), "r"(r[0]), "r"(r[1]) : "memory");
  }
}
template <bool kTrans = false>
PTXB_DEVICE void stmatrix_x4(void* row_addr, const uint32_t (&r)[4]) {
  if constexpr (kTrans) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                     smem_u32(row_addr)), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  } else {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                     smem_u32(row_addr)), "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3]) : "memory");
  }
}

}  // namespace ptxb
