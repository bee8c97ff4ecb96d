// PTXBench expert reference, tasks gqa_ragged_prefill_causal_h32_kv4_d128 (PTXB_GQA_PAGED 0,
// the default) and gqa_paged_prefill_causal_h24_kv8_d128_ps1 (PTXB_GQA_PAGED 1), rung 2:
// rung 1 (rung1_tma_wgmma.cu here: producer warpgroup, tile mapping, masks, loads, epilogue --
// all identical) with the consumer loop of mha_with_lse_d128/rung2_warp_specialized.cu:
// ping-pong scheduling of the two consumers' GEMMs through named barriers 1 and 2, and the
// softmax of S_r overlapping the P_{r-1}·V_{r-1} wgmmas (FA3's two ideas).
// One source: "#define PTXB_GQA_PAGED 1" in front gives the paged kernel (and its run ABI).
//
//   q            [total_q, Hq, 128] bf16            (ragged: Hq = 32, Hkv = 4; paged: 24, 8)
//   ragged k, v  [total_kv, Hkv, 128] bf16; request b owns rows kv_indptr[b]..kv_indptr[b+1]-1
//   paged k, v   [num_pages, page_size = 1, Hkv, 128] bf16; key t of request b is page
//                kv_indices[kv_indptr[b] + t]
//   output       [total_q, Hq, 128] bf16, lse [total_q, Hq] fp32 BASE-2 logsumexp of the scaled
//                scores (FlashInfer's convention, as the reference).
//   Query head h reads KV head h / (Hq / Hkv). Request b owns query rows qo_indptr[b]..+q_len.
//   Causal mask aligned bottom-right: local query i sees local keys j <= i + kv_len - q_len.
//   Rows that see no key (only possible when q_len > kv_len, or kv_len == 0) get output 0 and
//   lse -inf (the reference leaves 0/-inf when kv_len == 0; for q_len > kv_len its softmax of
//   an all -inf row is NaN -- no workload has q_len > kv_len).
//
// Design
//   Tile mapping   no host copy of the indptrs: grid.x = bound * Hq CTAs with
//                  bound = (total_q + 127 * num_requests) / 128 >= sum_b ceil(q_len_b / 128).
//                  CTA L: head h = L % Hq (heads fastest: the Hq/Hkv heads sharing a KV head run
//                  side by side and share K/V in L2), t = L / Hq walks the requests in order
//                  (every warp: lane i loads request i's four indptr values at once, a shuffle
//                  prefix sum of the tile counts finds the owner; one L2 round trip per 32
//                  requests); inside a request the query tiles are taken last-first (heaviest
//                  causal tile first).
//                  CTAs with t past the last tile exit at once (at most num_requests*Hq).
//   Threads        384 = 3 warpgroups, __launch_bounds__(384, 1) (168 registers at launch):
//                    warpgroup 0     producer, setmaxnreg.dec 40: issues every TMA (ragged:
//                                    thread 0 alone; paged: all 128 threads, see Loads);
//                    warpgroups 1-2  consumers c = 0, 1, setmaxnreg.inc 232: query rows
//                                    64c..64c+63 of the 128-row tile, the MHA rung-2 loop
//                                    (ping-pong, below); they use up to R201.
//                  (A 9-warp CTA, 2 consumer warpgroups + 1 producer warp, would be capped at
//                  168 registers: 3 warps share one SM sub-partition's 16K registers.)
//   Consumer round r (r = 0..n, n = KV tiles of this query tile; as the MHA rung 2):
//                  [wait my turn: named barrier 1+c]
//                  issue S_r = Q_c·K_r^T (8 x wgmma.m64n128k16 SS)              if r < n
//                  issue O += P_{r-1}·V_{r-1} (16 x wgmma.m64n64k16 RS)        if r > 0
//                  [hand the tensor cores to the other consumer: named barrier 2-c]
//                  wait S_r; mask; online softmax (base 2) -> P_r, while P_{r-1}·V_{r-1} runs
//                  wait P·V; release stage of tile r-1; O *= alpha_r; P_r -> bf16 RS fragments
//                  n = 0 (no visible key): both consumers skip the loop, no barrier touched.
//   Per KV tile j  (128 keys), per consumer warpgroup, the same math as the MHA rung 1:
//                  S(64x128 fp32) = Q_w · K_j^T   8 x wgmma.m64n128k16 SS (K-major A and B)
//                  [mask: key > query + kv_len - q_len or key >= kv_len -> -inf, only in tiles
//                   that reach past the first row's limit]
//                  online softmax base 2 (scores prescaled by sm_scale * log2 e), O rescale;
//                  rows with no visible key yet keep m = -inf and use 0 as the exp2 base
//                  O(64x128 fp32) += P · V_j  8 k16 steps x 2 x wgmma.m64n64k16 RS, V MN-major
//   Causal range   kv_end = min(kv_len, min(q0 + 128, q_len) + kv_len - q_len) keys,
//                  ceil(kv_end / 128) tiles; nothing above the last row's diagonal is loaded.
//   Loads          Q: 3-D tensor map {D=128, Hq, total_q}, box {64, 1, 128}, 128B swizzle: one
//                  box = 128 tokens x 64 columns of one head = the same 16 KiB swizzled slab as
//                  the MHA kernel's 2-D box {64, 128}; two boxes (slabs) per tile.
//                  Ragged K/V: same 3-D map over {128, Hkv, total_kv}; tile j of request b =
//                  tokens kv_indptr[b] + 128j..; rows past the request (next request / zero
//                  fill past total_kv) are masked by key >= kv_len, and their P is exactly 0.
//                  Paged K/V (page size 1): 3-D map {128, Hkv, num_pages}, box {64, 1, 1}: one
//                  128-byte row box per key row and slab, written at row*128 inside the
//                  1024-aligned slab. TMA's 128B swizzle is a function of the absolute shared
//                  address (bits 4-6 ^= bits 7-9), so a one-row box at row r lands exactly where
//                  the 128-row box would have put it. Producer thread r gathers key row r of
//                  every tile: 2 slabs x (K, V) = 4 one-row TMAs per thread, 512 per tile;
//                  the page index is loaded before waiting for the free stage. Rows past
//                  kv_len re-read the request's last page (masked, P = 0).
//                  Alternative paged gather, "#define PTXB_GQA_PAGED_CPASYNC 1" (also off the
//                  default; for an A/B on the GPU, or if the one-row swizzled boxes misbehave):
//                  producer thread r copies row r with 2 x 16 cp.async.cg of 16 B each, chunk c
//                  stored at chunk c ^ (r % 8) (the TMA 128B-swizzle layout), waits for its own
//                  copies (cp.async.wait_group), fence.proxy.async (wgmma reads through the async
//                  proxy), then arrives: kfull/vfull count 128 arrivals, no tx bytes. Q stays TMA.
//   Shared memory  Q 32 KiB + 3 stages x (K 32 KiB + V 32 KiB) = 224 KiB + 10 barriers + 1 KiB
//                  alignment slack = 230,480 B (<= 227 KiB opt-in).
//   Pipeline       depth 3. kfull[s], vfull[s]: 1 arrival (producer thread 0's arrive.expect_tx
//                  of 32 KiB, the full box bytes) + the TMA bytes; empty[s]: 2 arrivals (one per
//                  consumer warpgroup after its P·V wgmmas of the tile completed). The producer
//                  refills stage s with tile j once empty[s] completed phase j/3 - 1.
//                  Paged (TMA rows): thread 0's arrive.expect_tx precedes every row box of the
//                  fill (named barrier 3 over the 128 producer threads after it).
//   Epilogue       O = acc / l -> bf16x2 4-byte global stores (rows < q_len only); lse = m2 +
//                  log2 l (base 2) by lane%4 == 0 for its two rows; l == 0 -> O 0, lse -inf.
//   Host           one launch on `stream`, no host copy or sync, no scratch memory; the three
//                  tensor maps are cached across calls, keyed by pointers and shape.
//
// Build: ptxbench tasks solution gqa_ragged_prefill_causal_h32_kv4_d128 --turn 2 >k.cu &&
//        ptxbench compile k.cu --task gqa_ragged_prefill_causal_h32_kv4_d128
//        (paged: the same with "#define PTXB_GQA_PAGED 1" in front, --task
//        gqa_paged_prefill_causal_h24_kv8_d128_ps1)
// ptxas (nvcc 13.0, sm_90a, 2026-12-02), both variants: 168 registers at launch (consumers
//   raise theirs with setmaxnreg to 232 and use up to R201), 0 spill bytes, no stack, no ptxas
//   diagnostic (no wgmma serialisation warning); SASS 48 HGMMA + 6 UTMALDG (ragged and paged
//   alike). Paged with PTXB_GQA_PAGED_CPASYNC 1: 48 HGMMA + 2 UTMALDG (Q) + 32 LDGSTS.
// Measured speed (H200, 2026-12-02, clocks as found, CUPTI medians, L2 flushed; FlashInfer
//   0.6.14's SM90 prefill as the reference), all PASSED with GMMA and TMA executed:
//   ragged 0.2979 ms vs 0.2519 ms = 0.846x (seed 22; replay turn 2 0.843x); paged with the
//   per-row TMA gather 0.545x (seed 22), with PTXB_GQA_PAGED_CPASYNC 1 0.635x (seed 23).
//   The paged task stays below the 0.8x goal: 768 one-per-SM CTAs of ~4.5 KV tiles each pay
//   their prologue and the wave tail on a 0.08 ms problem (FlashInfer runs 132 persistent CTAs).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "ptxb/hopper.cuh"

#ifndef PTXB_GQA_PAGED
#define PTXB_GQA_PAGED 0
#endif
// Paged only, alternative K/V gather (not the default): 1 = cp.async 16-byte copies into the
// swizzled layout (computed XOR) instead of one-row TMA boxes; see the top comment.
#ifndef PTXB_GQA_PAGED_CPASYNC
#define PTXB_GQA_PAGED_CPASYNC 0
#endif
#define PTXB_GQA_GATHER_CPASYNC (PTXB_GQA_PAGED && PTXB_GQA_PAGED_CPASYNC)

namespace {

constexpr bool kPaged = PTXB_GQA_PAGED != 0;
constexpr bool kGatherCpAsync = PTXB_GQA_GATHER_CPASYNC != 0;

constexpr int kD = 128;            // head dim (task constant)
constexpr int kBM = 128;           // query rows per CTA
constexpr int kBN = 128;           // keys per KV tile
constexpr int kSlabCols = 64;      // 64 bf16 = 128 B = one 128B-swizzle span (TMA box inner dim)
constexpr int kSlabs = kD / kSlabCols;
constexpr int kQkSteps = kD / 16;
constexpr int kStages = 3;
constexpr int kConsumerWarpgroups = kBM / 64;
constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);  // warpgroup 0 = producer
// Registers per SM sub-partition: a 9-warp CTA would be capped at 168 per thread (3 warps on
// one SMSP), so the producer is a whole warpgroup that gives its registers to the consumers.
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

constexpr uint32_t kSlabBytes = kBM * kSlabCols * 2;            // 16 KiB: 128 rows x 128 B
constexpr uint32_t kTileBytes = kSlabs * kSlabBytes;            // 32 KiB
constexpr uint32_t kWarpgroupQBytes = 64 * kSlabCols * 2;       // 8 KiB: rows 64w.. of a slab
constexpr uint32_t kRowBytes = kSlabCols * 2;                   // 128 B: one slab row
constexpr uint32_t kQOffset = 0;
constexpr uint32_t kKOffset = kQOffset + kTileBytes;            // kStages x tile
constexpr uint32_t kVOffset = kKOffset + kStages * kTileBytes;  // kStages x tile
constexpr uint32_t kBarOffset = kVOffset + kStages * kTileBytes;
constexpr uint32_t kNumBarriers = 1 + 3 * kStages;              // qfull, kfull[], vfull[], empty[]
constexpr uint32_t kSmemBytes = kBarOffset + kNumBarriers * 8 + 1024;  // + alignment slack

constexpr float kLog2e = 1.4426950408889634f;

static_assert(kBN == 128, "paged gather: one key row per producer thread");
static_assert(kRowBytes * kBM == kSlabBytes, "slab = 128 rows of 128 B");
static_assert(128 * kProducerRegs + 128 * kConsumerWarpgroups * kConsumerRegs <= 65536,
              "setmaxnreg split must fit the 64K-register file");
static_assert(kSlabCols * 2 == 128, "slab rows = exactly the 128 B swizzle span");
static_assert(kSlabBytes % 1024 == 0 && kWarpgroupQBytes % 1024 == 0 && kTileBytes % 1024 == 0,
              "operand tiles must stay 1024-byte aligned (128B swizzle atom, base offset 0)");
static_assert(kSmemBytes <= 227 * 1024, "dynamic shared memory per block is at most 227 KiB");

struct Params {
  const int32_t* qo_indptr;
  const int32_t* kv_indptr;
  const int32_t* kv_indices;  // paged only
  const __nv_bfloat16* k;     // paged cp.async gather only
  const __nv_bfloat16* v;
  int num_kv_heads;
  __nv_bfloat16* out;
  float* lse;
  int num_requests;
  int num_qo_heads;
  int group;  // num_qo_heads / num_kv_heads
  float scale_log2;  // sm_scale * log2(e)
};

#if PTXB_GQA_GATHER_CPASYNC
// cp.async gather (PTXB_GQA_PAGED_CPASYNC 1): 16 bytes global -> shared, L2 only.
__device__ __forceinline__ void cp_async_16(uint32_t smem_dst, const void* gmem_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_dst), "l"(gmem_src)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}
#endif

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

__global__ void __launch_bounds__(kThreads, 1)
    gqa_prefill_kernel(const __grid_constant__ CUtensorMap tmap_q,
                       const __grid_constant__ CUtensorMap tmap_k,
                       const __grid_constant__ CUtensorMap tmap_v, const Params p) {
  // ---- work item: (request, query tile, head); uniform over the CTA ----
  const int head = static_cast<int>(blockIdx.x % static_cast<unsigned>(p.num_qo_heads));
  int t = static_cast<int>(blockIdx.x / static_cast<unsigned>(p.num_qo_heads));
  int req = -1, q_tile = 0, q_begin = 0, q_len = 0, kv_begin = 0, kv_len = 0;
  {
    // Warp-parallel scan (every warp of the CTA computes the same answer): lane i holds request
    // base + i, whose 4 indptr loads are all in flight at once (one L2 round trip per 32
    // requests instead of a dependent chain), an inclusive prefix sum of the requests' tile
    // counts finds the request that owns tile t. Uniform over the CTA.
    const int lane = static_cast<int>(threadIdx.x % 32);
    for (int base = 0; base < p.num_requests; base += 32) {
      const int r = base + lane;
      const bool valid = r < p.num_requests;
      const int lo = valid ? __ldg(p.qo_indptr + r) : 0;
      const int hi = valid ? __ldg(p.qo_indptr + r + 1) : 0;
      const int kv_lo = valid ? __ldg(p.kv_indptr + r) : 0;
      const int kv_hi = valid ? __ldg(p.kv_indptr + r + 1) : 0;
      const int nt = hi > lo ? (hi - lo + kBM - 1) / kBM : 0;
      int incl = nt;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += v;
      }
      const int excl = incl - nt;
      const unsigned hit = __ballot_sync(0xffffffffu, t >= excl && t < incl);
      if (hit != 0u) {
        const int src = __ffs(hit) - 1;
        req = base + src;
        // Heaviest (last) causal tile of the request first.
        q_tile = __shfl_sync(0xffffffffu, incl, src) - 1 - t;
        q_begin = __shfl_sync(0xffffffffu, lo, src);
        q_len = __shfl_sync(0xffffffffu, hi - lo, src);
        kv_begin = __shfl_sync(0xffffffffu, kv_lo, src);
        kv_len = max(__shfl_sync(0xffffffffu, kv_hi - kv_lo, src), 0);
        break;
      }
      t -= __shfl_sync(0xffffffffu, incl, 31);
    }
  }
  if (req < 0) return;  // past the last tile (the grid is an upper bound)
  const int q0 = q_tile * kBM;                   // first local query row of the tile
  const int diag = kv_len - q_len;               // local query i sees keys j <= i + diag
  const int q_hi = min(q0 + kBM, q_len);         // one past the tile's last real row
  const int kv_end = min(kv_len, q_hi + diag);   // keys visible to any real row of the tile
  const int num_kv_tiles = kv_end > 0 ? (kv_end + kBN - 1) / kBN : 0;
  const int kv_head = head / p.group;

  extern __shared__ uint8_t smem_raw[];
  // 128B swizzle = XOR of address bits 4-6 with bits 7-9: every operand tile starts on 1024 B.
  uint8_t* smem = smem_raw + ((1024u - (ptxb::smem_u32(smem_raw) & 1023u)) & 1023u);
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kBarOffset);
  uint64_t* qfull = bars;
  uint64_t* kfull = bars + 1;
  uint64_t* vfull = bars + 1 + kStages;
  uint64_t* empty = bars + 1 + 2 * kStages;

  const int tid = threadIdx.x;
  if (tid == 0) {
    ptxb::mbar_init(qfull, 1);
    for (int s = 0; s < kStages; ++s) {
      // Producer thread 0's arrive.expect_tx (TMA), or every producer thread's arrival after
      // its own cp.async copies landed (cp.async gather).
      ptxb::mbar_init(&kfull[s], kGatherCpAsync ? 128 : 1);
      ptxb::mbar_init(&vfull[s], kGatherCpAsync ? 128 : 1);
      ptxb::mbar_init(&empty[s], kConsumerWarpgroups);  // one elected thread per warpgroup
    }
    ptxb::fence_mbarrier_init();  // inits visible to the async proxy before TMA signals them
  }
  // The only CTA-wide barrier: afterwards the roles synchronise through mbarriers alone.
  __syncthreads();

  const int warpgroup = tid / 128;
  const int wg_tid = tid % 128;

  if (warpgroup == 0) {
    // ================= producer warpgroup =================
    ptxb::setmaxnreg_dec<kProducerRegs>();  // warpgroup-collective; frees registers
    if (num_kv_tiles == 0) return;          // nothing to load; consumers write 0 / -inf
    // Ragged: thread 0 issues every box. Paged: thread r (0..127) gathers key row r of each
    // tile (4 one-row boxes), thread 0 also issues Q and the arrive.expect_tx.
    const bool issuer = kPaged || wg_tid == 0;
    if (wg_tid == 0) {
      ptxb::prefetch_tensormap(&tmap_q);
      ptxb::prefetch_tensormap(&tmap_k);
      ptxb::prefetch_tensormap(&tmap_v);
      ptxb::mbar_arrive_expect_tx(qfull, kTileBytes);
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        ptxb::tma_load(smem + kQOffset + slab * kSlabBytes, &tmap_q, qfull, slab * kSlabCols,
                       head, q_begin + q0);
      }
    }
    if (!issuer) return;  // ragged: producer threads 1..127 retire
    for (int j = 0; j < num_kv_tiles; ++j) {
      const int s = j % kStages;
      uint8_t* k_dst = smem + kKOffset + s * kTileBytes;
      uint8_t* v_dst = smem + kVOffset + s * kTileBytes;
#if PTXB_GQA_PAGED
      // Page of this thread's key row, fetched before waiting for the free stage so the index
      // latency overlaps the wait. Rows past kv_len re-read the last key's page (masked, P = 0).
      const int page = __ldg(p.kv_indices + kv_begin + min(j * kBN + wg_tid, kv_len - 1));
#endif
      // Stage s last held tile j - kStages; empty[s] completes phase n when tile s + n*kStages
      // was released by both consumer warpgroups.
      if (j >= kStages) ptxb::mbar_wait(&empty[s], static_cast<uint32_t>(j / kStages - 1) & 1u);
#if PTXB_GQA_GATHER_CPASYNC
      {
        // Row r = wg_tid of the tile: 2 slabs x 8 chunks of 16 B per tensor, chunk c of slab row
        // r stored at chunk c ^ (r % 8) -- the layout TMA's 128B swizzle gives the 1024-aligned
        // slab. Each thread waits for its own copies, fences them into the async proxy (wgmma
        // reads through it) and then arrives: the writer-side pattern of generic-proxy stores.
        const int r = wg_tid;
        const int64_t src_row = (static_cast<int64_t>(page) * p.num_kv_heads + kv_head) * kD;
        const uint32_t k_row = ptxb::smem_u32(k_dst) + static_cast<uint32_t>(r) * kRowBytes;
        const uint32_t v_row = ptxb::smem_u32(v_dst) + static_cast<uint32_t>(r) * kRowBytes;
#pragma unroll
        for (int slab = 0; slab < kSlabs; ++slab) {
#pragma unroll
          for (int c = 0; c < 8; ++c) {
            cp_async_16(k_row + slab * kSlabBytes + ((c ^ (r & 7)) << 4),
                        p.k + src_row + slab * kSlabCols + c * 8);
          }
        }
        cp_async_commit();
#pragma unroll
        for (int slab = 0; slab < kSlabs; ++slab) {
#pragma unroll
          for (int c = 0; c < 8; ++c) {
            cp_async_16(v_row + slab * kSlabBytes + ((c ^ (r & 7)) << 4),
                        p.v + src_row + slab * kSlabCols + c * 8);
          }
        }
        cp_async_commit();
        cp_async_wait<1>();  // this thread's K copies landed
        ptxb::fence_proxy_async_smem();
        ptxb::mbar_arrive(&kfull[s]);
        cp_async_wait<0>();  // and its V copies
        ptxb::fence_proxy_async_smem();
        ptxb::mbar_arrive(&vfull[s]);
      }
#elif PTXB_GQA_PAGED
      if (wg_tid == 0) {
        // One arrival + the full tile bytes (128 rows x 2 slabs x 128 B) per barrier.
        ptxb::mbar_arrive_expect_tx(&kfull[s], kTileBytes);
        ptxb::mbar_arrive_expect_tx(&vfull[s], kTileBytes);
      }
      // No row box of this fill is issued before its bytes are expected (no reliance on a
      // transiently negative tx-count): named barrier 3 over the 128 producer threads (the
      // consumers' ping-pong in rung 2 uses 1 and 2).
      ptxb::named_barrier_sync(3, 128);
      const uint32_t row_off = static_cast<uint32_t>(wg_tid) * kRowBytes;
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        ptxb::tma_load(k_dst + slab * kSlabBytes + row_off, &tmap_k, &kfull[s], slab * kSlabCols,
                       kv_head, page);
      }
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        ptxb::tma_load(v_dst + slab * kSlabBytes + row_off, &tmap_v, &vfull[s], slab * kSlabCols,
                       kv_head, page);
      }
#else
      const int row = kv_begin + j * kBN;
      ptxb::mbar_arrive_expect_tx(&kfull[s], kTileBytes);
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        ptxb::tma_load(k_dst + slab * kSlabBytes, &tmap_k, &kfull[s], slab * kSlabCols, kv_head,
                       row);
      }
      ptxb::mbar_arrive_expect_tx(&vfull[s], kTileBytes);
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        ptxb::tma_load(v_dst + slab * kSlabBytes, &tmap_v, &vfull[s], slab * kSlabCols, kv_head,
                       row);
      }
#endif
    }
    // Tail (as the MHA rung 2): the issuing threads stay until the consumers released the last
    // fills, so every box they issued has landed and been consumed before they retire.
    for (int j = (num_kv_tiles > kStages ? num_kv_tiles - kStages : 0); j < num_kv_tiles; ++j) {
      ptxb::mbar_wait(&empty[j % kStages], static_cast<uint32_t>(j / kStages) & 1u);
    }
    return;
  }

  // ================= consumer warpgroups =================
  ptxb::setmaxnreg_inc<kConsumerRegs>();
  const int cw = warpgroup - 1;  // consumer index: query rows 64cw..64cw+63 of the tile
  const int warp = wg_tid / 32, lane = wg_tid % 32;
  // Ping-pong (as the MHA rung 2): consumer cw issues its GEMMs after named barrier 1+cw
  // completes, then arrives on the other consumer's barrier 2-cw. Each barrier needs 256
  // threads: this consumer's 128 that sync plus the other's 128 that arrive.
  const uint32_t my_turn = 1 + cw, other_turn = 2 - cw;

  // Descriptors (as the MHA kernels). Q and K K-major, 128B swizzle, SBO = 1024; k16 step kk =
  // slab kk/4 (+16 KiB) and +32 B * (kk%4). Consumer c reads Q rows 64c.. (+8 KiB per slab).
  // V: B of P·V, MN-major (imm-trans-b = 1); one m64n64 wgmma per 64-column slab; K = 16 keys =
  // two 8-key atoms 1024 B apart (LBO = SBO = 1024); k16 step = +2048 B.
  const uint64_t desc_q0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(
      smem + kQOffset + cw * kWarpgroupQBytes);
  const uint64_t desc_k0 =
      ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem + kKOffset);
  const uint64_t desc_v0 = ptxb::make_wgmma_desc(ptxb::smem_u32(smem + kVOffset), 1024, 1024,
                                                 ptxb::SmemSwizzle::k128B);

  float o_acc[kSlabs][kSlabCols / 2];
#pragma unroll
  for (int i = 0; i < kSlabCols / 2; ++i) {
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) o_acc[slab][i] = 0.f;
  }
  float sacc[kBN / 2];
  uint32_t pfrag[kBN / 16][4];
  float m_run[2] = {-INFINITY, -INFINITY};
  float l_run[2] = {0.f, 0.f};
  // Tile row of accumulator rows h = 0 / 1 (row l/4 and l/4 + 8 of the warp's 16 rows).
  const int tile_row0 = cw * 64 + 16 * warp + lane / 4;
  // Last visible local key of the thread's two rows: min(i + diag, kv_len - 1).
  int key_lim[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) key_lim[h] = min(q0 + tile_row0 + 8 * h + diag, kv_len - 1);
  // Smallest limit of the tile (its first row): tiles whose last key is <= this need no mask.
  const int tile_lim = min(q0 + diag, kv_len - 1);
  const float scale_log2 = p.scale_log2;

  auto wait_k = [&](int j) {
    ptxb::mbar_wait(&kfull[j % kStages], static_cast<uint32_t>(j / kStages) & 1u);
  };
  auto wait_v = [&](int j) {
    ptxb::mbar_wait(&vfull[j % kStages], static_cast<uint32_t>(j / kStages) & 1u);
  };
  auto issue_s = [&](int r) {
    const int s = r % kStages;
    const uint64_t desc_k = ptxb::wgmma_desc_advance(desc_k0, s * kTileBytes);
#pragma unroll
    for (int kk = 0; kk < kQkSteps; ++kk) {
      const uint32_t off = (kk / 4) * kSlabBytes + (kk % 4) * 32;
      ptxb::wgmma_bf16_ss<kBN>(sacc, ptxb::wgmma_desc_advance(desc_q0, off),
                               ptxb::wgmma_desc_advance(desc_k, off), kk > 0);
    }
    ptxb::wgmma_commit_group();
  };
  auto issue_pv = [&](int j) {  // O += P_j · V_j
    const int s = j % kStages;
    const uint64_t desc_v = ptxb::wgmma_desc_advance(desc_v0, s * kTileBytes);
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
      const uint32_t off = kk * 16 * 128;  // 16 keys x 128 B rows
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        ptxb::wgmma_bf16_rs<kSlabCols, 1, 1, 1>(
            o_acc[slab], pfrag[kk], ptxb::wgmma_desc_advance(desc_v, slab * kSlabBytes + off),
            true);
      }
    }
    ptxb::wgmma_commit_group();
  };
  // Online softmax of S_r (base 2): P_r in sacc (fp32), alpha = rescale factor of older rows.
  auto softmax = [&](int r, float(&alpha)[2]) {
    ptxb::wgmma_fence_operand(sacc);
    // sacc[i] of (warp w, lane l) is row 16w + l/4 + 8*((i/2)%2), key 8*(i/4) + 2*(l%4) + i%2.
    const int key0 = r * kBN;
    if (key0 + kBN - 1 > tile_lim) {
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) {
        const int key = key0 + 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
        if (key > key_lim[(i / 2) % 2]) sacc[i] = -INFINITY;
      }
    }
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int jn = 0; jn < kBN / 8; ++jn) {
        mx = fmaxf(mx, fmaxf(sacc[4 * jn + 2 * h], sacc[4 * jn + 2 * h + 1]));
      }
      mx = quad_max(mx);
      const float m_new = fmaxf(m_run[h], mx * scale_log2);
      // A row that has seen no key yet (m_new = -inf: all masked) uses 0 as the base, so that
      // exp2(-inf - 0) = 0 instead of NaN; its l stays 0.
      const float m_use = m_new == -INFINITY ? 0.f : m_new;
      alpha[h] = ptxb::exp2_approx(m_run[h] - m_use);  // 0 while m_run = -inf
      m_run[h] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int jn = 0; jn < kBN / 8; ++jn) {
        const float p0 = ptxb::exp2_approx(fmaf(sacc[4 * jn + 2 * h], scale_log2, -m_use));
        const float p1 = ptxb::exp2_approx(fmaf(sacc[4 * jn + 2 * h + 1], scale_log2, -m_use));
        sacc[4 * jn + 2 * h] = p0;
        sacc[4 * jn + 2 * h + 1] = p1;
        sum += p0 + p1;
      }
      l_run[h] = l_run[h] * alpha[h] + sum;
    }
  };
  auto pv_done = [&](int j) {  // after wait_group: P_j·V_j complete, stage of tile j free
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) ptxb::wgmma_fence_operand(o_acc[slab]);
    if (wg_tid == 0) ptxb::mbar_arrive(&empty[j % kStages]);
  };
  // O holds the P·V sum scaled to the previous maximum; bring it to the new one, then repack
  // P_r as RS A fragments (k16 slice kk = accumulator registers 8kk..8kk+7).
  auto rescale_and_pack = [&](const float(&alpha)[2]) {
#pragma unroll
    for (int i = 0; i < kSlabCols / 2; ++i) {
      const float a = alpha[(i / 2) % 2];
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) o_acc[slab][i] *= a;
    }
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        pfrag[kk][q] = ptxb::pack_bf16x2(sacc[8 * kk + 2 * q], sacc[8 * kk + 2 * q + 1]);
      }
    }
  };

  // num_kv_tiles is the same for both consumers of the CTA, so both skip the main loop
  // together when it is 0 (no named barrier is then touched at all).
  if (num_kv_tiles > 0) {
    if (cw == 1) ptxb::named_barrier_arrive(1, 256);  // consumer 0 takes the first turn
    ptxb::mbar_wait(qfull, 0);
    // The three round shapes (first: S only; steady: S and P·V; last: P·V only) are written
    // out separately so that no wgmma sits under a data-dependent branch (ptxas would
    // serialise it, C7520). The mbarrier waits come before the named barrier and wgmma.fence.
    // Round 0: S_0 only.
    {
      wait_k(0);
      ptxb::named_barrier_sync(my_turn, 256);
      ptxb::wgmma_fence();
      issue_s(0);
      ptxb::named_barrier_arrive(other_turn, 256);
      ptxb::wgmma_wait_group<0>();
      float alpha[2];
      softmax(0, alpha);
      rescale_and_pack(alpha);
    }
    // Steady rounds: S_r and P_{r-1}·V_{r-1} in flight together; softmax of S_r overlaps P·V.
    for (int r = 1; r < num_kv_tiles; ++r) {
      wait_k(r);
      wait_v(r - 1);
      ptxb::named_barrier_sync(my_turn, 256);
      ptxb::wgmma_fence();  // sacc, O and pfrag were last written by ordinary instructions
      issue_s(r);
      issue_pv(r - 1);
      ptxb::named_barrier_arrive(other_turn, 256);
      ptxb::wgmma_wait_group<1>();  // S_r (the older group) is complete
      float alpha[2];
      softmax(r, alpha);
      ptxb::wgmma_wait_group<0>();
      pv_done(r - 1);
      rescale_and_pack(alpha);
    }
    // Last round: P_{n-1}·V_{n-1} only. Consumer 1 skips its arrive: barrier 1 has no sync left
    // to pair with it (each consumer syncs n+1 times, on n+1 arrivals of the other).
    {
      wait_v(num_kv_tiles - 1);
      ptxb::named_barrier_sync(my_turn, 256);
      ptxb::wgmma_fence();
      issue_pv(num_kv_tiles - 1);
      if (cw == 0) ptxb::named_barrier_arrive(other_turn, 256);
      ptxb::wgmma_wait_group<0>();
      pv_done(num_kv_tiles - 1);
    }
  }

  // ---- epilogue ----
  float inv_l[2], lse[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const float l = quad_sum(l_run[h]);
    inv_l[h] = l > 0.f ? 1.f / l : 0.f;
    lse[h] = l > 0.f ? m_run[h] + log2f(l) : -INFINITY;  // base 2
  }
  const int col_base = 2 * (lane % 4);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int row_local = q0 + tile_row0 + 8 * h;
    if (row_local < q_len) {
      const int64_t token = static_cast<int64_t>(q_begin) + row_local;
      const int64_t row_g = token * p.num_qo_heads + head;
      __nv_bfloat16* dst_row = p.out + row_g * kD;
#pragma unroll
      for (int i = 2 * h; i < kSlabCols / 2; i += 4) {
        // i with (i/2)%2 == h: registers i, i+1 = columns 8*(i/4) + col_base + {0, 1}.
        const int col = col_base + 8 * (i / 4);
#pragma unroll
        for (int slab = 0; slab < kSlabs; ++slab) {
          *reinterpret_cast<__nv_bfloat162*>(dst_row + slab * kSlabCols + col) =
              __floats2bfloat162_rn(o_acc[slab][i] * inv_l[h], o_acc[slab][i + 1] * inv_l[h]);
        }
      }
      if (lane % 4 == 0) p.lse[row_g] = lse[h];
    }
  }
}

}  // namespace

#if PTXB_GQA_PAGED
void run(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
         const int32_t* qo_indptr, const int32_t* kv_indptr, const int32_t* kv_indices,
         float sm_scale, __nv_bfloat16* output, float* lse, int64_t num_qo_heads,
         int64_t num_kv_heads, int64_t head_dim, int64_t page_size, int64_t len_indptr,
         int64_t total_q, int64_t num_kv_indices, int64_t num_pages, cudaStream_t stream) {
  const __nv_bfloat16* k = k_cache;
  const __nv_bfloat16* v = v_cache;
  const int64_t kv_rows = num_pages;  // page_size == 1: one key row per page
  const char* name = "gqa_paged_prefill_causal_h24_kv8_d128_ps1";
  const bool shape_ok = page_size == 1 && num_pages >= 0 && num_kv_indices >= 0;
#else
void run(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
         const int32_t* qo_indptr, const int32_t* kv_indptr, float sm_scale,
         __nv_bfloat16* output, float* lse, int64_t num_qo_heads, int64_t num_kv_heads,
         int64_t head_dim, int64_t len_indptr, int64_t total_q, int64_t total_kv,
         cudaStream_t stream) {
  const int32_t* kv_indices = nullptr;
  const int64_t kv_rows = total_kv;
  const char* name = "gqa_ragged_prefill_causal_h32_kv4_d128";
  const bool shape_ok = total_kv >= 0;
#endif
  const int64_t num_requests = len_indptr - 1;
  if (num_requests <= 0 || total_q <= 0) return;  // no query rows: nothing to write
  if (!shape_ok || head_dim != kD || num_qo_heads <= 0 || num_kv_heads <= 0 ||
      num_qo_heads % num_kv_heads != 0 || num_qo_heads > 65535 || kv_rows >= (int64_t{1} << 31) ||
      total_q >= (int64_t{1} << 31)) {
    std::fprintf(stderr,
                 "%s rung2: unsupported shape Hq=%lld Hkv=%lld D=%lld total_q=%lld kv_rows=%lld\n",
                 name, static_cast<long long>(num_qo_heads), static_cast<long long>(num_kv_heads),
                 static_cast<long long>(head_dim), static_cast<long long>(total_q),
                 static_cast<long long>(kv_rows));
    return;
  }
  // 3-D views {D, heads, rows} (innermost first): head stride D*2 bytes, row stride heads*D*2.
  // Q and ragged K/V: box {64, 1, 128} = 128 rows x 64 columns of one head (one swizzled slab).
  // Paged K/V: box {64, 1, 1} = one row of one head (gathered row by row).
  const uint32_t kv_box_rows = kPaged ? 1u : static_cast<uint32_t>(kBN);
  const uint64_t q_dims[3] = {kD, static_cast<uint64_t>(num_qo_heads),
                              static_cast<uint64_t>(total_q)};
  const uint64_t q_strides[2] = {kD * 2, static_cast<uint64_t>(num_qo_heads) * kD * 2};
  const uint32_t q_box[3] = {kSlabCols, 1, kBM};
  // No key at all (every kv_len is 0): the kernel never loads K/V, but the maps must still
  // encode, so they then describe (never read) a valid region of q (Hkv <= Hq heads per row).
  const bool kv_empty = kv_rows <= 0;
  const void* k_base = kv_empty ? static_cast<const void*>(q) : static_cast<const void*>(k);
  const void* v_base = kv_empty ? static_cast<const void*>(q) : static_cast<const void*>(v);
  const uint64_t kv_dims[3] = {kD, static_cast<uint64_t>(num_kv_heads),
                               static_cast<uint64_t>(kv_empty ? total_q : kv_rows)};
  const uint64_t kv_strides[2] = {kD * 2, static_cast<uint64_t>(num_kv_heads) * kD * 2};
  const uint32_t kv_box[3] = {kSlabCols, 1, kv_box_rows};
  // Tensor maps depend only on the pointers and the shape: cached across calls (allowed
  // launch setup, keyed by every input of the encoding).
  static CUtensorMap tmap_q, tmap_k, tmap_v;
  static uint64_t cache_key[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  static bool cache_valid = false;
  const uint64_t key[8] = {reinterpret_cast<uint64_t>(q), reinterpret_cast<uint64_t>(k_base),
                           reinterpret_cast<uint64_t>(v_base), static_cast<uint64_t>(total_q),
                           kv_dims[2], static_cast<uint64_t>(num_qo_heads),
                           static_cast<uint64_t>(num_kv_heads), kv_box_rows};
  bool hit = cache_valid;
  for (int i = 0; i < 8; ++i) hit = hit && cache_key[i] == key[i];
  if (!hit) {
    cache_valid = false;
    if (ptxb::make_tensor_map(&tmap_q, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 3, q, q_dims,
                              q_strides, q_box, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS ||
        ptxb::make_tensor_map(&tmap_k, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 3, k_base, kv_dims,
                              kv_strides, kv_box, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS ||
        ptxb::make_tensor_map(&tmap_v, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 3, v_base, kv_dims,
                              kv_strides, kv_box, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
      return;  // make_tensor_map already printed the reason
    }
    cudaFuncSetAttribute(gqa_prefill_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         kSmemBytes);
    for (int i = 0; i < 8; ++i) cache_key[i] = key[i];
    cache_valid = true;
  }
  // Upper bound on sum_b ceil(q_len_b / 128) without reading the indptrs on the host.
  const int64_t tile_bound = (total_q + (kBM - 1) * num_requests) / kBM;
  const int64_t blocks = tile_bound * num_qo_heads;
  if (blocks >= (int64_t{1} << 31)) {
    std::fprintf(stderr, "%s rung2: grid too large (%lld CTAs)\n", name,
                 static_cast<long long>(blocks));
    return;
  }
  Params prm;
  prm.qo_indptr = qo_indptr;
  prm.kv_indptr = kv_indptr;
  prm.kv_indices = kv_indices;
  prm.k = k;
  prm.v = v;
  prm.num_kv_heads = static_cast<int>(num_kv_heads);
  prm.out = output;
  prm.lse = lse;
  prm.num_requests = static_cast<int>(num_requests);
  prm.num_qo_heads = static_cast<int>(num_qo_heads);
  prm.group = static_cast<int>(num_qo_heads / num_kv_heads);
  prm.scale_log2 = sm_scale * kLog2e;
  gqa_prefill_kernel<<<static_cast<unsigned>(blocks), kThreads, kSmemBytes, stream>>>(
      tmap_q, tmap_k, tmap_v, prm);
}
