// PTXBench expert reference, tasks mha_bwd_d128[_causal], rung 3: dQ fused into the key-side
// pass (five matrix products per tile pair instead of rung 2's seven), accumulated in fp32 by
// bulk reduce-adds. PTXB_CAUSAL (default 0) picks the causal mask; D = 128 only (the d64/d96
// tasks keep rung 2: this rung's shared-memory plan is sized for D = 128).
//
//   Inputs   Q, K, V, O, dO [B, H, S, 128] bf16 row-major, L [B, H, S] fp32 (the forward's
//            natural-log logsumexp of the scaled scores). B = 4, H = 48 (taken from the
//            arguments), S variable (benchmark 4096), S % 128 == 0 required (checked in run).
//   Outputs  dQ, dK, dV [B, H, S, 128] bf16. scale = 1/sqrt(128); P = exp(scale*Q·K^T - L)
//            [causal: top-left aligned, key j visible to query i iff j <= i];
//            dV = P^T·dO, dP = dO·V^T, dS = P∘(dP - Dr), Dr = rowsum(dO∘O),
//            dQ = scale*dS·K, dK = scale*dS^T·Q.
//
// Why: rung 2 recomputes S and P in a separate query-side kernel for dQ (7 products per tile
// pair against the FLOP model's 5; bench/results/reference_solutions.md, roofline section).
// Here the key-side CTA, which already holds dS for (its 128 keys, one 64-query tile), also
// multiplies it by its resident K and adds the 64 x 128 partial dQ into an fp32 buffer.
//   1. preprocess   Dr = rowsum(dO∘O) and the fp32 dQ buffer zeroed (bwd_common.cuh).
//   2. dk_dv_dq     grid (S/128 key tiles, B*H), 384 threads, 1 CTA per SM:
//                     warpgroup 0     producer (one elected lane): K, V of the 128 keys once,
//                                     then per query tile i (64 queries) Q_i, dO_i and the
//                                     tile's L and Dr slices into the ring (as rung 2).
//                     warpgroups 1-2  consumer c = keys 64c..64c+63, per query tile:
//                       S^T, dP^T (SS), P^T, dV += P^T·dO_i (RS), dS^T, dK += dS^T·Q_i (RS)
//                       as rung 2; then
//                       dS^T -> shared memory (stmatrix, 128B swizzle: rows = keys, 64
//                               queries = 128 B); once both consumers' halves are there
//                               (non-causal: an mbarrier, the product issued one step later,
//                               PTXB_B_DEFER; causal: a named barrier, the same step)
//                       dQ_i[:, 64c..64c+63] = dS_i·K[:, 64c..64c+63]   8 x wgmma.m64n64k16 SS,
//                               A = dS (the shared tile read MN-major: K = the 128 keys of both
//                               consumers), B = the resident K tiles' slab c, MN-major;
//                       each warp writes its 16 rows of the fp32 partial to a staging tile
//                       and one lane adds them to the buffer with
//                       cp.reduce.async.bulk.global.shared::cta.add.f32 (4 KiB, contiguous).
//                     Consumer c computes dQ's column half c over all 128 keys, so one dQ
//                     accumulator is 32 registers (dV, dK: 128; the 240 of setmaxnreg hold it).
//                     causal: query tiles from the diagonal on; both consumers run every step
//                     (the mask zeroes consumer 1's first one) because both take part in dQ.
//   3. convert      dQ = bf16(scale * buffer), undoing the buffer's tile layout.
//
//   dQ buffer layout  fp32, per 64-query tile of a head: [half c][64 rows][64 columns], each
//                   row's eight 32-byte chunks XOR-swizzled by (row % 8), so that the staging
//                   stores (a half-warp's float2 stores: 4 rows x 32 B) hit distinct banks
//                   and a warp's 16 rows are one contiguous 4 KiB bulk reduce.
//   Schedule        step n's dQ partial (a copy, dq_done: see its comment) is staged under the
//                   next step's S^T product; non-causal key tile k starts at query tile k (mod
//                   S/64) and wraps, so the 32 key tiles of a head add into 32 different dQ
//                   tiles at any time. Non-causal, step n's dQ product is issued in step n+1
//                   after that step's own dS^T store: a consumer then waits only for the
//                   other's previous step, so the two drift out of phase and one's
//                   exponentials overlap the other's products (with a same-step barrier their
//                   softmax phases coincided and the tensor cores idled: 0.94x -> 0.99x).
//   Shared memory   resident K, V (2 x 2 x 16 KiB), 2 stages x (Q_i, dO_i) (32 KiB each), dS^T
//                   buffers (non-causal 4 x 16 KiB; causal 2 by step parity x 2 for the
//                   split's lo term), dQ staging (2 x 16 KiB), L/Dr slices, barriers:
//                   231,512 B (causal 231,480 B) of dynamic shared memory.
//   Ordering        causal: dS buffer n%2 is rewritten at step n+2 only after both consumers
//                   passed step n+1's barrier, which each reaches after waiting for its step-n
//                   dQ product (wgmma_wait_group<0> at the end of every step); non-causal: see
//                   PTXB_B_DEFER below. A warp's staging rows are rewritten only after its
//                   previous bulk reduce finished reading them (cp.async.bulk.wait_group.read 0).
//   Causal only     products with query rows < 512 carry dS as a two-term bf16 split (as rung 2,
//                   now for dQ too: both terms are stored and multiplied).
//
// Build: ptxbench tasks solution mha_bwd_d128[_causal] --rung rung3_fused_dq >k.cu &&
//        ptxbench compile k.cu --task mha_bwd_d128[_causal]
//        (nvcc -gencode arch=compute_90a,code=sm_90a -O3 -lineinfo, pack include dir on -I;
//        the rendering inlines bwd_common.cuh and ws_common.cuh)
//        ptxas (nvcc 13.0): dk_dv_dq 168 registers at launch (consumers 240 by setmaxnreg),
//        0 spills, no wgmma serialisation or injected-wait message (C7510-C7520) except, in
//        the non-causal build, two injected warpgroup.arrive (C7519) in its first step (outside
//        the loop: the compiler materializes dV's and dK's zeros after the fence there).
//        Making those opaque before the fence removed them but changed the loop's code: 0.95x
//        against 0.96-1.00x in a same-session A/B, so they stay. SASS HGMMA + UTMALDG 80 + 12
//        (the first step peeled; causal 96 + 12).
// Measured speed (H200, 2026-12-03, clocks as found, `ptxbench eval --seed S`, CUPTI medians,
// L2 flushed; the knobs' sweep and every run: bench/results/bwd_sweep.md):
//   non-causal (PTXB_B_DEFER): seeds 111-113 (--no-ncu) 7.297, 7.250, 7.376 ms vs cuDNN 7.191,
//     7.233, 7.190 ms = 0.986x, 0.998x, 0.992x; seeds 131-133 (another machine session)
//     7.202, 7.208, 7.482 ms vs 7.206, 7.166, 7.256 ms = 1.003x, 0.998x, 0.962x (about 570
//     TFLOP/s); seed 134 (with ncu): 7.207 ms vs 7.205 ms = 0.983x (median of the interleaved
//     couples), PASSED, dynamic_present, work done 1.002 of the FLOP model.
//     Before (same-step barrier, seeds 95-98 and 121-123): 0.937-0.947x.
//   causal seeds 95-97: 4.127, 4.126, 4.128 ms vs 4.063, 4.077, 4.074 ms = 0.984x, 0.988x,
//     0.987x (500 TFLOP/s); seed 98 (with ncu): 4.119 ms vs 4.072 ms = 0.989x, dynamic_present;
//     seed 124 (with ncu, evaluator of main 8f23a5a): 4.112 ms vs 4.083 ms = 0.992x.
//   Rung 2, same day: 0.848x (non-causal, seed 94).
//   Work done (Nsight Compute): 1.002 of the FLOP model (rung 2: 1.40).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <type_traits>

#include "ptxb/hopper.cuh"

namespace {

#ifndef PTXB_CAUSAL
#define PTXB_CAUSAL 0
#endif
#ifndef PTXB_HEAD_DIM
#define PTXB_HEAD_DIM 128
#endif
constexpr bool kCausal = PTXB_CAUSAL != 0;
constexpr int kD = PTXB_HEAD_DIM;
static_assert(kD == 128, "rung 3 is written for D = 128 (the d64/d96 tasks use rung 2)");
constexpr const char* kTaskName = kCausal ? "mha_bwd_d128_causal" : "mha_bwd_d128";

constexpr int kBT = 64;        // rows of one consumer's resident slice and of a streamed tile
constexpr int kSlabCols = 64;  // 64 bf16 = 128 B = one 128B-swizzle span (TMA box inner dim)
constexpr int kSlabs = 2;
constexpr int kDSteps = kD / 16;
constexpr int kConsumers = 2;
constexpr int kBlockRows = kConsumers * kBT;  // keys per CTA
// Tuning knobs (bench/bwd_sweep.sh; the defaults are the sweep's winner; medians of two
// seeds per round, non-causal / causal, 2026-12-03):
//   round 1  base (3 stages, memset, staged at step end) 0.935 / 0.952; zero 0.902 / 0.953;
//            red 0.791 / 0.779; late1 0.444 / 0.499; late2 0.940 / 0.975; late2 + zero 0.959 /
//            0.977; st2 0.952 / 0.953
//   round 2  late2 + zero 0.942 / 0.974; + st2 0.948 / 0.970
//   round 3  (non-causal) late2 + zero + st2 0.919; + rotate 1 0.942; + rotate 2 0.930
//   round 4  + rotate 1 0.940 / 0.959 (3 seeds); + last-converts 0.726 / 0.499
//   round 5  the staging copy of dq_done (rounds 1-4 had ptxas's injected wait, C7517, before
//            the staging stores): 0.944 / 0.987 (3 seeds)
//   round 6  (non-causal) 2 stages 0.941; 3 stages 0.936
//   round 7  (non-causal, 3 seeds) defer 0.992; defer + skew 0.938; defer without the rotation
//            0.977 (the same-step barrier's three runs were voided by reference drift)
//   round 8  (non-causal, 3 seeds) same-step barrier 0.947; defer with dV, dK made opaque in
//            its first step (no C7519) 0.963
//   round 9  (non-causal, alternating per seed) defer 1.003, 0.998, 0.962; the C7519-free
//            variant (voided), 0.952, 0.951: the file keeps the defer as measured in round 7
//   PTXB_B_STAGES      ring depth (causal: at most 2, its split's lo dS tiles take the room)
//   PTXB_B_ZERO        1: the preprocess kernel zeroes the fp32 dQ buffer; 0: cudaMemsetAsync
//   PTXB_B_RED         1: dQ partials added from registers (red.global.add.v2.f32); 0: staged
//                      in shared memory and added with one bulk reduce per warp
//   PTXB_B_LATE_STAGE  1: step n's dQ partial is staged after step n+1's S^T/dP^T are issued
//                      (the tensor cores busy meanwhile; ptxas spills 512 B); 2: after S^T
//                      only; 0: at the end of step n
//   PTXB_B_ROTATE      non-causal: key tile k starts at query tile (ROTATE x k) mod S/64, so
//                      that a head's key tiles do not add into the same dQ tile at once (the
//                      causal order, from the diagonal on, is staggered already); 0: all at 0
//   PTXB_B_LAST_CONVERTS  1: no convert kernel and no zeroing pass: per warp region (16 rows x
//                      64 columns of a query tile) a counter of the key tiles that added into
//                      it; the warp whose add completes the count writes the region's bf16 dQ
//                      and zeroes it for the next call (buffer and counters zeroed once, at
//                      allocation); 0: convert kernel. Measured 0.73x / 0.50x: finishing a
//                      region needs the reduce's global writes (bulk_wait_group 0, not .read)
//                      on every step's critical path, and the causal build spills 164 B
//   PTXB_B_DEFER       1 (non-causal): step n's dQ product is issued in step n+1, after that
//                      step's dS^T store, and waits on an mbarrier that both consumers' warps
//                      arrive on once their half of dS^T(n) is in shared memory, instead of a
//                      named barrier of both consumers in the same step: a consumer only waits
//                      for the other's previous step, so the two may drift apart and overlap
//                      one's exponentials with the other's products. Four dS^T buffers: buffer
//                      n%4 is rewritten at step n+4, after the writer saw both consumers'
//                      arrivals for dS^T(n+2), which each makes after its wait for the dQ
//                      product that read dS^T(n) (so no empty barrier); 0: named barrier
//   PTXB_B_SKEW        with PTXB_B_DEFER: 1 = consumer 1 starts its first step once consumer
//                      0 has its first P^T (so that they start half a step apart); 0: together
#ifndef PTXB_B_STAGES
#define PTXB_B_STAGES 2
#endif
#ifndef PTXB_B_ZERO
#define PTXB_B_ZERO 1
#endif
#ifndef PTXB_B_RED
#define PTXB_B_RED 0
#endif
#ifndef PTXB_B_LATE_STAGE
#define PTXB_B_LATE_STAGE 2
#endif
#ifndef PTXB_B_LAST_CONVERTS
#define PTXB_B_LAST_CONVERTS 0
#endif
#ifndef PTXB_B_ROTATE
#define PTXB_B_ROTATE 1
#endif
#ifndef PTXB_B_DEFER
#define PTXB_B_DEFER (!PTXB_CAUSAL)
#endif
#ifndef PTXB_B_SKEW
#define PTXB_B_SKEW 0
#endif
constexpr int kStages = PTXB_B_STAGES;
constexpr bool kDefer = PTXB_B_DEFER != 0;
static_assert(!(kDefer && kCausal), "PTXB_B_DEFER: non-causal only (four dS buffers)");
static_assert(!kDefer || PTXB_B_LATE_STAGE != 0, "PTXB_B_DEFER stages under the next S^T");
static_assert(kDefer || !PTXB_B_SKEW, "PTXB_B_SKEW needs PTXB_B_DEFER");
// dS^T buffers: 2 by step parity; PTXB_B_DEFER 4 (why four: PTXB_B_DEFER in the knobs' list).
constexpr int kDsBufs = kDefer ? 4 : 2;
constexpr int kDsCopies = kCausal ? 2 : 1;    // dS hi (and lo)
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;
constexpr int kSplitTiles = 8;  // causal: 64-query tiles whose products carry the dS split

constexpr uint32_t kSlabBytes = kBT * kSlabCols * 2;   // 8 KiB
constexpr uint32_t kTileBytes = kSlabs * kSlabBytes;   // 16 KiB: 64 rows x 128 columns
constexpr uint32_t kDsBytes = kBlockRows * 128;        // 16 KiB: 128 keys x 64 queries
constexpr uint32_t kStagingBytes = kBT * kSlabCols * 4;  // 16 KiB: 64 rows x 64 fp32
constexpr uint32_t kVecBytes = kBT * 4;                // 256 B: L or Dr of one 64-row tile
// Every 1024-byte-aligned region first (128B swizzle), then the vectors and the barriers.
constexpr uint32_t kA0 = 0;                            // + c * kTileBytes (K)
constexpr uint32_t kA1 = kConsumers * kTileBytes;      // + c * kTileBytes (V)
constexpr uint32_t kB0 = 2 * kConsumers * kTileBytes;  // + s * 2 * kTileBytes (Q_i)
constexpr uint32_t kB1 = kB0 + kTileBytes;             // + s * 2 * kTileBytes (dO_i)
constexpr uint32_t kDsOffset = kB0 + kStages * 2 * kTileBytes;  // + (parity * copies + copy) * 16K
constexpr uint32_t kStagingOffset = kDsOffset + kDsBufs * kDsCopies * kDsBytes;  // + c * 16K
constexpr uint32_t kVecOffset = kStagingOffset + kConsumers * kStagingBytes;
constexpr uint32_t kBarOffset = kVecOffset + kStages * 2 * kVecBytes;
constexpr uint32_t kDsFullBarrier = 1 + 3 * kStages;  // PTXB_B_DEFER: ds_full[kDsBufs]
constexpr uint32_t kNumBarriers = kDsFullBarrier + (kDefer ? kDsBufs : 0);
constexpr uint32_t kSmemBytes = kBarOffset + kNumBarriers * 8 + 1024;
constexpr uint32_t kPairBarrier = 1;  // named barrier of the two consumer warpgroups

constexpr float kScale = 0.08838834764831845f;  // 1/sqrt(128)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kScaleLog2 = kScale * kLog2e;

static_assert(kDsOffset % 1024 == 0 && kStagingOffset % 1024 == 0, "swizzled tiles 1 KiB aligned");
static_assert(kSmemBytes <= 227 * 1024, "dynamic shared memory per block is at most 227 KiB");
static_assert(128 * kProducerRegs + 128 * kConsumers * kConsumerRegs <= 65536,
              "setmaxnreg split must fit the 64K-register file");

// Smem, carve, warpgroup_index, init_barriers, setup_cta, load_tile, gemm_ss_d, the descriptors
// and the key-side step (key_side_products) are rung 2's; they live once in this header, inlined
// here when rendered. bwd_common.cuh (the RS product, packing, Dr kernel, host helpers) first.
#include "bwd_common.cuh"
#include "ws_common.cuh"

// The query tile of step n: causal from the diagonal on; non-causal rotated (PTXB_B_ROTATE).
__device__ __forceinline__ int query_tile(int n, int k_tile, int num_q_tiles) {
  if constexpr (kCausal) return k_tile * (kBlockRows / kBT) + n;
  return (n + PTXB_B_ROTATE * k_tile) % num_q_tiles;
}

// Producer lane: the CTA's 128 keys of K and V (64 per consumer) on one barrier, then per fill
// n the query tile's Q, dO, L and Dr (as rung 2).
__device__ __forceinline__ void produce_all(const Smem& sm, const CUtensorMap* tmap_q,
                                            const CUtensorMap* tmap_k, const CUtensorMap* tmap_v,
                                            const CUtensorMap* tmap_do, const float* L,
                                            const float* Dr, int head_row0, int k_tile, int count) {
  const int key_row = head_row0 + k_tile * kBlockRows;
  const int num_q_tiles = count + (kCausal ? k_tile * (kBlockRows / kBT) : 0);
  ptxb::mbar_arrive_expect_tx(sm.afull, 2 * kConsumers * kTileBytes);
  for (int c = 0; c < kConsumers; ++c) {
    load_tile(sm.base + kA0 + c * kTileBytes, tmap_k, sm.afull, key_row + c * kBT);
    load_tile(sm.base + kA1 + c * kTileBytes, tmap_v, sm.afull, key_row + c * kBT);
  }
  for (int n = 0; n < count; ++n) {
    const int s = n % kStages;
    const int row = head_row0 + query_tile(n, k_tile, num_q_tiles) * kBT;
    ptxb::mbar_wait(&sm.empty[s], (static_cast<uint32_t>(n / kStages) & 1u) ^ 1u);
    uint8_t* vec = sm.base + kVecOffset + s * 2 * kVecBytes;
    ptxb::mbar_arrive_expect_tx(&sm.b0full[s], kTileBytes + 2 * kVecBytes);
    load_tile(sm.base + kB0 + s * 2 * kTileBytes, tmap_q, &sm.b0full[s], row);
    ptxb::bulk_copy_g2s(vec, L + row, kVecBytes, &sm.b0full[s]);
    ptxb::bulk_copy_g2s(vec + kVecBytes, Dr + row, kVecBytes, &sm.b0full[s]);
    ptxb::mbar_arrive_expect_tx(&sm.b1full[s], kTileBytes);
    load_tile(sm.base + kB1 + s * 2 * kTileBytes, tmap_do, &sm.b1full[s], row);
  }
  // Stay until the last kStages fills were consumed (every issued load has landed).
  for (int n = (count > kStages ? count - kStages : 0); n < count; ++n)
    ptxb::mbar_wait(&sm.empty[n % kStages], static_cast<uint32_t>(n / kStages) & 1u);
}

// This warp's 16 key rows of dS^T (RS fragments a[kk], k16 slice kk = queries 16kk..16kk+15)
// into a 128B-swizzled tile of 64-query rows: stmatrix.x4 matrix m = (keys +8 if m odd,
// queries +8 if m >= 2), the same addressing as an ldmatrix of A fragments.
__device__ __forceinline__ void store_ds(uint8_t* tile, const uint32_t (&a)[4][4], int warp,
                                         int lane) {
  const int row = 16 * warp + lane % 8 + 8 * ((lane / 8) % 2);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    const int chunk = 2 * kk + lane / 16;
    ptxb::stmatrix_x4(tile + row * 128 + ((chunk ^ (row % 8)) * 16), a[kk]);
  }
}

// dQ_i[:, half c] (+)= dS_i · K[:, half c] over the CTA's 128 keys: A = the dS tile (rows =
// keys, MN-major), B = resident K tile kk/4, slab c (rows = keys, MN-major).
__device__ __forceinline__ void gemm_dq(float (&dq)[32], const uint8_t* ds, const Smem& sm, int c,
                                        bool accumulate) {
  const uint64_t desc_ds = desc_mnmajor(ds);
#pragma unroll
  for (int kk = 0; kk < kBlockRows / 16; ++kk) {
    const uint64_t desc_k =
        desc_mnmajor(sm.base + kA0 + (kk / 4) * kTileBytes + c * kSlabBytes);
    ptxb::wgmma_bf16_ss<64, 1, 1, 1, 1>(dq, ptxb::wgmma_desc_advance(desc_ds, kk * 2048),
                                        ptxb::wgmma_desc_advance(desc_k, (kk % 4) * 2048),
                                        accumulate || kk > 0);
  }
}

// Offset (floats) of (row, col) inside a 64 x 64 fp32 dQ half-tile: 32-byte chunk col/8 moved
// to chunk (col/8) ^ (row%8). A half-warp's float2 stores (4 rows x 4 lanes) then cover 4
// distinct chunks of one 128-byte half: no bank conflict.
__host__ __device__ __forceinline__ int dq_tile_offset(int row, int col) {
  return row * 64 + (((col / 8) ^ (row % 8)) * 8) + col % 8;
}

// The warp's 16 rows of the fp32 partial into its 4 KiB of staging, then one bulk reduce-add
// into the buffer. Lane 0 first waits until its previous reduce finished reading the rows.
__device__ __forceinline__ void stage_dq(float* staging, float* dst, const float (&dq)[32],
                                         int warp, int lane) {
  if constexpr (PTXB_B_RED) {
#pragma unroll
    for (int i = 0; i < 32; i += 2) {
      const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
      const int col = 8 * (i / 4) + 2 * (lane % 4);
      asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(dst + dq_tile_offset(row, col)),
                   "f"(dq[i]), "f"(dq[i + 1]) : "memory");
    }
    return;
  }
  if (lane == 0) ptxb::bulk_wait_group_read<0>();
  __syncwarp();
#pragma unroll
  for (int i = 0; i < 32; i += 2) {
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
    const int col = 8 * (i / 4) + 2 * (lane % 4);
    // One 8-byte store (the compiler cannot prove the swizzled offset even, and splits it).
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(
                     ptxb::smem_u32(staging + dq_tile_offset(row, col))),
                 "f"(dq[i]), "f"(dq[i + 1]) : "memory");
  }
  ptxb::fence_proxy_async_smem();  // generic stores before the async proxy's bulk read
  __syncwarp();
  if (lane == 0) {
    asm volatile(
        "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(
            dst + 16 * warp * 64),
        "r"(ptxb::smem_u32(staging + 16 * warp * 64)), "n"(16 * 64 * 4) : "memory");
    ptxb::bulk_commit_group();
  }
}

// PTXB_B_LAST_CONVERTS: one warp region of the dQ buffer (16 rows x 64 columns, 4 KiB) after
// this warp's bulk reduce into it has completed (lane 0 waited with bulk_wait_group<0>). The
// reduce's writes are ordered before the counter's increment by a proxy fence (async-proxy
// writes, generic-proxy atomic) and a release fence; the warp that brings the count to
// `contributors` reads the region after an acquire fence, through L2 (ld.global.cg: no SM's L1
// holds the lines other SMs added to), writes dQ = bf16(scale x sum), zeroes the region and
// resets the counter for the next call (stream order covers the next call's adds).
__device__ __forceinline__ void finish_region(float* acc, int* counter, int contributors,
                                              __nv_bfloat16* out, int lane) {
  int last = 0;
  if (lane == 0) {
    asm volatile("fence.proxy.async.global;" ::: "memory");
    __threadfence();
    last = atomicAdd(counter, 1) == contributors - 1;
  }
  if (__shfl_sync(0xffffffffu, last, 0) == 0) return;
  __threadfence();
  const int row = lane / 2;  // lane: row lane/2, 32-byte chunks 4 (lane%2) .. 4 (lane%2) + 3
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int chunk = 4 * (lane % 2) + j;
    float4* src = reinterpret_cast<float4*>(acc + row * 64 + ((chunk ^ (row % 8)) * 8));
    const float4 a = __ldcg(src);
    const float4 b = __ldcg(src + 1);
    __nv_bfloat162 v[4] = {__floats2bfloat162_rn(a.x * kScale, a.y * kScale),
                           __floats2bfloat162_rn(a.z * kScale, a.w * kScale),
                           __floats2bfloat162_rn(b.x * kScale, b.y * kScale),
                           __floats2bfloat162_rn(b.z * kScale, b.w * kScale)};
    *reinterpret_cast<uint4*>(out + row * kD + 8 * chunk) = *reinterpret_cast<const uint4*>(v);
    src[0] = make_float4(0.f, 0.f, 0.f, 0.f);
    src[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
  if (lane == 0) *counter = 0;
}

// ---- 2. dK, dV and the dQ partials for one 128-key tile ----
__global__ void __launch_bounds__(kThreads, 1)
    dk_dv_dq_kernel(const __grid_constant__ CUtensorMap tmap_q,
                    const __grid_constant__ CUtensorMap tmap_k,
                    const __grid_constant__ CUtensorMap tmap_v,
                    const __grid_constant__ CUtensorMap tmap_do, const float* __restrict__ L,
                    const float* __restrict__ Dr, __nv_bfloat16* __restrict__ dK,
                    __nv_bfloat16* __restrict__ dV, float* __restrict__ dq_accum,
                    int* __restrict__ dq_counters, __nv_bfloat16* __restrict__ dQ, int S) {
  extern __shared__ uint8_t smem_raw[];
  const Smem sm = carve(smem_raw);
  const int warpgroup = warpgroup_index();
  const int k_tile = blockIdx.x;  // causal: tile 0 (the heaviest) first
  const int head_row0 = static_cast<int>(blockIdx.y) * S;
  const int num_q_tiles = S / kBT;
  const int first_q = kCausal ? k_tile * (kBlockRows / kBT) : 0;  // causal: the diagonal first
  const int count = num_q_tiles - first_q;

  // PTXB_B_DEFER's dS^T barriers, after the ring's.
  auto ds_full = [&](int b) {
    return reinterpret_cast<uint64_t*>(sm.base + kBarOffset) + kDsFullBarrier + b;
  };
  if (threadIdx.x == 0) {
    if constexpr (kDefer)
      for (int b = 0; b < kDsBufs; ++b) ptxb::mbar_init(ds_full(b), kConsumers * 4);  // warps
    setup_cta(sm, &tmap_q, &tmap_k, &tmap_v, &tmap_do);
  }
  __syncthreads();

  if (warpgroup == 0) {
    ptxb::setmaxnreg_dec<kProducerRegs>();
    if (threadIdx.x / 32 == 0 && ptxb::elect_one_sync())
      produce_all(sm, &tmap_q, &tmap_k, &tmap_v, &tmap_do, L, Dr,
                  head_row0, k_tile, count);
    return;
  }

  ptxb::setmaxnreg_inc<kConsumerRegs>();
  const int c = warpgroup - 1;
  const int wg_tid = threadIdx.x % 128, warp = wg_tid / 32, lane = wg_tid % 32;
  const uint64_t desc_k = desc_kmajor(sm.base + kA0 + c * kTileBytes);
  const uint64_t desc_v = desc_kmajor(sm.base + kA1 + c * kTileBytes);
  float* staging = reinterpret_cast<float*>(sm.base + kStagingOffset + c * kStagingBytes);

  float dv_lo[32], dv_hi[32], dk_lo[32], dk_hi[32];
  zero(dv_lo);
  zero(dv_hi);
  zero(dk_lo);
  zero(dk_hi);
  float st[32], dpt[32], dq[32];
  // The finished partial, staged under the next step's S^T product. It is a copy made by real
  // moves after the step's final wait, and defined before the loop: staging the accumulator
  // itself (GMMA-defined registers), or a copy left undefined on the path into the first step,
  // makes ptxas inject a wait for the S^T product before the staging stores (C7517), which then
  // no longer overlap it.
  float dq_done[32];
  zero(dq_done);
  uint32_t pf[4][4], dsf[4][4];
  const int key_row = k_tile * kBlockRows + c * kBT + 16 * warp + lane / 4;

  // This consumer's half of query tile q's 64 x 128 block of the fp32 dQ buffer.
  auto dq_dst = [&](int q_tile) {
    return dq_accum + (static_cast<int64_t>(head_row0) + q_tile * kBT) * kD + c * (kBT * 64);
  };
  // Stages this consumer's partial of query tile q; PTXB_B_LAST_CONVERTS: first finishes the
  // region of the previous stage (its reduce has had a whole step to complete).
  int pending_q = -1;
  auto finish_pending = [&] {
    if (lane == 0) ptxb::bulk_wait_group<0>();
    if (pending_q < 0) return;
    const int contributors = kCausal ? pending_q / 2 + 1 : static_cast<int>(gridDim.x);
    const int64_t region = (static_cast<int64_t>(blockIdx.y) * num_q_tiles + pending_q) * 2 + c;
    int* counter = dq_counters + region * 4 + warp;
    __nv_bfloat16* out =
        dQ + (static_cast<int64_t>(head_row0) + pending_q * kBT + 16 * warp) * kD + c * 64;
    finish_region(dq_dst(pending_q) + 16 * warp * 64, counter, contributors, out, lane);
  };
  auto stage = [&](int q_tile) {
    if constexpr (PTXB_B_LAST_CONVERTS) finish_pending();
    stage_dq(staging, dq_dst(q_tile), dq_done, warp, lane);
    pending_q = q_tile;
  };
  const int split_count = kCausal ? max(0, min(count, kSplitTiles - first_q)) : 0;
  // The dQ partial staged in step n is step n - kLag's (PTXB_B_DEFER computes it a step late).
  constexpr int kLag = kDefer ? 2 : 1;
  auto ds_buffer = [&](int n) {
    return sm.base + kDsOffset + (n % kDsBufs) * kDsCopies * kDsBytes;
  };
  // PTXB_B_DEFER: dQ(m) = dS(m)·K once both consumers' halves of dS^T(m) are stored.
  auto issue_dq = [&](int m) {
    ptxb::mbar_wait(ds_full(m % kDsBufs), static_cast<uint32_t>(m / kDsBufs) & 1u);
    ptxb::wgmma_fence();
    gemm_dq(dq, ds_buffer(m), sm, c, false);
    ptxb::wgmma_commit_group();
  };
  // with_dq false: PTXB_B_DEFER's first step, which has no dQ product to issue (a separate
  // instance, so that dq is not live around the loop).
  auto step = [&](auto split, auto with_dq, int n) {
    constexpr bool kSplit = decltype(split)::value;
    constexpr bool kWithDq = decltype(with_dq)::value;
    const int s = n % kStages;
    const uint32_t parity = static_cast<uint32_t>(n / kStages) & 1u;
    const int q_tile = query_tile(n, k_tile, num_q_tiles);
    const uint8_t* q_smem = sm.base + kB0 + s * 2 * kTileBytes;
    const uint8_t* do_smem = sm.base + kB1 + s * 2 * kTileBytes;
    const float2* lse_vec =
        reinterpret_cast<const float2*>(sm.base + kVecOffset + s * 2 * kVecBytes);
    const float2* dr_vec = lse_vec + kBT / 2;
    // = ds_buffer(n), written out: through the lambda the causal build's code moved (SASS
    // compared with nvdisasm), and its measurements are of this form.
    uint8_t* ds_hi = sm.base + kDsOffset + (n % kDsBufs) * kDsCopies * kDsBytes;

    // The skew's barrier (kPairBarrier is free with PTXB_B_DEFER): once, in the first step.
    if constexpr (PTXB_B_SKEW && !kWithDq) {
      if (c == 1) ptxb::named_barrier_sync(kPairBarrier, 256);
    }
    ptxb::mbar_wait(&sm.b0full[s], parity);
    ptxb::mbar_wait(&sm.b1full[s], parity);
    ptxb::wgmma_fence();
    gemm_ss_d(st, desc_k, desc_kmajor(q_smem));
    ptxb::wgmma_commit_group();
    if constexpr (PTXB_B_LATE_STAGE == 2) {  // under S^T only: dP^T's 32 registers are not live
      if (n >= kLag) stage(query_tile(n - kLag, k_tile, num_q_tiles));
      ptxb::wgmma_fence();
    }
    gemm_ss_d(dpt, desc_v, desc_kmajor(do_smem));
    ptxb::wgmma_commit_group();
    if constexpr (PTXB_B_LATE_STAGE == 1) {
      if (n >= kLag) stage(query_tile(n - kLag, k_tile, num_q_tiles));
    }
    // Causal: only the first two query tiles reach keys of this 128-key tile.
    key_side_products<kSplit>(st, dpt, pf, dsf, dv_lo, dv_hi, dk_lo, dk_hi, lse_vec, dr_vec,
                              key_row, q_tile * kBT, n < kBlockRows / kBT, q_smem, do_smem, lane,
                              [&] {
                                if constexpr (PTXB_B_SKEW && !kWithDq) {
                                  if (c == 0) ptxb::named_barrier_arrive(kPairBarrier, 256);
                                }
                              });
    // dS^T (and its lo term) to shared memory; both consumers' halves before the dQ product.
    store_ds(ds_hi + c * (kDsBytes / 2), dsf, warp, lane);
    if constexpr (kSplit) store_ds(ds_hi + kDsBytes + c * (kDsBytes / 2), pf, warp, lane);
    ptxb::fence_proxy_async_smem();
    if constexpr (kDefer) {
      __syncwarp();  // the warp's stores (each lane fenced) before its one arrival
      if (lane == 0) ptxb::mbar_arrive(ds_full(n % kDsBufs));
      if constexpr (kWithDq) issue_dq(n - 1);
    } else {
      ptxb::named_barrier_sync(kPairBarrier, 256);
      ptxb::wgmma_fence();
      gemm_dq(dq, ds_hi, sm, c, false);
      if constexpr (kSplit) gemm_dq(dq, ds_hi + kDsBytes, sm, c, true);
      ptxb::wgmma_commit_group();
    }
    // dV, dK and dQ complete: the stage is free, and (see Ordering) the dS buffer of this
    // parity may be rewritten two steps on.
    ptxb::wgmma_wait_group<0>();
    fence_operand(dv_lo, dv_hi);
    fence_operand(dk_lo, dk_hi);
    if constexpr (kWithDq) {
      ptxb::wgmma_fence_operand(dq);
#pragma unroll
      for (int i = 0; i < 32; ++i)
        asm volatile("mov.b32 %0, %1;" : "=f"(dq_done[i]) : "f"(dq[i]));
    }
    if (wg_tid == 0) ptxb::mbar_arrive(&sm.empty[s]);
    if constexpr (!PTXB_B_LATE_STAGE) stage(q_tile);
  };
  ptxb::mbar_wait(sm.afull, 0);
  if constexpr (kDefer) {
    step(std::false_type{}, std::false_type{}, 0);
    for (int n = 1; n < count; ++n) step(std::false_type{}, std::true_type{}, n);
  } else {
    for (int n = 0; n < split_count; ++n) step(std::true_type{}, std::true_type{}, n);
    for (int n = split_count; n < count; ++n) step(std::false_type{}, std::true_type{}, n);
  }
  if constexpr (kDefer) {
    // dq_done holds dQ(count - 2); the last product, dQ(count - 1), follows.
    if (count >= 2) stage(query_tile(count - 2, k_tile, num_q_tiles));
    issue_dq(count - 1);
    ptxb::wgmma_wait_group<0>();
    ptxb::wgmma_fence_operand(dq);
#pragma unroll
    for (int i = 0; i < 32; ++i) asm volatile("mov.b32 %0, %1;" : "=f"(dq_done[i]) : "f"(dq[i]));
    stage(query_tile(count - 1, k_tile, num_q_tiles));
  } else if constexpr (PTXB_B_LATE_STAGE) {
    stage(query_tile(count - 1, k_tile, num_q_tiles));
  }
  const int64_t out_row0 = static_cast<int64_t>(head_row0) + k_tile * kBlockRows + c * kBT;
  store_tile(dV + out_row0 * kD, dv_lo, dv_hi, 1.f, warp, lane);
  store_tile(dK + out_row0 * kD, dk_lo, dk_hi, kScale, warp, lane);
  // The last reduces must have read their staging rows before the CTA's shared memory goes.
  if constexpr (PTXB_B_LAST_CONVERTS)
    finish_pending();
  else if (lane == 0)
    ptxb::bulk_wait_group<0>();
}

// ---- 3. dQ = bf16(scale * buffer): 16 threads per row, 8 columns each ----
__global__ void __launch_bounds__(256)
    convert_dq_kernel(const float* __restrict__ dq_accum, __nv_bfloat16* __restrict__ dQ,
                      int64_t rows) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * 16 + threadIdx.x / 16;
  const int chunk = threadIdx.x % 16;  // columns 8 chunk .. 8 chunk + 7
  if (row >= rows) return;
  const int local = static_cast<int>(row % kBT);
  const float* src = dq_accum + (row - local) * kD + (chunk / 8) * (kBT * 64) +
                     dq_tile_offset(local, 8 * (chunk % 8));
  const float4 a = reinterpret_cast<const float4*>(src)[0];
  const float4 b = reinterpret_cast<const float4*>(src)[1];
  __nv_bfloat162 out[4] = {__floats2bfloat162_rn(a.x * kScale, a.y * kScale),
                           __floats2bfloat162_rn(a.z * kScale, a.w * kScale),
                           __floats2bfloat162_rn(b.x * kScale, b.y * kScale),
                           __floats2bfloat162_rn(b.z * kScale, b.w * kScale)};
  *reinterpret_cast<uint4*>(dQ + row * kD + 8 * chunk) = *reinterpret_cast<const uint4*>(out);
}

// The fp32 dQ buffer (rows x D floats) followed by the region counters (one int per warp
// region: rows / 16 x 2 halves), grown on demand and kept across calls (scratch allocation);
// zeroed on the stream when allocated (PTXB_B_LAST_CONVERTS keeps it zero between calls).
float* dq_scratch(int64_t rows, cudaStream_t stream) {
  static float* buffer = nullptr;
  static int64_t capacity = 0;
  if (rows > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    const size_t bytes = static_cast<size_t>(rows) * kD * sizeof(float) + rows / 8 * sizeof(int);
    if (cudaMalloc(&buffer, bytes) != cudaSuccess ||
        cudaMemsetAsync(buffer, 0, bytes, stream) != cudaSuccess) {
      std::fprintf(stderr, "%s rung3: allocating the %lld-row dQ buffer failed\n", kTaskName,
                   static_cast<long long>(rows));
      return nullptr;
    }
    capacity = rows;
  }
  return buffer;
}

}  // namespace

void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
         const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* L, __nv_bfloat16* dQ,
         __nv_bfloat16* dK, __nv_bfloat16* dV, int64_t B, int64_t H, int64_t d, int64_t S,
         cudaStream_t stream) {
  if (!shape_supported(B, H, d, S, kBlockRows, "rung3")) return;
  const int64_t rows = B * H * S;
  float* Dr = dr_scratch(rows, "rung3");
  float* dq_accum = dq_scratch(rows, stream);
  if (Dr == nullptr || dq_accum == nullptr) return;
  const TensorMaps* maps = tensor_maps(Q, K, V, dO, rows, [] {
    cudaFuncSetAttribute(dk_dv_dq_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         kSmemBytes);
  });
  if (maps == nullptr) return;
  int* dq_counters = reinterpret_cast<int*>(dq_accum + rows * kD);
  if constexpr (!PTXB_B_ZERO && !PTXB_B_LAST_CONVERTS)
    cudaMemsetAsync(dq_accum, 0, static_cast<size_t>(rows) * kD * sizeof(float), stream);
  preprocess_kernel<<<static_cast<unsigned>((rows + 15) / 16), 256, 0, stream>>>(
      O, dO, Dr, PTXB_B_ZERO && !PTXB_B_LAST_CONVERTS ? dq_accum : nullptr, rows);
  const dim3 grid(static_cast<unsigned>(S / kBlockRows), static_cast<unsigned>(B * H));
  dk_dv_dq_kernel<<<grid, kThreads, kSmemBytes, stream>>>(maps->q, maps->k, maps->v, maps->dO, L,
                                                          Dr, dK, dV, dq_accum, dq_counters, dQ,
                                                          static_cast<int>(S));
  if constexpr (!PTXB_B_LAST_CONVERTS)
    convert_dq_kernel<<<static_cast<unsigned>((rows + 15) / 16), 256, 0, stream>>>(dq_accum, dQ,
                                                                                   rows);
}
