// PTXBench expert reference, tasks mha_with_lse_d128[_causal], rung 3: rung 2 (TMA producer
// warpgroup + 2 consumer warpgroups, setmaxnreg, ping-pong of the consumers' GEMMs, softmax of
// S_r meant to overlap P_{r-1}·V_{r-1}) with the tuning candidates behind compile-time knobs, so
// that one device call sweeps them (bench/fwd_sweep.sh). The defaults are the sweep's winner on
// the H200 (configuration pts_pers_dyn_hg8: PIN, TREE, SKIP_RESCALE, PERSISTENT, DYNAMIC, HEAD_GROUP
// 8); rung 2's schedule is PIN 0, TREE 0, SKIP_RESCALE 0, PERSISTENT 0, DYNAMIC = PTXB_CAUSAL,
// HEAD_GROUP 16 (the sweep's `base`). The head-dim and mask defines are rung 2's (PTXB_HEAD_DIM
// 64/96 still compile, but the knobs were written and checked for D = 128).
//
//   Q, K, V, O  [B, H, S, D] bf16 row-major, B = 4, H = 48, D = 128, S variable (benchmark 4096),
//               S % 128 == 0 required (checked in run). LSE [B, H, S] fp32, natural log.
//   O = softmax(Q·K^T / sqrt(D) [+ causal mask]) · V; causal (PTXB_CAUSAL 1) is top-left aligned.
//
// What rung 2's SASS shows (ptxas 13.0, found while writing this rung; the reason for PTXB_F_PIN)
//   In the steady round ptxas hoists `wgmma.wait_group 0` (WARPGROUP.DEPBAR.LE gsb0, 0x0) from
//   after the softmax to right after the first row-max pass: all 66 MUFU.EX2 of the round run
//   after P_{r-1}·V_{r-1} has completed, so the intra-warpgroup overlap covers only the max pass.
//   (Count: between DEPBAR 0x1 and DEPBAR 0x0 of the steady loop rung 2 has 0 exps; with
//   PTXB_F_PIN 1 all 66, with kv176 all 90.) This fits the H200 profile: "wait" the first stall
//   reason, SM throughput 71 %. Nothing in the SASS needs the early wait: no instruction between
//   the two positions touches P·V's registers; it is a ptxas scheduling choice. Moving the
//   mbarrier arrive, a __syncwarp or a dummy shuffle did not move it; a basic-block boundary did.
//
// Knobs (default in parentheses)
//   PTXB_F_PIN 0|1 (1)        1: a never-taken branch on the row sums (l_run sign bits; l >= 0)
//                             right before wait_group 0 ends the basic block, and ptxas keeps the
//                             wait below the softmax: the whole softmax overlaps P·V. Its body is
//                             a membar.cta, harmless even if it ran. Costs one LOP3 + branch.
//   PTXB_F_TREE 0|1 (1)       row max and row sum over 4 independent partials (shorter FMNMX /
//                             FADD dependency chains at 2 consumer warps per scheduler).
//   PTXB_F_SKIP_RESCALE 0|1 (1) a warp whose 16 rows all kept their running maximum this round
//                             (alpha == 1 exactly, the common case once the maxima settle) skips
//                             the 64 O multiplies (one VOTE.ANY + branch; exact).
//   PTXB_F_ORDER 0|1|2 (0)    0: O *= alpha_r and P_r -> bf16 at the end of round r (rung 2).
//                             1: O *= alpha_{r-1} right after S_r is issued, before P·V (FA3's
//                             order: the multiplies run under this consumer's own Q·K^T).
//                             2: as 1, and P_{r-1} -> bf16 after the turn barrier of round r.
//                             NVVM/ptxas move these plain register ops freely (fences keep NVVM
//                             roughly in place); check the SASS before trusting the label.
//   PTXB_F_KV_TILE (128)      keys per KV tile, multiple of 16, 64..256 (wgmma n, TMA box rows).
//                             FA3 uses 176 for d128 non-causal. When 128 % KV_TILE != 0, S need
//                             not be a multiple of it: the last tile's keys >= S are masked (the
//                             rows past the head are the next head's finite keys, or TMA zero fill
//                             at the tensor's end, full box bytes counted) and P = 0 there.
//                             Causal masking is general: key > query masked in any tile whose last
//                             key passes the tile's first query row.
//   PTXB_F_STAGES 2..4 (3)    K/V ring depth. smem = 32 KiB Q + STAGES x 2 x KV_TILE x 256 B +
//                             barriers + 1 KiB slack <= 227 KiB: 176 and 192 need STAGES 2
//                             (214,088 B and 230,472 B), 128 x 3 = 230,496 B (rung 2's).
//   PTXB_F_PERSISTENT 0|1 (1) 1: grid = min(#SMs, work items) CTAs, each walking work items
//                             (query tile, head); the producer loads the next item's Q as soon as
//                             both consumers finished their last Q·K^T (qempty barrier) and keeps
//                             streaming K/V through the same ring, so the next item's prologue
//                             overlaps this item's last P·V and epilogue. The ring position and
//                             the parities are absolute fill counts carried across items; the
//                             ping-pong alternation runs unbroken across items (consumer 1
//                             arrives once up front, consumer 0 syncs once more at the very end).
//                             The item index reaches the consumers through a shared int written
//                             before the producer's arrive on qfull (release/acquire); -1 = done.
//   PTXB_F_DYNAMIC 0|1 (1), persistent only: 1 = next item from a global atomic
//                             counter (fetched by the producer when it has issued an item's last
//                             K/V), 0 = static stride gridDim.x. Each launch makes exactly T
//                             fetches (T - G successful, one failing per CTA); the fetch that
//                             returns T - 1 resets the counter to 0 for the next launch.
//   PTXB_F_HEAD_GROUP (8), persistent causal only: item order = groups of HEAD_GROUP heads
//                             (16 x 2 MiB of K/V per head at S = 4096 stay in L2 together), inside
//                             a group query tiles heaviest first, heads fastest. Non-causal
//                             persistent order = rung 2's grid order (query tiles of a head side
//                             by side). Non-persistent = rung 2's grid (causal: heaviest tile of
//                             each head first).
//
// Design otherwise as rung 2 (see its top comment): 128 query rows per work item, 384 threads =
//   producer warpgroup (one elected lane issues every TMA: Q, then K_j and V_j into the ring;
//   setmaxnreg 24) + 2 consumer warpgroups of 64 rows (setmaxnreg 240); kfull/vfull (1 arrival +
//   tx bytes), empty (2 arrivals, after each consumer's P·V of the tile); named barriers 1 and 2
//   for the ping-pong; base-2 online softmax, one FFMA (s * log2(e)/sqrt(D) - m) per element
//   before ex2; O = acc / l stored from the accumulator fragments; LSE = (m + log2 l) * ln 2.
//   Barriers: qfull (1), qempty (2, persistent only), kfull[STAGES], vfull[STAGES], empty[STAGES].
//   One difference at every setting: consumer 1 now also arrives after its final round and
//   consumer 0 takes that arrival with one extra bar.sync before it exits (rung 2 skipped the
//   arrival instead); the persistent loop needs the unbroken alternation.
//
// Build: prepend "#define PTXB_CAUSAL 1" for the causal task and any knobs, then
//        ptxbench compile k.cu --task mha_with_lse_d128[_causal]
//        (nvcc -gencode arch=compute_90a,code=sm_90a -O3 -lineinfo, pack include dir on -I)
// ptxas (nvcc 13.0, 2026-12-02), each of the 12 configurations of bench/fwd_sweep.sh for both
//   tasks: 168 registers at launch, 0 spills, no ptxas diagnostic (no C7520/C7512), GMMA and TMA
//   present (HGMMA 48 at KV 128, 60 at 176, 64 at 192; UTMALDG 6). Highest register used by the
//   consumers (of 240): 190-200 at KV 128, 185-186 persistent, 220-235 at 176, 237 at 192.
//   Exps between the steady round's wait_group 1 and wait_group 0 in SASS: 0 without
//   PTXB_F_PIN (rung 2 too), 66 with it (90 at KV 176, 98 at 192: the whole softmax).
//   PTXB_HEAD_DIM 64 and 96 (default and PIN + PERSISTENT) also compile clean.
// Measured speed (H200, clocks as found, 2026-12-02; bench/results/reference_solutions.md):
//   sweep (bench/fwd_sweep.sh, seed 31, 15:27 UTC), speedup vs cuDNN 9.19, non-causal / causal:
//     base (rung 2) 0.974 / 0.981; pin 0.968 / 0.936; pin_tree 0.973 / 0.956; pin_tree_skip
//     0.972 / 0.948; pin_o1 0.968 / 0.960; pin_o2 0.954 / 0.929; kv176 0.733 / 0.718; kv192
//     0.716 / 0.724; st2 0.718 / 0.685; pts_pers 0.977 / 0.990; pts_pers_dyn_hg8 0.983 / 0.996;
//     kv176_pts_pers 0.730 / 0.754. Two stages cost 25 % (the ring, not the tile size: st2 at
//     128 keys loses as much); pinning the wait alone hurts the causal task; the persistent
//     CTAs with the heaviest-first dynamic order are what gain.
//   The defaults (= pts_pers_dyn_hg8), fresh seeds 41-43 (15:41 UTC): non-causal 2.4945 /
//     2.5037 / 2.5039 ms, 0.974 / 0.972 / 0.975x, 660 TFLOP/s; causal 1.3806 / 1.3803 /
//     1.3807 ms, 0.985 / 0.985 / 0.990x, 597 TFLOP/s; dynamic_present on all six.
//   Why not >= 1.0x: Nsight Compute (seed 5) puts this kernel at 70 % SM throughput against
//   cuDNN's 74 % with the same 168 registers and 14 % warps active; the first stall reason is
//   "wait" (1.45 warps per issue vs cuDNN's 0.90): fixed-latency dependencies between the
//   softmax's FMNMX/FADD/MUFU chains and the wgmma waits. cuDNN reaches 678 TFLOP/s (69 % of the
//   989 TFLOP/s dense peak) where FA3 reported 638 on the H100; closing the last 2.5 % takes a
//   shorter softmax per tile (fewer instructions between the two wgmma waits), not more overlap.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "ptxb/hopper.cuh"

namespace {

// ---- task defines (prepended by the replay model / `ptxbench tasks solution`) ----
#ifndef PTXB_CAUSAL
#define PTXB_CAUSAL 0
#endif
#ifndef PTXB_HEAD_DIM
#define PTXB_HEAD_DIM 128
#endif
// ---- tuning knobs (see the top comment); the defaults are the H200 sweep's winner ----
#ifndef PTXB_F_KV_TILE
#define PTXB_F_KV_TILE 128
#endif
#ifndef PTXB_F_STAGES
#define PTXB_F_STAGES 3
#endif
#ifndef PTXB_F_PERSISTENT
#define PTXB_F_PERSISTENT 1
#endif
#ifndef PTXB_F_DYNAMIC
#define PTXB_F_DYNAMIC 1
#endif
#ifndef PTXB_F_HEAD_GROUP
#define PTXB_F_HEAD_GROUP 8
#endif
#ifndef PTXB_F_ORDER
#define PTXB_F_ORDER 0
#endif
#ifndef PTXB_F_PIN
#define PTXB_F_PIN 1
#endif
#ifndef PTXB_F_SKIP_RESCALE
#define PTXB_F_SKIP_RESCALE 1
#endif
#ifndef PTXB_F_TREE
#define PTXB_F_TREE 1
#endif

constexpr bool kCausal = PTXB_CAUSAL != 0;
constexpr bool kPersistent = PTXB_F_PERSISTENT != 0;
constexpr bool kDynamic = PTXB_F_DYNAMIC != 0;
constexpr int kOrder = PTXB_F_ORDER;
constexpr bool kRescaleEarly = kOrder >= 1;  // O *= alpha right after S is issued (FA3)
constexpr bool kPackLate = kOrder >= 2;      // P -> bf16 fragments at the start of the next turn
constexpr bool kTree = PTXB_F_TREE != 0;
constexpr bool kPin = PTXB_F_PIN != 0;
constexpr bool kSkipRescale = PTXB_F_SKIP_RESCALE != 0;
constexpr int kHeadGroup = PTXB_F_HEAD_GROUP;

constexpr int kD = PTXB_HEAD_DIM;  // head dim (task constant)
constexpr int kBM = 128;           // query rows per work item (2 consumers x 64)
constexpr int kBN = PTXB_F_KV_TILE;  // keys per KV tile
constexpr int kSlabCols = 64;      // 64 bf16 = 128 B = one 128B-swizzle span (TMA box inner dim)
constexpr int kSlabs = (kD + kSlabCols - 1) / kSlabCols;
constexpr int kQkSteps = kD / 16;  // k16 steps of S = Q·K^T: the D = 96 padding is never multiplied
constexpr int kStages = PTXB_F_STAGES;
constexpr int kConsumers = kBM / 64;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;
// 128 % kBN != 0: S (a multiple of 128) need not be a multiple of kBN, the last KV tile of a
// head can reach past S and its keys >= S are masked.
constexpr bool kTailPossible = (kBM % kBN) != 0;

constexpr uint32_t kQSlabBytes = kBM * kSlabCols * 2;      // 16 KiB: 128 rows x 128 B
constexpr uint32_t kKvSlabBytes = kBN * kSlabCols * 2;     // kBN rows x 128 B
constexpr uint32_t kQBytes = kSlabs * kQSlabBytes;
constexpr uint32_t kKvTileBytes = kSlabs * kKvSlabBytes;
constexpr uint32_t kWarpgroupQBytes = 64 * kSlabCols * 2;  // 8 KiB: rows 64c.. of a Q slab
constexpr uint32_t kQOffset = 0;
constexpr uint32_t kKOffset = kQOffset + kQBytes;
constexpr uint32_t kVOffset = kKOffset + kStages * kKvTileBytes;
constexpr uint32_t kBarOffset = kVOffset + kStages * kKvTileBytes;
constexpr uint32_t kNumBarriers = 2 + 3 * kStages;  // qfull, qempty, kfull[], vfull[], empty[]
constexpr uint32_t kItemOffset = kBarOffset + kNumBarriers * 8;  // int: the item of qfull's phase
constexpr uint32_t kSmemBytes = kItemOffset + 8 + 1024;         // + alignment slack

constexpr float kSqrtD = kD == 64 ? 8.0f : kD == 96 ? 9.797958971132712f : 11.313708498984761f;
constexpr float kScaleLog2 = 1.4426950408889634f / kSqrtD;  // log2(e) / sqrt(D)
constexpr float kLn2 = 0.6931471805599453f;

static_assert(kD == 64 || kD == 96 || kD == 128, "PTXB_HEAD_DIM: 64, 96 or 128");
static_assert(kSlabs == 1 || kSlabs == 2, "the producer issues one or two slab boxes per tile");
static_assert(kD % 16 == 0 && kSlabs * kSlabCols >= kD && kSlabs * kSlabCols - kD < kSlabCols,
              "D covered by whole slabs, k16 steps of Q·K^T inside the real columns");
static_assert(kBN % 16 == 0 && kBN >= 64 && kBN <= 256,
              "PTXB_F_KV_TILE: a multiple of 16 (P·V k16 steps, 1024-byte slabs), 64..256 "
              "(wgmma n and TMA box rows)");
static_assert(kStages >= 2 && kStages <= 4, "PTXB_F_STAGES: 2..4");
static_assert(kHeadGroup >= 1, "PTXB_F_HEAD_GROUP >= 1");
static_assert(kOrder >= 0 && kOrder <= 2, "PTXB_F_ORDER: 0, 1 or 2");
static_assert(kQSlabBytes % 1024 == 0 && kKvSlabBytes % 1024 == 0 &&
                  kWarpgroupQBytes % 1024 == 0,
              "operand tiles must stay 1024-byte aligned (128B swizzle atom, base offset 0)");
static_assert(kSmemBytes <= 227 * 1024,
              "dynamic shared memory per block is at most 227 KiB: lower PTXB_F_STAGES");
static_assert(128 * kProducerRegs + 128 * kConsumers * kConsumerRegs <= 65536,
              "setmaxnreg split must fit the 64K-register file");

// Dynamic scheduler's work counter (PTXB_F_PERSISTENT 1, PTXB_F_DYNAMIC 1). Each launch makes
// exactly T fetches (T = work items): T - G successful ones (items G..T-1; items 0..G-1 are the
// CTAs' first ones) and one failing fetch per CTA; the fetch that returns T - 1 is the launch's
// last and puts the counter back to 0 for the next launch (stream order makes that visible).
__device__ unsigned int g_fwd_item_counter = 0;

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

struct WorkItem {
  int q_tile;     // query tile of the head (rows 128*q_tile ..)
  int head_row0;  // row of (b, h, 0) in the {D, B*H*S} view
  int n;          // KV tiles to visit
};

// Work item t -> (query tile, head). Non-persistent: t = (blockIdx.y, blockIdx.x) as in rung 2
// (query tiles of one head side by side; causal: heaviest tile first within the head).
// Persistent non-causal: t = head * nq + q (the same order: concurrent items share K/V in L2).
// Persistent causal: groups of kHeadGroup heads (their K/V fit L2 together); within a group the
// query tiles heaviest first, heads fastest, so each CTA's early items are the long ones and the
// launch ends on short ones.
__device__ __forceinline__ WorkItem decode_item(int t, int nq, int bh, int S) {
  int q, head;
  if constexpr (kPersistent && kCausal) {
    const int per_group = nq * kHeadGroup;
    const int g = t / per_group;
    const int u = t - g * per_group;
    const int hg = min(kHeadGroup, bh - g * kHeadGroup);
    q = nq - 1 - u / hg;
    head = g * kHeadGroup + u % hg;
  } else {
    q = t % nq;
    head = t / nq;
    if (kCausal) q = nq - 1 - q;
  }
  WorkItem w;
  w.q_tile = q;
  w.head_row0 = head * S;
  // Causal: keys 0 .. 128*(q+1)-1 (the tile's last row); tiles past that are skipped.
  const int keys = kCausal ? (q + 1) * kBM : S;
  w.n = (keys + kBN - 1) / kBN;
  return w;
}

__global__ void __launch_bounds__(kThreads, 1)
    mha_fwd_tuned_kernel(const __grid_constant__ CUtensorMap tmap_q,
                         const __grid_constant__ CUtensorMap tmap_k,
                         const __grid_constant__ CUtensorMap tmap_v,
                         __nv_bfloat16* __restrict__ O, float* __restrict__ LSE, int S, int bh) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024u - (ptxb::smem_u32(smem_raw) & 1023u)) & 1023u);
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kBarOffset);
  uint64_t* qfull = bars;
  uint64_t* qempty = bars + 1;
  uint64_t* kfull = bars + 2;
  uint64_t* vfull = bars + 2 + kStages;
  uint64_t* empty = bars + 2 + 2 * kStages;
  volatile int* item_slot = reinterpret_cast<volatile int*>(smem + kItemOffset);

  const int warpgroup = threadIdx.x / 128;
  const int wg_tid = threadIdx.x % 128;
  const int nq = S / kBM;
  const int num_items = nq * bh;
  // Non-persistent: the CTA's one item. Persistent: the first item; later ones come from the
  // producer through item_slot.
  const int first_item = kPersistent ? static_cast<int>(blockIdx.x)
                                     : static_cast<int>(blockIdx.y) * nq +
                                           static_cast<int>(blockIdx.x);

  if (threadIdx.x == 0) {
    ptxb::prefetch_tensormap(&tmap_q);
    ptxb::prefetch_tensormap(&tmap_k);
    ptxb::prefetch_tensormap(&tmap_v);
    ptxb::mbar_init(qfull, 1);
    ptxb::mbar_init(qempty, kConsumers);  // one elected thread per consumer, after its last S
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_init(&kfull[s], 1);  // the producer's arrive.expect_tx
      ptxb::mbar_init(&vfull[s], 1);
      ptxb::mbar_init(&empty[s], kConsumers);
    }
    ptxb::fence_mbarrier_init();
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------- producer ----------------
    ptxb::setmaxnreg_dec<kProducerRegs>();
    if (wg_tid / 32 == 0 && ptxb::elect_one_sync()) {
      uint32_t fill = 0;  // KV tiles loaded so far by this CTA (ring position across items)
      int t = first_item;
      for (uint32_t k = 0;; ++k) {
        if constexpr (kPersistent) {
          // Q's buffer and item_slot are reused: both consumers finished the last S GEMM of
          // item k-1 (and read its item_slot long before).
          if (k > 0) ptxb::mbar_wait(qempty, (k - 1) & 1u);
          if (t >= num_items) {
            *item_slot = -1;
            ptxb::mbar_arrive(qfull);  // plain arrival completes the phase: "no more work"
            break;
          }
          *item_slot = t;  // published by the arrive below (release), read after the wait
        }
        const WorkItem w = decode_item(t, nq, bh, S);
        const int q_row0 = w.head_row0 + w.q_tile * kBM;
        ptxb::mbar_arrive_expect_tx(qfull, kQBytes);
        ptxb::tma_load(smem + kQOffset, &tmap_q, qfull, 0, q_row0);
        if constexpr (kSlabs == 2) {
          ptxb::tma_load(smem + kQOffset + kQSlabBytes, &tmap_q, qfull, kSlabCols, q_row0);
        }
        for (int j = 0; j < w.n; ++j, ++fill) {
          const uint32_t s = fill % kStages;
          const uint32_t parity = (fill / kStages) & 1u;
          ptxb::mbar_wait(&empty[s], parity ^ 1u);
          // Tail tile (kBN not dividing S): rows past the head are the next head's keys (finite,
          // masked to P = 0) or, at the tensor's end, TMA's zero fill (full box bytes counted).
          const int row = w.head_row0 + j * kBN;
          uint8_t* k_dst = smem + kKOffset + s * kKvTileBytes;
          uint8_t* v_dst = smem + kVOffset + s * kKvTileBytes;
          ptxb::mbar_arrive_expect_tx(&kfull[s], kKvTileBytes);
          ptxb::tma_load(k_dst, &tmap_k, &kfull[s], 0, row);
          if constexpr (kSlabs == 2) {
            ptxb::tma_load(k_dst + kKvSlabBytes, &tmap_k, &kfull[s], kSlabCols, row);
          }
          ptxb::mbar_arrive_expect_tx(&vfull[s], kKvTileBytes);
          ptxb::tma_load(v_dst, &tmap_v, &vfull[s], 0, row);
          if constexpr (kSlabs == 2) {
            ptxb::tma_load(v_dst + kKvSlabBytes, &tmap_v, &vfull[s], kSlabCols, row);
          }
        }
        if constexpr (!kPersistent) break;
        if constexpr (kDynamic) {
          const unsigned v = atomicAdd(&g_fwd_item_counter, 1u);
          if (v == static_cast<unsigned>(num_items) - 1u) atomicExch(&g_fwd_item_counter, 0u);
          t = static_cast<int>(gridDim.x + v);
        } else {
          t += static_cast<int>(gridDim.x);
        }
      }
      // Tail: stay until the consumers released the last fills (every load landed, consumed).
      for (uint32_t i = (fill > kStages ? fill - kStages : 0u); i < fill; ++i) {
        ptxb::mbar_wait(&empty[i % kStages], (i / kStages) & 1u);
      }
    }
    return;
  }

  // ---------------- consumers ----------------
  ptxb::setmaxnreg_inc<kConsumerRegs>();
  const int c = warpgroup - 1;
  const int warp = wg_tid / 32, lane = wg_tid % 32;
  // Ping-pong: consumer c issues its GEMMs after named barrier 1+c completes, then arrives on
  // the other consumer's barrier 2-c (256 threads each). The alternation runs unbroken across
  // work items: consumer 1 arrives once up front, both arrive after every round, and consumer 0
  // syncs barrier 1 once more at the very end to take consumer 1's last arrival.
  const uint32_t my_turn = 1 + c, other_turn = 2 - c;

  const uint64_t desc_q0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(
      smem + kQOffset + c * kWarpgroupQBytes);
  const uint64_t desc_k0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem + kKOffset);
  const uint64_t desc_v0 =
      ptxb::make_wgmma_desc(ptxb::smem_u32(smem + kVOffset), 1024, 1024, ptxb::SmemSwizzle::k128B);

  float o_acc[kSlabs][kSlabCols / 2];
  float sacc[kBN / 2];
  uint32_t pfrag[kBN / 16][4];
  float m_run[2], l_run[2];
  const int tile_row0 = c * 64 + 16 * warp + lane / 4;  // query row (in the tile) of h = 0

  // Ring position of the item's KV tile r: absolute fill index base + r (the producer's order).
  uint32_t base = 0;
  int q_tile = 0;

  auto wait_k = [&](int r) {
    const uint32_t g = base + r;
    ptxb::mbar_wait(&kfull[g % kStages], (g / kStages) & 1u);
  };
  auto wait_v = [&](int r) {
    const uint32_t g = base + r;
    ptxb::mbar_wait(&vfull[g % kStages], (g / kStages) & 1u);
  };
  auto issue_s = [&](int r) {
    const uint32_t s = (base + r) % kStages;
    const uint64_t desc_k = ptxb::wgmma_desc_advance(desc_k0, s * kKvTileBytes);
#pragma unroll
    for (int kk = 0; kk < kQkSteps; ++kk) {
      const uint32_t col = (kk % 4) * 32;
      ptxb::wgmma_bf16_ss<kBN>(
          sacc, ptxb::wgmma_desc_advance(desc_q0, (kk / 4) * kQSlabBytes + col),
          ptxb::wgmma_desc_advance(desc_k, (kk / 4) * kKvSlabBytes + col), kk > 0);
    }
    ptxb::wgmma_commit_group();
  };
  auto issue_pv = [&](int r) {  // O += P_r · V_r
    const uint32_t s = (base + r) % kStages;
    const uint64_t desc_v = ptxb::wgmma_desc_advance(desc_v0, s * kKvTileBytes);
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
      const uint32_t off = kk * 16 * 128;  // 16 keys x 128 B rows
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        ptxb::wgmma_bf16_rs<kSlabCols, 1, 1, 1>(
            o_acc[slab], pfrag[kk], ptxb::wgmma_desc_advance(desc_v, slab * kKvSlabBytes + off),
            true);
      }
    }
    ptxb::wgmma_commit_group();
  };
  // Online softmax of S_r (base 2): P_r in sacc (fp32), alpha = rescale factor of older rows.
  auto softmax = [&](int r, float(&alpha)[2]) {
    ptxb::wgmma_fence_operand(sacc);
    // Keys at or past lim(row) are masked: causal (key > query) and the head's end (key >= S).
    // The tile needs it when its last key passes the tile's first query row or S.
    const int key0 = r * kBN;
    const bool causal_mask = kCausal && key0 + kBN - 1 > q_tile * kBM;
    const bool tail_mask = kTailPossible && key0 + kBN > S;
    if (causal_mask || tail_mask) {
      const int diag = q_tile * kBM - key0;  // tile-local key index of the tile's query row 0
      const int kv_lim = S - key0;
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) {
        const int row = tile_row0 + 8 * ((i / 2) % 2);
        const int col = 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
        const int lim = kCausal ? min(row + diag + 1, kv_lim) : kv_lim;
        if (col >= lim) sacc[i] = -INFINITY;
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx;
      if constexpr (kTree) {
        float m4[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
        for (int jn = 0; jn < kBN / 8; ++jn) {
          m4[jn % 4] = fmaxf(m4[jn % 4], fmaxf(sacc[4 * jn + 2 * h], sacc[4 * jn + 2 * h + 1]));
        }
        mx = fmaxf(fmaxf(m4[0], m4[1]), fmaxf(m4[2], m4[3]));
      } else {
        mx = -INFINITY;
#pragma unroll
        for (int jn = 0; jn < kBN / 8; ++jn) {
          mx = fmaxf(mx, fmaxf(sacc[4 * jn + 2 * h], sacc[4 * jn + 2 * h + 1]));
        }
      }
      mx = quad_max(mx);
      // Key tile 0 comes first and its key 0 is visible to every query, so m_new is finite
      // from the first tile on (a row fully masked in a later tile keeps m_run; its p are 0).
      const float m_new = fmaxf(m_run[h], mx * kScaleLog2);
      alpha[h] = ptxb::exp2_approx(m_run[h] - m_new);  // 0 on the first tile
      // Exactly 1 when the maximum stayed (what PTXB_F_SKIP_RESCALE tests), whatever ex2.approx
      // returns for 0.
      if constexpr (kSkipRescale) alpha[h] = m_new == m_run[h] ? 1.f : alpha[h];
      m_run[h] = m_new;
      float sum;
      if constexpr (kTree) {
        float s4[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int jn = 0; jn < kBN / 8; ++jn) {
          const float p0 = ptxb::exp2_approx(fmaf(sacc[4 * jn + 2 * h], kScaleLog2, -m_new));
          const float p1 = ptxb::exp2_approx(fmaf(sacc[4 * jn + 2 * h + 1], kScaleLog2, -m_new));
          sacc[4 * jn + 2 * h] = p0;
          sacc[4 * jn + 2 * h + 1] = p1;
          s4[jn % 4] += p0 + p1;
        }
        sum = (s4[0] + s4[1]) + (s4[2] + s4[3]);
      } else {
        sum = 0.f;
#pragma unroll
        for (int jn = 0; jn < kBN / 8; ++jn) {
          const float p0 = ptxb::exp2_approx(fmaf(sacc[4 * jn + 2 * h], kScaleLog2, -m_new));
          const float p1 = ptxb::exp2_approx(fmaf(sacc[4 * jn + 2 * h + 1], kScaleLog2, -m_new));
          sacc[4 * jn + 2 * h] = p0;
          sacc[4 * jn + 2 * h + 1] = p1;
          sum += p0 + p1;
        }
      }
      l_run[h] = l_run[h] * alpha[h] + sum;
    }
  };
  auto pv_done = [&](int r) {  // after wait_group: P_r·V_r complete, stage of tile r free
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) ptxb::wgmma_fence_operand(o_acc[slab]);
    if (wg_tid == 0) {
      uint64_t* bar = &empty[(base + r) % kStages];
      ptxb::mbar_arrive(bar);
    }
  };
  // PTXB_F_PIN 1. ptxas hoists wgmma.wait_group 0 (WARPGROUP.DEPBAR.LE gsb0, 0x0) from after
  // the softmax to right after the row max: rung 2's SASS waits for P_{r-1}·V_{r-1} before the
  // first exp, so the intra-warpgroup overlap covers only the max pass. A conditional branch
  // here ends the basic block and ptxas keeps the wait below it. The condition depends on the
  // row sums (every exp of the round) and is never true (l_run >= 0, sign bits 0); its body is a
  // harmless fence anyway.
  auto pin_pv_wait = [&]() {
    if ((__float_as_uint(l_run[0]) | __float_as_uint(l_run[1])) >> 31) {
      asm volatile("membar.cta;" ::: "memory");
    }
  };
  auto rescale = [&](const float(&alpha)[2]) {
    // PTXB_F_SKIP_RESCALE 1: once the running maxima settle, alpha is exactly 1 for most rows;
    // a warp whose 16 rows all kept their maximum skips the 64 multiplies by 1 (exact).
    if constexpr (kSkipRescale) {
      if (!__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) return;
    }
#pragma unroll
    for (int i = 0; i < kSlabCols / 2; ++i) {
      const float a = alpha[(i / 2) % 2];
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) o_acc[slab][i] *= a;
    }
  };
  auto pack = [&]() {  // P_r -> RS A fragments (k16 slice kk = accumulator registers 8kk..8kk+7)
    // Pack late: this fence (after the named barrier) keeps NVVM from hoisting the conversions
    // above bar.sync, back into the softmax phase (they write P·V's in-flight A registers).
    if constexpr (kPackLate) ptxb::wgmma_fence_operand(sacc);
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        pfrag[kk][q] = ptxb::pack_bf16x2(sacc[8 * kk + 2 * q], sacc[8 * kk + 2 * q + 1]);
      }
    }
  };
  // O by alpha_r before P_r·V_r is issued. Rung 2 (PTXB_F_RESCALE_EARLY 0): at the end of round
  // r, outside the tensor-core turn. FA3 order (1): in round r+1 right after S_{r+1} is issued,
  // so the multiplies run under this consumer's own Q·K^T instead of lengthening its softmax
  // phase; a second wgmma.fence then orders them before the P·V wgmmas.
  auto rescale_before_pv = [&](const float(&alpha)[2]) {
    if constexpr (kRescaleEarly) {
      // Fence first: NVVM may not move the multiplies above S's wgmmas (asm volatile order).
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) ptxb::wgmma_fence_operand(o_acc[slab]);
      rescale(alpha);
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) ptxb::wgmma_fence_operand(o_acc[slab]);
      ptxb::wgmma_fence();
    }
  };

  if (c == 1) ptxb::named_barrier_arrive(1, 256);  // consumer 0 takes the first turn

  int t = first_item;
  for (uint32_t k = 0;; ++k) {
    ptxb::mbar_wait(qfull, k & 1u);
    if constexpr (kPersistent) {
      t = *item_slot;
      if (t < 0) break;
    }
    const WorkItem w = decode_item(t, nq, bh, S);
    q_tile = w.q_tile;
    const int n = w.n;
    const int q_row0 = w.head_row0 + w.q_tile * kBM;
#pragma unroll
    for (int i = 0; i < kSlabCols / 2; ++i) {
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) o_acc[slab][i] = 0.f;
    }
    m_run[0] = m_run[1] = -INFINITY;
    l_run[0] = l_run[1] = 0.f;
    float alpha[2];

    // Round 0: S_0 only. (As in rung 2, no wgmma sits under a data-dependent branch and the
    // mbarrier spin loops come before the named barrier and wgmma.fence: C7520.)
    {
      wait_k(0);
      ptxb::named_barrier_sync(my_turn, 256);
      ptxb::wgmma_fence();
      issue_s(0);
      ptxb::named_barrier_arrive(other_turn, 256);
      ptxb::wgmma_wait_group<0>();
      if (kPersistent && n == 1 && wg_tid == 0) ptxb::mbar_arrive(qempty);
      softmax(0, alpha);
      if constexpr (!kRescaleEarly) rescale(alpha);
      if constexpr (!kPackLate) pack();
    }
    // Steady rounds: S_r and P_{r-1}·V_{r-1} in flight together; softmax of S_r overlaps P·V.
    for (int r = 1; r < n; ++r) {
      wait_k(r);
      wait_v(r - 1);
      ptxb::named_barrier_sync(my_turn, 256);
      if constexpr (kPackLate) pack();  // P_{r-1}, before S_r overwrites sacc
      ptxb::wgmma_fence();
      issue_s(r);
      rescale_before_pv(alpha);  // alpha_{r-1} (FA3 order only)
      issue_pv(r - 1);
      ptxb::named_barrier_arrive(other_turn, 256);
      ptxb::wgmma_wait_group<1>();  // S_r (the older group) is complete
      if (kPersistent && r == n - 1 && wg_tid == 0) ptxb::mbar_arrive(qempty);
      softmax(r, alpha);
      if constexpr (kPin) pin_pv_wait();
      ptxb::wgmma_wait_group<0>();
      pv_done(r - 1);
      if constexpr (!kRescaleEarly) rescale(alpha);
      if constexpr (!kPackLate) pack();
    }
    // Last round: P_{n-1}·V_{n-1} only.
    {
      wait_v(n - 1);
      ptxb::named_barrier_sync(my_turn, 256);
      if constexpr (kPackLate) pack();
      ptxb::wgmma_fence();
      rescale_before_pv(alpha);
      issue_pv(n - 1);
      ptxb::named_barrier_arrive(other_turn, 256);
      ptxb::wgmma_wait_group<0>();
      pv_done(n - 1);
    }
    base += static_cast<uint32_t>(n);

    // ---- epilogue ----
    float inv_l[2], lse[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float l = quad_sum(l_run[h]);
      inv_l[h] = 1.f / l;
      lse[h] = (m_run[h] + log2f(l)) * kLn2;  // natural log: m/log2(e) + ln(l)
    }
    const int64_t row_g = static_cast<int64_t>(q_row0) + tile_row0;  // global row of h = 0
    const int col_base = 2 * (lane % 4);
#pragma unroll
    for (int i = 0; i < kSlabCols / 2; i += 2) {
      const int h = (i / 2) % 2;
      const int64_t row = row_g + 8 * h;
      const int col = col_base + 8 * (i / 4);
      __nv_bfloat16* dst = O + row * kD + col;
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        if (slab * kSlabCols + 8 * (i / 4) < kD) {
          __nv_bfloat162* dst_slab = reinterpret_cast<__nv_bfloat162*>(dst + slab * kSlabCols);
          *dst_slab =
              __floats2bfloat162_rn(o_acc[slab][i] * inv_l[h], o_acc[slab][i + 1] * inv_l[h]);
        }
      }
    }
    if (lane % 4 == 0) {
      LSE[row_g] = lse[0];
      LSE[row_g + 8] = lse[1];
    }
    if constexpr (!kPersistent) break;
  }
  // Consumer 1's last arrival on barrier 1 (after its final round) still needs its partner.
  if (c == 0) ptxb::named_barrier_sync(my_turn, 256);
}

}  // namespace

void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O,
         float* LSE, int64_t B, int64_t H, int64_t D, int64_t S, cudaStream_t stream) {
  const int64_t rows = B * H * S;
  if (D != kD || S <= 0 || S % kBM != 0 || B <= 0 || H <= 0 || B * H > 65535 ||
      rows > (int64_t{1} << 31) - 1) {
    std::fprintf(stderr,
                 "mha_with_lse_d%d%s rung3: unsupported shape B=%lld H=%lld D=%lld S=%lld (need "
                 "D=%d, S %% 128 == 0, B*H <= 65535)\n",
                 kD, kCausal ? "_causal" : "", static_cast<long long>(B),
                 static_cast<long long>(H), static_cast<long long>(D), static_cast<long long>(S),
                 kD);
    return;
  }
  // 2-D views {D, B*H*S}, row pitch D*2 bytes; Q box {64, 128}, K/V box {64, kBN}, 128B swizzle.
  static const void* cached_ptrs[3] = {nullptr, nullptr, nullptr};
  static int64_t cached_rows = -1;
  static int num_sms = 0;
  static CUtensorMap tmap_q, tmap_k, tmap_v;
  if (cached_ptrs[0] != Q || cached_ptrs[1] != K || cached_ptrs[2] != V || cached_rows != rows) {
    if (ptxb::make_tensor_map_2d_bf16(&tmap_q, Q, static_cast<uint64_t>(rows), kD, kD, kBM,
                                      kSlabCols, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS ||
        ptxb::make_tensor_map_2d_bf16(&tmap_k, K, static_cast<uint64_t>(rows), kD, kD, kBN,
                                      kSlabCols, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS ||
        ptxb::make_tensor_map_2d_bf16(&tmap_v, V, static_cast<uint64_t>(rows), kD, kD, kBN,
                                      kSlabCols, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
      cached_rows = -1;
      return;
    }
    cudaFuncSetAttribute(mha_fwd_tuned_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         kSmemBytes);
    int dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, dev);
    cached_ptrs[0] = Q;
    cached_ptrs[1] = K;
    cached_ptrs[2] = V;
    cached_rows = rows;
  }
  const int nq = static_cast<int>(S / kBM);
  const int bh = static_cast<int>(B * H);
  dim3 grid(static_cast<unsigned>(nq), static_cast<unsigned>(bh));
  if (kPersistent) {
    const int64_t items = static_cast<int64_t>(nq) * bh;
    grid = dim3(static_cast<unsigned>(items < num_sms ? items : (num_sms > 0 ? num_sms : 1)));
  }
  mha_fwd_tuned_kernel<<<grid, kThreads, kSmemBytes, stream>>>(
      tmap_q, tmap_k, tmap_v, O, LSE, static_cast<int>(S), bh);
}
