// PTXBench knowledge pack, Hopper (sm_90a): named barriers, elect.sync, clusters, setmaxnreg.
#pragma once

#include <cstdint>

#include "ptxb/hopper/common.cuh"

namespace ptxb {

// ---- Named barriers (PTX ISA 9.7.13.1 "bar, barrier") ----
// 16 hardware barriers per CTA; id 0 is the one __syncthreads uses, so use 1..15 for subsets.
// `thread_count` is the number of threads that must arrive (a multiple of 32: barriers count
// whole warps) and must be the same in every call on that id. bar.sync waits; bar.arrive only
// signals (producer side of a producer/consumer handshake). The same id reused by two
// different groups at the same time mixes their counts and deadlocks or passes early.
PTXB_DEVICE void named_barrier_sync(uint32_t id, uint32_t thread_count) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(thread_count) : "memory");
}
PTXB_DEVICE void named_barrier_arrive(uint32_t id, uint32_t thread_count) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(thread_count) : "memory");
}

// ---- elect.sync (PTX ISA 9.7.13.14) ----
// Returns true in exactly one active lane of the calling warp (all 32 lanes must call it with
// the full mask). Use to pick the thread that issues TMA/tcgen05 work: a per-warp uniform
// choice the compiler can keep in uniform registers.
PTXB_DEVICE bool elect_one_sync() {
  uint32_t elected;
  asm volatile(
      "{\n.reg .pred p;\n.reg .b32 lane;\nelect.sync lane|p, 0xffffffff;\n"
      "selp.u32 %0, 1, 0, p;\n}" : "=r"(elected));
  return elected != 0;
}

// ---- Clusters (PTX ISA "Special registers: %cluster_ctarank, %cluster_nctaid",
//      9.7.13.3 "barrier.cluster", 9.7.9.23 "mapa") ----
PTXB_DEVICE uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
PTXB_DEVICE uint32_t cluster_nctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
// Cluster shape in CTAs (x, y, z) and this CTA's position in it.
PTXB_DEVICE dim3 cluster_dims() {
  uint32_t x, y, z;
  asm volatile("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(x));
  asm volatile("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(y));
  asm volatile("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(z));
  return dim3(x, y, z);
}
PTXB_DEVICE dim3 cluster_ctaid() {
  uint32_t x, y, z;
  asm volatile("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(x));
  asm volatile("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(y));
  asm volatile("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(z));
  return dim3(x, y, z);
}

// barrier.cluster: every thread of every CTA in the cluster must arrive (".aligned": all threads
// of a warp execute it together) before any wait returns. release/acquire make shared and
// global writes before the arrive visible after the wait; relaxed orders nothing (use it only
// to overlap work between arrive and wait when no data is exchanged).
PTXB_DEVICE void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
PTXB_DEVICE void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
PTXB_DEVICE void cluster_wait_acquire() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
// Full cluster barrier. Needed after mbarrier init before peers multicast into this CTA, and
// before a CTA exits while peers may still access its shared memory (DSMEM of an exited CTA is
// undefined).
PTXB_DEVICE void cluster_sync() {
  cluster_arrive_release();
  cluster_wait_acquire();
}

// Shared-memory address of the same variable in CTA `cta_rank` of the cluster (usable with
// .shared::cluster instructions: remote mbarrier arrive, st.shared::cluster, ld.shared::cluster).
PTXB_DEVICE uint32_t mapa_shared(uint32_t smem_addr, uint32_t cta_rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr), "r"(cta_rank));
  return remote;
}

// ---- setmaxnreg (PTX ISA 9.7.19.x "setmaxnreg") ----
// Changes the per-thread register budget of the calling warpgroup's warps. All threads of a
// warp execute it (".sync.aligned"); kRegs is a multiple of 8 in [24, 256]. dec releases
// registers to the CTA pool, inc blocks until enough are free in the pool. Use warpgroup-
// uniformly: producer warpgroup dec (e.g. 40), consumer warpgroups inc (e.g. 232), keeping
// sum(regs x threads) within the 64K register file. ptxas honours it only when it knows the
// entry register count: declare __launch_bounds__(threads, 1) and keep the role split as one
// if/else on the warpgroup index; otherwise it warns C7508 and ignores the instruction.
template <int kRegs>
PTXB_DEVICE void setmaxnreg_inc() {
  static_assert(kRegs >= 24 && kRegs <= 256 && kRegs % 8 == 0, "setmaxnreg: 24..256, step 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegs));
}
template <int kRegs>
PTXB_DEVICE void setmaxnreg_dec() {
  static_assert(kRegs >= 24 && kRegs <= 256 && kRegs % 8 == 0, "setmaxnreg: 24..256, step 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegs));
}

}  // namespace ptxb
