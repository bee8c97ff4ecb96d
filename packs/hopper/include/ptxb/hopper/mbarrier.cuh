// PTXBench knowledge pack, Hopper (sm_90a): mbarrier (shared-memory transaction barriers).
//
// PTX ISA 9.7.13.15 "mbarrier". An mbarrier is a 64-bit shared-memory object (8-byte aligned)
// holding a phase bit, a pending-arrival count and a pending transaction (byte) count.
// A phase completes when BOTH the arrivals of that phase reached the count given at init AND
// the transaction count is back to zero; then the phase parity flips and the counts re-arm.
//
// Rules (what hangs or races if broken):
//   * Init once, by one thread, before any use; then fence_mbarrier_init() (needed when other
//     CTAs of the cluster or the async proxy -- TMA -- will touch it) and a CTA barrier
//     (__syncthreads, or cluster_sync() for cluster-wide use) so nobody waits on garbage.
//   * Parity waiting: phases alternate 0,1,0,1...; mbar_wait(bar, p) returns once the phase
//     with parity p has completed. A freshly initialised barrier is in phase 0, so waiting for
//     parity 1 returns immediately (the "previous" phase counts as complete): producers waiting on
//     an "empty" barrier start with parity 1, consumers on a "full" barrier with parity 0, and
//     each side flips its parity every time it wraps around the ring of stages.
//   * Transactions: a TMA load adds its bytes as completed transactions (complete_tx). The
//     expected bytes must be registered in the same phase (arrive_expect_tx by the issuing
//     thread is the usual way, before or after issuing the copy). Too few expected bytes -> the
//     phase completes before the data landed; too many -> it never completes (hang).
//   * Arrivals per phase must equal the init count exactly: one extra arrival completes the
//     NEXT phase early; one missing arrival hangs every waiter.
//   * Waiting twice on a parity that has since completed twice (the waiter fell a full phase
//     behind) returns immediately and silently desynchronises the pipeline.
// Debug: compile with -DPTXB_MBAR_SPIN_LIMIT=<n> to make mbar_wait trap (kernel error
// "unspecified launch failure"/illegal instruction) with a printf naming block, thread,
// barrier address and parity after n unsuccessful polls, turning a hang into an error.
#pragma once

#include <cstdint>
#include <cstdio>

#include "ptxb/hopper/common.cuh"

namespace ptxb {

// Sets the expected arrival count of every phase (1 .. 2^20 - 1) and phase 0.
PTXB_DEVICE void mbar_init(uint64_t* bar, uint32_t arrival_count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(arrival_count)
               : "memory");
}

// Makes prior mbarrier.init visible to other CTAs of the cluster and to the async proxy
// (PTX ISA "membar/fence": fence.mbarrier_init.release.cluster). Follow with a cluster/CTA
// barrier before anyone else uses the mbarrier.
PTXB_DEVICE void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival (release semantics at CTA scope: this thread's prior writes are visible to a
// thread whose wait observes the phase completion).
PTXB_DEVICE void mbar_arrive(uint64_t* bar) {
  asm volatile(
      "{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}" ::"r"(smem_u32(bar))
      : "memory");
}

// One arrival plus `bytes` expected transactions in the current phase: the producer's call
// right before (or after) issuing TMA loads totalling `bytes` onto this barrier.
PTXB_DEVICE void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile(
      "{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}" ::"r"(
          smem_u32(bar)),
      "r"(bytes) : "memory");
}

// Adds `bytes` expected transactions without arriving (e.g. several loads from one thread,
// or a CTA that expects multicast data but arrives elsewhere).
PTXB_DEVICE void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)),
               "r"(bytes) : "memory");
}

// One arrival on the mbarrier at the same shared-memory offset in CTA `cta_rank` of the cluster
// (mapa translates the address; release at cluster scope). The owner must wait with
// mbar_wait_cluster to acquire at cluster scope.
PTXB_DEVICE void mbar_arrive_remote(uint64_t* bar, uint32_t cta_rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}" ::"r"(smem_u32(bar)),
      "r"(cta_rank) : "memory");
}

// Non-blocking probe: true once the phase with parity `parity` has completed (acquire, CTA
// scope). try_wait may suspend the thread for a hardware-defined time before returning false.
PTXB_DEVICE bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(smem_u32(bar)), "r"(parity) : "memory");
  return done != 0;
}

// Same with acquire at cluster scope: use when the arrivals/transactions come from other CTAs
// (mbar_arrive_remote, multicast TMA issued by a peer) and their writes must be visible.
PTXB_DEVICE bool mbar_try_wait_cluster(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}" : "=r"(done) : "r"(smem_u32(bar)), "r"(parity) : "memory");
  return done != 0;
}

namespace detail {
PTXB_DEVICE void mbar_spin_check(uint64_t* bar, uint32_t parity, uint64_t& spins) {
#if defined(PTXB_MBAR_SPIN_LIMIT) && PTXB_MBAR_SPIN_LIMIT > 0
  if (++spins == static_cast<uint64_t>(PTXB_MBAR_SPIN_LIMIT)) {
    printf("ptxb: mbarrier wait exceeded %llu polls: block (%d,%d,%d) thread %d bar smem 0x%x "
           "parity %u\n",
           static_cast<unsigned long long>(spins), blockIdx.x, blockIdx.y, blockIdx.z,
           threadIdx.x, smem_u32(bar), parity);
    __trap();
  }
#else
  (void)bar;
  (void)parity;
  (void)spins;
#endif
}
}  // namespace detail

// Blocks until the phase with parity `parity` has completed (see the parity rule above).
PTXB_DEVICE void mbar_wait(uint64_t* bar, uint32_t parity) {
  uint64_t spins = 0;
  while (!mbar_try_wait(bar, parity)) detail::mbar_spin_check(bar, parity, spins);
}

PTXB_DEVICE void mbar_wait_cluster(uint64_t* bar, uint32_t parity) {
  uint64_t spins = 0;
  while (!mbar_try_wait_cluster(bar, parity)) detail::mbar_spin_check(bar, parity, spins);
}

}  // namespace ptxb
