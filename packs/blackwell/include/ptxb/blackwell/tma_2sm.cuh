// PTXBench knowledge pack, Blackwell (sm_100a): TMA loads for a CTA pair (.cta_group::2).
//
// PTX ISA 9.7.9.25.5.2 "cp.async.bulk.tensor": with .cta_group::2 the mbarrier may live in the
// destination CTA or in its peer of the pair (ranks 2i and 2i+1); this lets each CTA load its
// half of a 2-CTA MMA operand into its own shared memory while completing the bytes on ONE
// barrier in the leader (even) CTA, which then issues the cta_group::2 tcgen05.mma.
//   mbar_cluster_addr: shared::cluster address of the barrier, e.g.
//     ptxb::mapa_shared(ptxb::smem_u32(&full_bar), cluster_ctarank() & ~1u)
// The leader's barrier must expect the bytes of BOTH halves.
#pragma once

#include <cstdint>

#include <cuda.h>

#include "ptxb/hopper/common.cuh"

namespace ptxb {

template <class... Coords>
PTXB_DEVICE void tma_load_2sm(void* smem_dst, const CUtensorMap* map, uint32_t mbar_cluster_addr,
                              Coords... coords) {
  constexpr int kDims = sizeof...(Coords);
  static_assert(kDims >= 1 && kDims <= 5, "TMA tensors have 1 to 5 dimensions");
  const int32_t c[kDims] = {static_cast<int32_t>(coords)...};
  const uint32_t dst = smem_u32(smem_dst), bar = mbar_cluster_addr;
  const uint64_t m = reinterpret_cast<uint64_t>(map);
  if constexpr (kDims == 1) {
    asm volatile(
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%3}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]) : "memory");
  } else if constexpr (kDims == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]), "r"(c[1])
        : "memory");
  } else if constexpr (kDims == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]), "r"(c[1]),
        "r"(c[2]) : "memory");
  } else if constexpr (kDims == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]),
        "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes.cta_group::2"
        " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]),
        "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
  }
}

}  // namespace ptxb
