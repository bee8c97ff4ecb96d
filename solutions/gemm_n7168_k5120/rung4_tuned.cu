// PTXBench expert reference, task gemm_n7168_k5120, rung 4: rung 3 (persistent warp-specialized
// TMA -> wgmma pipeline on 2-CTA clusters, multicast B panel, TMA-store epilogue, stream-K tail)
// with its untested choices behind compile-time knobs, for a one-call sweep on the H200
// (bench/gemm_sweep.sh). The defaults reproduce rung 3's behaviour; the sweep's winner becomes
// the new default.
//
//   C[M,N] = A[M,K] · B[N,K]^T   A row-major [M,K] bf16, B row-major [N,K] bf16 (both K-major),
//   C row-major [M,N] bf16, fp32 accumulation. N = 7168 and K = 5120 are fixed by the task;
//   M is free (benchmark: 8192). Any M >= 1 works: TMA zero-fills A rows past M on load and
//   clips C rows past M on store.
//
// Why knobs, and which (profile of rung 3 on the H200, 2026-12-02: SM throughput 94 %, memory
// 60 %, 168 registers, 1 CTA/SM, L2 hit 75 %, 692 MB DRAM read, 52 % of warp stall cycles at
// barriers, 14 % "wait", 39 % of shared-store wavefronts counted as bank conflicts):
//   * The barrier stalls are mostly structural: producer warps 1-3 sit at the final
//     barrier.cluster for the whole kernel (3 of 12 warps) and warp 0's 31 idle lanes at
//     __syncwarp. Not a target.
//   * The stmatrix addressing of the staging box is conflict-free: each x4 store runs as 4
//     phases of one 8x8 matrix (8 rows x 16 B); the 8 rows of a phase sit in rows r = 0..7 of
//     the 128B-swizzled box at chunk c ^ r, i.e. 8 distinct 16-byte chunks = all 32 banks
//     (checked for all 16 (q, matrix) cases). The 608k "conflicts" are therefore most likely
//     arbitration with the TMA engine's stage fills (48 KiB per k-tile, running during the
//     epilogue), which the l1tex bank-conflict counter also counts; ncu's source view
//     (L1 Wavefronts Shared Excessive on the STSM lines) tells. So no layout change here.
//   * The consumers already release each stage as soon as its wgmma group completed
//     (wgmma.wait_group 1 after committing the next k-tile's group, not 0).
//   * What is left: the epilogue (both consumer warpgroups stop the tensor cores for their
//     convert + stmatrix + TMA store, and with 2 staging boxes per warp the third and fourth
//     box wait for the first two stores to have read shared memory), the producer's
//     cluster-scope wait, and L2 reuse of the raster. Knobs, rung 3's value first:
//   PTXB_G_STAGES            4   pipeline stages of 48 KiB. 3 frees 48 KiB (for 4 epilogue boxes).
//   PTXB_G_EPI_BOXES         2   2 KiB staging boxes per consumer warp, 1, 2 or 4 (4 = the warp's
//                                whole 16 x 256 slice: no wait_group.read stall inside a tile;
//                                needs PTXB_G_STAGES 3 for shared memory).
//   PTXB_G_PRODUCER_WAIT_CTA 0   1: the producer waits on empty[s] with try_wait at CTA scope,
//                                as CUTLASS's ClusterBarrier::wait does, instead of
//                                .acquire.cluster (SASS: 14 -> 4 CCTL, the CCTL.IVALL per k-tile
//                                in the producer loop goes). The phase completion is what the
//                                producer needs; the consumers' wgmma reads of the stage had
//                                completed (wait_group) before their arrive, and the next write
//                                is the async proxy's TMA, which the acquire does not order.
//   PTXB_G_SKEW_NS           0   consumer warpgroup 1 sleeps this long before its first k-tile,
//                                so the warpgroups run skewed: one's epilogue overlaps the
//                                other's main loop (a pingpong approximation: one warpgroup's
//                                m64n256 wgmmas span all 4 sub-partitions). The lead is
//                                bounded by the stage ring (a stage is refilled only after both
//                                warpgroups of both CTAs released it), so it cannot deadlock;
//                                it also limits the leader's prefetch to stages - lead k-tiles.
//                                The lead (in work) survives tile ends: the laggard runs its
//                                last lead k-tiles alone during the leader's epilogue, the leader
//                                its first ones alone during the laggard's; the tensor cores idle
//                                only max(0, epilogue - lead) per tile instead of the epilogue.
//                                The stream-K fix-up's named barrier re-aligns them at the end.
//   PTXB_G_RASTER            8   raster group width in cluster tiles (rung 3 measured 4/12/16
//                                within noise, slightly worse: 8 x 8.25 is the squarest wave of
//                                66 clusters).
//   PTXB_G_RASTER_ALONG_N    0   1: groups of PTXB_G_RASTER cluster columns (all cluster rows,
//                                row-major inside) instead of cluster rows: the 8 B panels
//                                (21 MB) stay in L2 over ~4 waves instead of the 8 A panels.
//   PTXB_G_STREAMK           1   0: data-parallel rounds only (rung 3 measured -1.7 %).
//   Not a knob: a 1 x 2 cluster (multicast A, each CTA its own 256-row B tile) moves 40 KiB per
//   CTA and k-tile from L2 instead of 32 KiB; a 4-CTA cluster measured -3 % in rung 3.
//   Every combination checks itself at compile time (static_assert: <= 227 KiB of shared
//   memory, boxes per tile a multiple of the slots, stages <= k-tiles of a share).
//   If a configuration hangs or fails on the GPU: rebuild it with -DPTXB_MBAR_SPIN_LIMIT=<n>
//   (the pack's mbar_wait then traps naming block, thread, barrier and parity); a wrong result
//   with PTXB_G_EPI_BOXES points at the staging slots, a hang with PTXB_G_SKEW_NS or
//   PTXB_G_PRODUCER_WAIT_CTA at the empty[] protocol.
//
// Design (rung 3's, unchanged unless a knob says otherwise)
//   CTA tile        BM x BN x BK = 128 x 256 x 64 (one k-tile = 4 wgmma k16 steps).
//   Cluster         2 x 1 CTAs along M: the pair computes C[m0 .. m0+255, n0 .. n0+255] and
//                   shares the B panel. Each CTA loads its own 128 x 64 A tile (16 KiB) and one
//                   128-row half of the 256 x 64 B tile (16 KiB) with .multicast::cluster into
//                   both CTAs' shared memory, so per CTA the L2 -> SM traffic per k-tile drops
//                   from 48 KiB to 32 KiB (PTX ISA 9.7.9.25 cp.async.bulk.tensor, .multicast).
//   Threads         384 = 3 warpgroups, __launch_bounds__(384, 1):
//                     warpgroup 0  producer. One elected lane of warp 0 issues every TMA load;
//                                  warps 1-3 idle until the final cluster barrier.
//                     warpgroups 1, 2  consumers. Consumer c computes rows 64c..64c+63 of the
//                                  CTA tile with wgmma.m64n256k16 (SS): 128 fp32 accumulators
//                                  per thread; it also runs the epilogue of its 64 x 256 slice.
//   Register split  setmaxnreg: producer dec to 40, consumers inc to 232
//                   (128*40 + 256*232 = 64,512 <= 65,536; PTX ISA "setmaxnreg"). ptxas compiles
//                   the whole kernel within the launch budget 65,536 / 384 = 168 registers/thread:
//                   0 spills, no C7520 (wgmma serialisation) warning.
//   Pipeline        4 stages x 48 KiB (A 16 KiB + B 32 KiB) = 192 KiB, + 32 KiB epilogue
//                   staging, + 1 KiB alignment slack + barriers = 225 KiB of dynamic smem
//                   (PTXB_G_STAGES 3 + PTXB_G_EPI_BOXES 4: 144 + 64 + 1 KiB = 209 KiB). Every
//                   stage, box and the barrier block stay 1024-byte aligned for any knob value.
//                   full[s]: 1 arrival (own producer's arrive.expect_tx of 48 KiB) + 48 KiB of
//                   transactions (own A, own B half, the peer's multicast B half).
//                   empty[s]: 4 arrivals = the 2 consumer warpgroups of BOTH CTAs, because
//                   either producer's multicast overwrites stage s in both CTAs; consumers
//                   arrive locally and remotely (mapa + mbarrier.arrive.relaxed.cluster).
//                   A peer's multicast bytes for phase p+1 cannot reach full[s] before its
//                   phase p completed here: the peer producer first waits for our consumers'
//                   release of phase p, which they give only after observing it complete.
//   Barrier scopes  consumers wait on full[s] at CTA scope and release stages with a relaxed
//                   remote arrive. The pack's cluster-scope forms (try_wait.acquire.cluster ->
//                   CCTL.IVALL per k-tile; arrive.release.cluster -> MEMBAR.ALL.GPU per k-tile)
//                   measured 1.094 ms (0.687x) -- see the table.
//   Schedule        persistent: grid = 2 x P, P = max co-resident 2-CTA clusters from
//                   cudaOccupancyMaxActiveClusters (66 if all 132 SMs pair up; the value was not
//                   logged). Cluster tiles are 256 x 256 (32 x 28 = 896 for M = 8192), grouped
//                   raster of 8 cluster rows. Cluster q first takes the data-parallel tiles
//                   q, q + P, ... of the full rounds (P = 66: 13 x 66 = 858), then stream-K: the
//                   k-tiles of the leftover tiles (38 x 80 = 3040) are split evenly over the P
//                   clusters (46-47 each, instead of 38 clusters running a 14th round). A share
//                   is shorter than a tile: its first piece (a tile's end) is written as fp32
//                   partials to a workspace slot and counted on a per-tile flag
//                   (red.release.gpu); the piece holding k = 0 of the tile waits for the count
//                   (ld.acquire.gpu), adds the partials and stores. The wait relies on every
//                   CTA of the grid being resident at once, which the occupancy-sized grid
//                   guarantees on an otherwise idle GPU.
//                   Both CTAs of a cluster walk the same schedule, so their k-tiles pair up.
//   Epilogue        per warp: its 16 x 256 accumulator rows are converted to bf16 (cvt.rn),
//                   written with stmatrix.x4 into a 128B-swizzled 16 x 64 staging box (2 KiB,
//                   PTXB_G_EPI_BOXES = 2 per warp, double-buffered), fence.proxy.async,
//                   __syncwarp, then lane 0 issues a TMA store of the box (cp.async.bulk.tensor,
//                   bulk_group) and, before refilling a box, waits with
//                   cp.async.bulk.wait_group.read (boxes - 1): the group issued `boxes` stores
//                   ago used the same slot (4 boxes per tile, a multiple of the slots). The stores
//                   drain while the warp already runs the next tile's main loop.
//   Teardown        barrier.cluster at start (barrier inits visible before a peer's multicast or
//                   remote arrive) and at the end (no CTA exits while its peer may still write
//                   into its shared memory or arrive on its barriers).
//   Scratch         kept across calls (allowed by the ABI): fp32 workspace of one 128 x 256 tile
//                   per CTA (16.5 MiB for 132 CTAs) and one flag per (stream-K tile, rank), both
//                   allocated with cudaMallocAsync on the first call's stream; finalisers re-zero
//                   the flags they consumed.
//
// Build: ptxbench compile rung4_tuned.cu --task gemm_n7168_k5120
//        (nvcc -gencode arch=compute_90a,code=sm_90a -O3 -lineinfo, pack include dir on -I);
//        a configuration = `#define PTXB_G_... value` lines in front of this file
//        (bench/gemm_sweep.sh renders them). Compiled 2026-12-02 (CUDA 13.0 ptxas), every
//        configuration of the sweep: 168 registers, 0 spills, no ptxas diagnostic, GMMA + TMA
//        present; dynamic smem 230,464 B (4 stages, 2 boxes), 181,296 B (3, 2), 214,064 B (3, 4).
//
// Measured speed (H200, clocks as found, 2026-12-02; bench/results/reference_solutions.md):
//   sweep (bench/gemm_sweep.sh, seeds 31-32, 15:23 UTC): all 11 configurations within
//   0.988-0.998x of cuBLASLt 13.1 (median of 2), base 0.994 / base2 0.995: no knob moved the
//   kernel by more than the run-to-run spread (A/A with the pinned reference: 0.99 % max-min),
//   so the defaults stay rung 3's. Fresh seeds 41-43 (15:41 UTC, pinned reference): 0.7477 /
//   0.7474 / 0.7474 ms, 1.011 / 0.995 / 0.996x, 804 TFLOP/s, dynamic_present.
//   Why not >= 1.02x (Nsight Compute, seed 5, one profiled call each): 0.755 ms here against
//   cuBLASLt's nvjet_sm90_tst_176x128_64x5_1x2 at 0.734 ms, SM throughput 94 % vs 98 %, barrier
//   stalls alike (6.7 vs 6.6 warps per issue; cuBLASLt's first reason is long scoreboard, 13.6),
//   the same 168 registers. 804 TFLOP/s is 81 % of the 989 TFLOP/s dense bf16 peak at 1980 MHz; the
//   schedule already has no wave tail (stream-K), so the knobs above, all about overlap, had
//   nothing left to win. cuBLASLt's difference is its tile: 176 x 128 with 5 stages, a shape
//   this kernel's m64n256 wgmma and 2-CTA A multicast cannot take without a new main loop.

// Knobs (compile-time; a #define before this point overrides; defaults = rung 3).
#ifndef PTXB_G_RASTER
#define PTXB_G_RASTER 8  // raster group width in cluster tiles
#endif
#ifndef PTXB_G_RASTER_ALONG_N
#define PTXB_G_RASTER_ALONG_N 0  // 1: groups of PTXB_G_RASTER cluster columns instead of rows
#endif
#ifndef PTXB_G_STAGES
#define PTXB_G_STAGES 4  // TMA -> wgmma pipeline stages of 48 KiB
#endif
#ifndef PTXB_G_EPI_BOXES
#define PTXB_G_EPI_BOXES 2  // 2 KiB epilogue staging boxes per consumer warp: 1, 2 or 4
#endif
#ifndef PTXB_G_STREAMK
#define PTXB_G_STREAMK 1  // 0: data-parallel rounds only (last round partly idle)
#endif
#ifndef PTXB_G_SKEW_NS
#define PTXB_G_SKEW_NS 0  // consumer warpgroup 1 starts this many ns late (pingpong-like skew)
#endif
#ifndef PTXB_G_PRODUCER_WAIT_CTA
#define PTXB_G_PRODUCER_WAIT_CTA 0  // 1: producer waits on empty[] at CTA scope
#endif

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>

#include "ptxb/hopper.cuh"

namespace {

constexpr int kN = 7168;  // task constants
constexpr int kK = 5120;

constexpr int kBM = 128;
constexpr int kBN = 256;
constexpr int kBK = 64;  // 64 bf16 = 128 B = exactly one 128B-swizzle span (TMA box inner dim)
constexpr int kStages = PTXB_G_STAGES;
constexpr int kClusterM = 2;  // CTAs per cluster, stacked along M, sharing the B panel
constexpr int kConsumerWarpgroups = kBM / 64;
constexpr int kConsumerThreads = 128 * kConsumerWarpgroups;
constexpr int kThreads = 128 + kConsumerThreads;
constexpr int kKTiles = kK / kBK;
constexpr int kTilesN = kN / kBN;
// Raster group width: cluster-tile rows (of 2 x 128 M rows) per group, or cluster-tile columns
// (of 256 N columns) per group when PTXB_G_RASTER_ALONG_N is set.
constexpr int kGroupWidth = PTXB_G_RASTER;
constexpr bool kRasterAlongN = PTXB_G_RASTER_ALONG_N != 0;
// Producer's empty-barrier wait: CTA scope (CUTLASS's ClusterBarrier::wait) instead of
// try_wait.acquire.cluster (CCTL.IVALL per k-tile in the producer thread).
constexpr bool kProducerWaitCta = PTXB_G_PRODUCER_WAIT_CTA != 0;
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;
// Stream-K tail: the cluster tiles left over after the last full round are split by k-range
// over all clusters, unless a cluster's share would be shorter than this many k-tiles.
constexpr bool kStreamKTail = PTXB_G_STREAMK != 0;
constexpr int kMinStreamKTiles = 16;
constexpr CUtensorMapL2promotion kOperandL2Promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;

constexpr uint32_t kStageABytes = kBM * kBK * 2;              // 16 KiB
constexpr uint32_t kStageBBytes = kBN * kBK * 2;              // 32 KiB
constexpr uint32_t kBSliceBytes = kStageBBytes / kClusterM;   // 16 KiB: one CTA's B half
constexpr int kBSliceRows = kBN / kClusterM;                  // 128
constexpr uint32_t kStageBytes = kStageABytes + kStageBBytes; // expected tx per stage per CTA
constexpr uint32_t kWarpgroupABytes = 64 * kBK * 2;           // 8 KiB: rows 64c.. of the A stage
// Epilogue staging: per consumer warp 2 boxes of 16 rows x 64 cols bf16 (128 B rows, 2 KiB).
constexpr int kEpiBoxRows = 16;
constexpr int kEpiBoxCols = 64;
constexpr uint32_t kEpiBoxBytes = kEpiBoxRows * kEpiBoxCols * 2;
constexpr int kEpiBoxesPerWarp = PTXB_G_EPI_BOXES;
constexpr uint32_t kEpiBytes = (kConsumerThreads / 32) * kEpiBoxesPerWarp * kEpiBoxBytes;  // 32 KiB
constexpr uint32_t kBarrierBytes = 2 * kStages * sizeof(uint64_t);
constexpr uint32_t kSmemBytes = kStages * kStageBytes + kEpiBytes + kBarrierBytes + 1024;
constexpr int kPartialFloats = kBM * kBN;  // fp32 partial tile per CTA in the workspace
constexpr uint32_t kFixupBarrier = 1;      // named barrier of the 256 consumer threads

static_assert(kN % kBN == 0, "N must be a multiple of the CTA tile N");
static_assert(kK % kBK == 0, "K must be a multiple of the k-tile");
static_assert(kKTiles >= kStages, "producer tail: every CTA filled each stage at least once");
static_assert(kBK * 2 == 128, "k-tile rows = exactly the 128 B swizzle span");
static_assert(kBM % 64 == 0 && kBN % 8 == 0 && kBN <= 256, "wgmma m64nNk16: N in 8..256");
static_assert(kBM <= 256 && kBSliceRows <= 256, "TMA boxDim[i] <= 256");
static_assert(kStageABytes % 1024 == 0 && kBSliceBytes % 1024 == 0 && kWarpgroupABytes % 1024 == 0,
              "operand tiles must stay 1024-byte aligned (128B swizzle atom, base offset 0)");
static_assert(kEpiBoxCols * 2 == 128 && kEpiBoxBytes % 1024 == 0,
              "staging boxes: 128 B rows, 1024-byte aligned for the 128B swizzle");
// Slot = box % kEpiBoxesPerWarp restarts at 0 every tile; wait_group.read<slots - 1> before a box
// frees its slot only if the group issued `slots` groups ago used the same slot, i.e. the
// boxes per tile (4) are a multiple of the slots: 1, 2 or 4.
static_assert(kBN % (kEpiBoxCols * kEpiBoxesPerWarp) == 0, "boxes cycle evenly over the slots");
static_assert(kStages >= 2 && kGroupWidth >= 1, "knob range");
static_assert(kSmemBytes <= 227 * 1024, "dynamic shared memory per block is at most 227 KiB");
static_assert(kProducerRegs * 128 + kConsumerRegs * kConsumerThreads <= 65536,
              "setmaxnreg split must fit the 64K-register file");
static_assert(kMinStreamKTiles >= kStages && kMinStreamKTiles <= kKTiles,
              "producer tail: a stream-K share fills every stage at least once");
// (A share is shorter than one tile because the stream-K tail has fewer tiles than clusters,
// so it has at most two pieces and each cluster writes at most one partial slot.)

// Cluster-tile index -> (first M row of the pair, n0) with the grouped raster.
// Along M (rung 3): groups of kGroupWidth cluster rows x all 28 columns, column-major inside a
// group. Along N: groups of kGroupWidth cluster columns x all cluster rows, row-major inside.
// Both are bijections of [0, ctiles_m * kTilesN) (the last group may be narrower).
__device__ __forceinline__ void cluster_tile_origin(int tile, int ctiles_m, int& cm0, int& n0) {
  if constexpr (kRasterAlongN) {
    // One runtime division (by the group span); the group width is a constant in both branches
    // (kTilesN % kGroupWidth columns in the last, narrower group), which keeps the producer
    // within its 40 registers.
    const int group_span = kGroupWidth * ctiles_m;
    const int group = tile / group_span;
    const int first = group * kGroupWidth;
    const int local = tile - group * group_span;
    constexpr int kLastCols = kTilesN % kGroupWidth == 0 ? kGroupWidth : kTilesN % kGroupWidth;
    if (first + kGroupWidth <= kTilesN) {
      n0 = (first + local % kGroupWidth) * kBN;
      cm0 = (local / kGroupWidth) * (kBM * kClusterM);
    } else {
      n0 = (first + local % kLastCols) * kBN;
      cm0 = (local / kLastCols) * (kBM * kClusterM);
    }
  } else {
    constexpr int group_span = kGroupWidth * kTilesN;
    const int first = (tile / group_span) * kGroupWidth;
    const int rows_in_group = min(ctiles_m - first, kGroupWidth);
    const int local = tile % group_span;
    cm0 = (first + local % rows_in_group) * (kBM * kClusterM);
    n0 = (local / rows_in_group) * kBN;
  }
}

// One unit of work of a cluster: k-tiles [k0, k1) of a cluster tile.
struct Work {
  int tile, k0, k1;
  int tail_index;  // index among the stream-K tiles (flag slot); -1 for data-parallel tiles
  int partials;    // finaliser only: number of peer clusters that add a partial to this tile
};

// The schedule, identical on producer and consumers: data-parallel tiles q, q + P, ... below
// dp_tiles, then the cluster's share [q * S / P, (q + 1) * S / P) of the S = tail * kKTiles
// k-tiles of the remaining tiles, cut at tile boundaries (stream-K). A share is shorter than a
// tile, so it has at most two pieces: the end of one tile (a partial, written to the workspace)
// and the start of the next (the finaliser, which adds the other pieces' partials and stores).
struct Schedule {
  int num_clusters, dp_tiles, tail_k, next_dp, next_k, end_k;

  __device__ Schedule(int q, int p, int dp, int num_tiles)
      : num_clusters(p), dp_tiles(dp), tail_k((num_tiles - dp) * kKTiles), next_dp(q) {
    // 32-bit is enough: tail_k < P * kKTiles (the tail is fewer than P tiles), P <= 66.
    next_k = q * tail_k / p;
    end_k = (q + 1) * tail_k / p;
  }
  // Cluster whose share contains tail k-tile i: the largest c with floor(c * S / P) <= i.
  __device__ int owner(int i) const {
    return ((i + 1) * num_clusters + tail_k - 1) / tail_k - 1;
  }
  __device__ bool next(Work& w) {
    if (next_dp < dp_tiles) {
      w = Work{next_dp, 0, kKTiles, -1, 0};
      next_dp += num_clusters;
      return true;
    }
    if (next_k >= end_k) return false;
    const int t = next_k / kKTiles;
    const int k0 = next_k % kKTiles;
    const int k1 = min(kKTiles, k0 + (end_k - next_k));
    w = Work{dp_tiles + t, k0, k1, t, 0};
    if (k0 == 0) w.partials = owner(t * kKTiles + kKTiles - 1) - owner(t * kKTiles);
    next_k += k1 - k0;
    return true;
  }
};

// Consumer release of a stage to CTA `cta_rank` of the cluster (itself or the peer). Relaxed:
// the release publishes no data, it only reports that the wgmmas which read the stage have
// completed (wgmma.wait_group returned), so the stage may be overwritten. The pack's
// mbar_arrive_remote (.release.cluster) costs MEMBAR.ALL.GPU + ERRBAR per k-tile in the SASS.
__device__ __forceinline__ void release_stage(uint64_t* bar, uint32_t cta_rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [remote];\n}" ::"r"(
          ptxb::smem_u32(bar)),
      "r"(cta_rank) : "memory");
}

// Producer wait for both CTAs' release of a stage (4 arrivals, 2 of them remote and relaxed).
// The phase completion is observed at either scope; the cluster-scope acquire orders nothing
// that the producer's next TMA write needs (the consumers' wgmma reads completed before
// their arrive), so CTA scope is the CUTLASS choice; kept as a knob until measured.
__device__ __forceinline__ void producer_wait_empty(uint64_t* bar, uint32_t parity) {
  if constexpr (kProducerWaitCta) {
    ptxb::mbar_wait(bar, parity);
  } else {
    ptxb::mbar_wait_cluster(bar, parity);
  }
}

// Stream-K flags (PTX ISA "red", "ld" with .release/.acquire at .gpu scope).
__device__ __forceinline__ void flag_add_release(unsigned* flag) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(flag) : "memory");
}
__device__ __forceinline__ unsigned flag_load_acquire(const unsigned* flag) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  return v;
}

__global__ void __launch_bounds__(kThreads, 1)
    gemm_cluster_kernel(const __grid_constant__ CUtensorMap tmap_a,
                        const __grid_constant__ CUtensorMap tmap_b,
                        const __grid_constant__ CUtensorMap tmap_c, int M, int dp_tiles,
                        float* __restrict__ workspace, unsigned* __restrict__ flags) {
  extern __shared__ uint8_t smem_raw[];
  // 128B swizzle = XOR of address bits 4-6 with bits 7-9: every tile must start on 1024 B. The
  // dynamic smem window starts at the same offset in both CTAs, so multicast offsets agree.
  uint8_t* smem = smem_raw + ((1024u - (ptxb::smem_u32(smem_raw) & 1023u)) & 1023u);
  uint8_t* smem_a = smem;                                // kStages x 16 KiB
  uint8_t* smem_b = smem + kStages * kStageABytes;       // kStages x 32 KiB
  uint8_t* smem_epi = smem + kStages * kStageBytes;      // 8 warps x 2 x 2 KiB
  uint64_t* full = reinterpret_cast<uint64_t*>(smem_epi + kEpiBytes);
  uint64_t* empty = full + kStages;

  const int warpgroup = threadIdx.x / 128;
  const int wg_tid = threadIdx.x % 128;
  const uint32_t rank = ptxb::cluster_ctarank();
  const int cluster_id = blockIdx.x / kClusterM;
  const int num_clusters = gridDim.x / kClusterM;
  const int ctiles_m = (M + kBM * kClusterM - 1) / (kBM * kClusterM);
  const int num_ctiles = ctiles_m * kTilesN;

  if (threadIdx.x == 0) {
    ptxb::prefetch_tensormap(&tmap_a);
    ptxb::prefetch_tensormap(&tmap_b);
    ptxb::prefetch_tensormap(&tmap_c);
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_init(&full[s], 1);
      ptxb::mbar_init(&empty[s], kConsumerWarpgroups * kClusterM);
    }
    ptxb::fence_mbarrier_init();  // visible cluster-wide and to the async proxy
  }
  // Both CTAs' barriers are initialised before either producer multicasts into them.
  ptxb::cluster_sync();

  // The schedule is built inside each role, after setmaxnreg: live across the register
  // reallocation its fields cost the along-N raster a 4-byte spill.
  Work w;
  if (warpgroup == 0) {
    // ---------------- producer ----------------
    ptxb::setmaxnreg_dec<kProducerRegs>();
    Schedule schedule(cluster_id, num_clusters, dp_tiles, num_ctiles);
    if (wg_tid / 32 == 0 && ptxb::elect_one_sync()) {
      int stage = 0;
      uint32_t phase = 0;
      while (schedule.next(w)) {
        int cm0, n0;
        cluster_tile_origin(w.tile, ctiles_m, cm0, n0);
        const int m0 = cm0 + static_cast<int>(rank) * kBM;
        for (int kt = w.k0; kt < w.k1; ++kt) {
          // Both CTAs' consumers released stage s.
          producer_wait_empty(&empty[stage], phase ^ 1u);
          ptxb::mbar_arrive_expect_tx(&full[stage], kStageBytes);
          ptxb::tma_load(smem_a + stage * kStageABytes, &tmap_a, &full[stage], kt * kBK, m0);
          // This CTA's half of B lands at the same offset in both CTAs and completes 16 KiB on
          // the full[stage] barrier at the same offset in each.
          ptxb::tma_load_multicast(smem_b + stage * kStageBBytes + rank * kBSliceBytes, &tmap_b,
                                   &full[stage], static_cast<uint16_t>((1u << kClusterM) - 1u),
                                   kt * kBK, n0 + static_cast<int>(rank) * kBSliceRows);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
      // Tail: every stage released by both CTAs' consumers, i.e. every multicast this thread
      // issued has landed in both CTAs and been consumed (each CTA issued >= kStages loads:
      // a data-parallel tile has kKTiles, a stream-K share >= kMinStreamKTiles, see run()).
      for (int i = 0; i < kStages; ++i) {
        producer_wait_empty(&empty[stage], phase ^ 1u);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1u;
        }
      }
    }
    __syncwarp();
  } else {
    // ---------------- consumers ----------------
    ptxb::setmaxnreg_inc<kConsumerRegs>();
    Schedule schedule(cluster_id, num_clusters, dp_tiles, num_ctiles);
    const int consumer = warpgroup - 1;
    if constexpr (PTXB_G_SKEW_NS > 0) {
      // Start consumer 1 late so the two warpgroups reach their epilogues at different times
      // and one keeps the tensor cores busy while the other converts and stores. The lead is
      // bounded by the stage ring (the producer refills a stage only after both released it),
      // so this only delays, never deadlocks; warp-uniform, then reconverged.
      if (consumer == 1) __nanosleep(PTXB_G_SKEW_NS);
      __syncwarp();
    }
    const int ctid = threadIdx.x - 128;  // 0..255 over both consumer warpgroups
    const uint64_t desc_a0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(
        smem_a + consumer * kWarpgroupABytes);
    const uint64_t desc_b0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem_b);
    const int warp = wg_tid / 32, lane = wg_tid % 32;
    uint8_t* epi = smem_epi + (consumer * 4 + warp) * kEpiBoxesPerWarp * kEpiBoxBytes;
    // stmatrix.x4 addressing: lanes 8i..8i+7 give the rows of matrix i; matrices are
    // (rows 0-7, cols 8j..), (rows 8-15, cols 8j..), (rows 0-7, cols 8j+8..), (rows 8-15, 8j+8..).
    const int st_row = (lane % 8) + 8 * ((lane / 8) % 2);
    const int st_chunk = lane / 16;  // +0 / +1 16-byte chunk (8 columns)
    // Remote-arrive duty: lane 0 of warp 0 releases to CTA 0, lane 0 of warp 1 to CTA 1.
    const bool releaser = lane == 0 && warp < kClusterM;
    const uint32_t release_rank = static_cast<uint32_t>(warp);

    float acc[kBN / 2];
    int stage = 0;
    uint32_t phase = 0;
    while (schedule.next(w)) {
      int cm0, n0;
      cluster_tile_origin(w.tile, ctiles_m, cm0, n0);
      const int m0 = cm0 + static_cast<int>(rank) * kBM;
      int prev_stage = 0;
      for (int kt = w.k0; kt < w.k1; ++kt) {
        // The barrier is local and tracks every byte written into this CTA's stage (own loads
        // and the peer's multicast) through complete_tx, so a CTA-scope wait suffices; the
        // cluster-scope acquire would add an L1 invalidate (CCTL.IVALL) per k-tile.
        ptxb::mbar_wait(&full[stage], phase);
        ptxb::wgmma_fence();
        const uint64_t desc_a = ptxb::wgmma_desc_advance(desc_a0, stage * kStageABytes);
        const uint64_t desc_b = ptxb::wgmma_desc_advance(desc_b0, stage * kStageBBytes);
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk) {
          // scale-d = 0 on the piece's first k16 step: D = A*B, no zeroing between tiles.
          ptxb::wgmma_bf16_ss<kBN>(acc, ptxb::wgmma_desc_advance(desc_a, kk * 32),
                                   ptxb::wgmma_desc_advance(desc_b, kk * 32),
                                   kt > w.k0 || kk > 0);
        }
        ptxb::wgmma_commit_group();
        // <= 1 group pending: the group of k-tile kt-1 has finished reading its stage.
        ptxb::wgmma_wait_group<1>();
        if (kt > w.k0 && releaser) release_stage(&empty[prev_stage], release_rank);
        prev_stage = stage;
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1u;
        }
      }
      ptxb::wgmma_wait_group<0>();
      if (releaser) release_stage(&empty[prev_stage], release_rank);
      ptxb::wgmma_fence_operand(acc);

      // Stream-K fix-up. Workspace slot of a CTA: its fp32 accumulators in fragment order,
      // float4 g of consumer thread u at [g][u] (256 threads x 16 B contiguous per g).
      if (w.k0 > 0) {
        // A partial (the end of a tile): publish it; the finaliser cluster adds it.
        float4* slot = reinterpret_cast<float4*>(workspace) +
                       static_cast<int64_t>(blockIdx.x) * (kPartialFloats / 4);
#pragma unroll
        for (int g = 0; g < kBN / 8; ++g) {
          __stcg(slot + g * kConsumerThreads + ctid,
                 make_float4(acc[4 * g], acc[4 * g + 1], acc[4 * g + 2], acc[4 * g + 3]));
        }
        // bar.sync orders all 256 threads' stores before thread 0's release (cumulativity).
        ptxb::named_barrier_sync(kFixupBarrier, kConsumerThreads);
        if (ctid == 0) flag_add_release(&flags[w.tail_index * kClusterM + rank]);
        continue;
      }
      if (w.partials > 0) {
        unsigned* flag = &flags[w.tail_index * kClusterM + rank];
        if (ctid == 0) {
          while (flag_load_acquire(flag) != static_cast<unsigned>(w.partials)) {
          }
          *flag = 0;  // every partial of this tile arrived: re-arm for the next call
        }
        ptxb::named_barrier_sync(kFixupBarrier, kConsumerThreads);
        for (int p = 1; p <= w.partials; ++p) {
          const float4* slot = reinterpret_cast<const float4*>(workspace) +
                               static_cast<int64_t>((cluster_id + p) * kClusterM + rank) *
                                   (kPartialFloats / 4);
#pragma unroll
          for (int g = 0; g < kBN / 8; ++g) {
            const float4 v = __ldcg(slot + g * kConsumerThreads + ctid);
            acc[4 * g] += v.x;
            acc[4 * g + 1] += v.y;
            acc[4 * g + 2] += v.z;
            acc[4 * g + 3] += v.w;
          }
        }
      }

      // Epilogue. Accumulator register i of (warp w, lane l) holds row 16w + l/4 + 8((i/2)%2),
      // col 8(i/4) + 2(l%4) + i%2, so pack(acc[4j], acc[4j+1]) / pack(acc[4j+2], acc[4j+3]) are
      // the stmatrix fragments of the 8x8 blocks (rows 0-7 / 8-15 of the warp, cols 8j..8j+7).
      const int box_row0 = m0 + consumer * 64 + 16 * warp;
#pragma unroll
      for (int box = 0; box < kBN / kEpiBoxCols; ++box) {
        uint8_t* buf = epi + (box % kEpiBoxesPerWarp) * kEpiBoxBytes;
        // The store issued from this slot kEpiBoxesPerWarp boxes ago (this tile or the previous
        // one) has finished reading its source; bulk groups are per thread, hence lane 0 only.
        if (lane == 0) ptxb::bulk_wait_group_read<kEpiBoxesPerWarp - 1>();
        __syncwarp();
#pragma unroll
        for (int q = 0; q < kEpiBoxCols / 16; ++q) {
          const int j = box * (kEpiBoxCols / 8) + 2 * q;  // 8-column block index in 0..31
          const uint32_t r[4] = {ptxb::pack_bf16x2(acc[4 * j], acc[4 * j + 1]),
                                 ptxb::pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]),
                                 ptxb::pack_bf16x2(acc[4 * j + 4], acc[4 * j + 5]),
                                 ptxb::pack_bf16x2(acc[4 * j + 6], acc[4 * j + 7])};
          const int chunk = (2 * q + st_chunk) ^ (st_row % 8);  // 128B swizzle of the 16 B chunk
          ptxb::stmatrix_x4(buf + st_row * 128 + chunk * 16, r);
        }
        // Generic-proxy smem writes -> visible to the TMA engine (async proxy).
        ptxb::fence_proxy_async_smem();
        __syncwarp();
        if (lane == 0 && box_row0 < M) {
          // Rows past M are clipped by the TMA store (a box wholly past M is not issued).
          ptxb::tma_store(&tmap_c, buf, n0 + box * kEpiBoxCols, box_row0);
          ptxb::bulk_commit_group();
        }
      }
    }
    if (lane == 0) ptxb::bulk_wait_group<0>();
    __syncwarp();
  }
  // No CTA leaves while its peer may still multicast into it or arrive on its barriers.
  ptxb::cluster_sync();
}

// Row-major bf16 [rows][cols] matrix moved in box_rows x box_cols boxes, 128B swizzle.
CUresult make_map(CUtensorMap* map, const void* base, uint64_t rows, uint64_t cols,
                  uint32_t box_rows, uint32_t box_cols, CUtensorMapL2promotion promotion) {
  const uint64_t dims[2] = {cols, rows};
  const uint64_t strides[1] = {cols * 2};
  const uint32_t box[2] = {box_cols, box_rows};
  return ptxb::make_tensor_map(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 2, base, dims, strides,
                               box, ptxb::SmemSwizzle::k128B, promotion);
}

struct LaunchState {
  int max_clusters = 0;
  float* workspace = nullptr;  // max_clusters * 2 fp32 partial tiles, kept across calls
  unsigned* flags = nullptr;   // one counter per (stream-K tile, rank); finalisers re-zero them
};

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  if (N != kN || K != kK || M <= 0 || M > (int64_t{1} << 30)) {
    std::fprintf(stderr, "gemm_n7168_k5120 rung4: unsupported shape M=%lld N=%lld K=%lld\n",
                 static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K));
    return;
  }
  // Tensor maps (innermost dimension first): A {K, M} box {64, 128}; B {K, N} box {64, 128}
  // (one CTA's half of the 256-row panel); C {N, M} box {64, 16} (one warp's staging box).
  CUtensorMap tmap_a, tmap_b, tmap_c;
  if (make_map(&tmap_a, A, static_cast<uint64_t>(M), kK, kBM, kBK, kOperandL2Promotion) !=
          CUDA_SUCCESS ||
      make_map(&tmap_b, B, kN, kK, kBSliceRows, kBK, kOperandL2Promotion) != CUDA_SUCCESS ||
      make_map(&tmap_c, C, static_cast<uint64_t>(M), kN, kEpiBoxRows, kEpiBoxCols,
               CU_TENSOR_MAP_L2_PROMOTION_NONE) != CUDA_SUCCESS) {
    return;  // make_tensor_map already printed the reason
  }
  static LaunchState state;  // device properties and scratch, not results
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kClusterM;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  config.blockDim = dim3(kThreads, 1, 1);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = 1;
  if (state.max_clusters == 0) {
    cudaError_t err = cudaFuncSetAttribute(
        gemm_cluster_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms <= 0) {
      sms = 132;
    }
    config.gridDim = dim3(static_cast<unsigned>(sms / kClusterM * kClusterM), 1, 1);
    // Clusters must all be co-resident: the persistent schedule and the stream-K fix-up wait
    // on one another, so a cluster launched in a second wave would stall or deadlock them.
    int clusters = 0;
    if (err == cudaSuccess) {
      err = cudaOccupancyMaxActiveClusters(&clusters, gemm_cluster_kernel, &config);
    }
    if (err != cudaSuccess || clusters <= 0) {
      std::fprintf(stderr, "rung4: cluster occupancy query failed: %s\n",
                   cudaGetErrorString(err));
      return;
    }
    const size_t workspace_bytes =
        static_cast<size_t>(clusters) * kClusterM * kPartialFloats * sizeof(float);
    const size_t flag_bytes = static_cast<size_t>(clusters) * kClusterM * sizeof(unsigned);
    err = cudaMallocAsync(&state.workspace, workspace_bytes, stream);
    if (err == cudaSuccess) err = cudaMallocAsync(&state.flags, flag_bytes, stream);
    if (err == cudaSuccess) err = cudaMemsetAsync(state.flags, 0, flag_bytes, stream);
    if (err != cudaSuccess) {
      std::fprintf(stderr, "rung4: workspace allocation failed: %s\n", cudaGetErrorString(err));
      return;
    }
    state.max_clusters = clusters;
  }
  const int tiles = static_cast<int>((M + kBM * kClusterM - 1) / (kBM * kClusterM)) * kTilesN;
  int clusters = state.max_clusters;
  int dp_tiles = tiles;
  const int tail = tiles % clusters;
  if (kStreamKTail && tail != 0 && tail * kKTiles >= kMinStreamKTiles * clusters) {
    dp_tiles = tiles - tail;  // every cluster also gets >= kMinStreamKTiles >= kStages k-tiles
  } else if (tiles < clusters) {
    clusters = tiles;
  }
  config.gridDim = dim3(static_cast<unsigned>(clusters * kClusterM), 1, 1);
  const cudaError_t err =
      cudaLaunchKernelEx(&config, gemm_cluster_kernel, tmap_a, tmap_b, tmap_c,
                         static_cast<int>(M), dp_tiles, state.workspace, state.flags);
  if (err != cudaSuccess) {
    std::fprintf(stderr, "rung4: cudaLaunchKernelEx failed: %s\n", cudaGetErrorString(err));
  }
}
