// PTXBench expert reference, task gqa_paged_prefill_causal_h24_kv8_d128_ps1, rung 3: the
// consumer loop of gqa_ragged_prefill_causal_h32_kv4_d128/rung2_warp_specialized.cu (ping-pong
// of two consumer warpgroups, softmax of S_r overlapping P_{r-1}·V_{r-1}; descriptors,
// swizzled layouts, masks, epilogue and base-2 lse unchanged) made PERSISTENT, with a
// non-blocking, coalesced cp.async page gather. Paged ABI only (page size 1).
//
//   q            [total_q, Hq, 128] bf16            (task: Hq = 24, Hkv = 8)
//   k, v         [num_pages, page_size = 1, Hkv, 128] bf16; key t of request b is page
//                kv_indices[kv_indptr[b] + t]
//   output       [total_q, Hq, 128] bf16, lse [total_q, Hq] fp32 BASE-2 logsumexp of the scaled
//                scores (FlashInfer's convention, as the reference).
//   Query head h reads KV head h / (Hq / Hkv). Request b owns query rows qo_indptr[b]..+q_len.
//   Causal mask aligned bottom-right: local query i sees local keys j <= i + kv_len - q_len.
//   Rows that see no key get output 0 and lse -inf.
//
// Why (rung 1/2 paged, measured on an H200: 0.55x FlashInfer with one-row TMA boxes, 0.64x
// with blocking cp.async): 768 non-persistent CTAs of 4.5 KV tiles on average, each paying
// its prologue and first-tile latency, and a gather whose producer threads waited for their
// own copies (one tile in flight per thread) with 16-byte copies from 32 different rows per
// warp instruction (half of every 32-byte L2 sector wasted).
//
// Design
//   Work items     (request, 128-row query tile, query head). Global order, heaviest first:
//                  rank k = 0, 1, ... first (rank k = query tile n_b-1-k of request b, n_b =
//                  its tile count: rank 0 = every request's last, heaviest causal tile), then
//                  request b (those with n_b > k, in order), then head (fastest: the Hq/Hkv
//                  heads of one KV head run side by side on neighbouring SMs and share the
//                  gathered K/V rows in L2). Item index L = (rank-major pair index) * Hq + head.
//   Grid           persistent: G = min(#SMs, upper bound of items) CTAs. CTA c takes items
//                  L_i = i*G + c (i even) / i*G + G-1-c (i odd): a snake over the heaviest-
//                  first list (greedy LPT-like; task workload: max 27 vs mean 26.2 KV tiles per
//                  CTA). L_i grows with i, so the item decoder walks the ranks incrementally.
//                  Items past the end (the decoder finds no rank) end the CTA's loop. No host
//                  copy of the indptrs, no scratch memory, no atomics.
//   Decoder        every warp (uniform result over the CTA): qo/kv indptrs cached in shared
//                  memory at CTA start (num_requests <= 192; else read from global memory);
//                  lane i holds request base+i's tile count, ballots count/select the requests
//                  of a rank.
//   Threads        384 = 3 warpgroups, __launch_bounds__(384, 1):
//                    warpgroup 0     producer, setmaxnreg.dec 56: K/V gather (all 128 threads)
//                                    and Q (thread 0, TMA); 56, not 40: the persistent loop's
//                                    decoder state and the gather fit without spilling;
//                    warpgroups 1-2  consumers c = 0, 1, setmaxnreg.inc 224 (128*56 + 256*224 =
//                                    168*384): query rows 64c..64c+63 of the 128-row tile, the
//                                    rung-2 ping-pong loop (they use up to R198).
//   Consumer round r (r = 0..n, n = KV tiles of the item), as rung 2:
//                  [wait my turn: named barrier 1+c] issue S_r = Q_c·K_r^T (8 x m64n128k16 SS)
//                  if r < n; issue O += P_{r-1}·V_{r-1} (16 x m64n64k16 RS) if r > 0; [hand the
//                  tensor cores over: named barrier 2-c]; wait S_r; mask; online softmax base 2;
//                  wait P·V; release stage of tile r-1; O *= alpha; P_r -> bf16 RS fragments.
//                  After S_{n-1} completed consumer c releases its Q half (qempty[c]). Per
//                  item: O, m, l reset; epilogue as rung 2; consumer 0 takes the first turn
//                  of every item (consumer 1 pre-arrives barrier 1); n = 0: no barrier touched,
//                  0 / -inf.
//   Gather         page size 1: key row t of tile j = page kv_indices[kv_begin + 128j + t]
//                  (rows past kv_len re-read the last key's page: masked, P = 0). Warp w of the
//                  producer owns tile rows 32w..32w+31: lane l loads the page index of row
//                  32w + 2(l%16) + l/16 (one coalesced 128-byte load, issued before the wait for
//                  the free stage), then 16 steps s: row 32w + 2s + l/16, whose page lane
//                  (l&16) + s holds (width-16 shuffle, immediate source lane), 16-byte chunk l%16
//                  of its 256-byte K row (slab (l%16)/8, chunk c = l%8) -> cp.async.cg to
//                  slab*16K + row*128 + ((c ^ (row%8)) << 4) (the TMA 128B-swizzle layout of the
//                  1024-aligned slab; c ^ row%8 = (c ^ l/16) ^ 2(s%4), a per-lane constant XOR a
//                  compile-time one). One warp instruction = 2 whole 256-byte rows (full
//                  32-byte sectors). 16 K copies, cp.async.mbarrier.arrive.noinc on
//                  kfull[s]; 16 V copies, arrive.noinc on vfull[s]: the thread moves on at once,
//                  the barrier counts its arrival when its copies have landed (kfull/vfull: 128
//                  arrivals, no tx bytes). Consumers execute fence.proxy.async after the wait
//                  (generic-proxy cp.async writes -> async-proxy wgmma reads).
//                  "#define PTXB_RUNG3_BLOCKING_GATHER 1" (off the default, for an A/B on the
//                  GPU): wait_group + fence + plain arrive per thread instead (rung 1's hand-off).
//   Q              TMA, 3-D map {128, Hq, total_q}, box {64, 1, 64}, 128B swizzle: consumer c's
//                  half (rows 64c.., 2 slabs = 2 boxes of 8 KiB, at slab*16K + c*8K, 1024-aligned)
//                  has its own qfull[c] (1 arrival + 16 KiB tx) / qempty[c] (1 arrival). Thread 0
//                  issues item i's halves after its own copies of item i's first tile, half c
//                  once qempty[c] completed phase i-1 (consumer c's S GEMMs of item i-1 done;
//                  consumer 0, ahead in the ping-pong, gets its next Q first), then
//                  cp.async.bulk.prefetch.tensor (L2) of the next item's Q (the producer decodes
//                  one item ahead), so the next Q load is an L2 hit.
//   Shared memory  Q 32 KiB + 3 stages x (K 32 KiB + V 32 KiB) = 224 KiB + 13 barriers +
//                  indptr cache 2 x 193 x 4 B + 1 KiB alignment slack = 232,048 B (<= 227 KiB).
//   Pipeline       depth 3, flat over the CTA's whole item sequence: fill number g (g-th KV tile
//                  the CTA loads, across items) uses stage g % 3, kfull/vfull phase g / 3; the
//                  producer refills stage s for fill g once empty[s] (2 arrivals, one per
//                  consumer warpgroup after its P·V of that tile) completed phase g/3 - 1.
//                  qfull[c] / qempty[c] phases count the CTA's items with n > 0. The producer
//                  runs ahead across item boundaries: the next item's first tiles and Q load
//                  while the consumers finish the last one.
//   Host           one launch on `stream`, no host copy or sync, no scratch memory; the Q
//                  tensor map and the SM count are cached.
//
// Build: ptxbench compile rung3_persistent.cu --task gqa_paged_prefill_causal_h24_kv8_d128_ps1
//        (mbarrier hang diagnosis: -DPTXB_MBAR_SPIN_LIMIT=100000000 traps with a message)
// ptxas (nvcc 13.0, sm_90a, 2026-12-02): 168 registers at launch (producer 56, consumers 224
//   via setmaxnreg; consumers use up to R198), 0 spill bytes, no stack, no ptxas diagnostic (no
//   wgmma serialisation warning); SASS 48 HGMMA + 4 UTMALDG (Q) + 4 UTMAPF (Q L2 prefetch) +
//   63 LDGSTS + 3 ARRIVES.LDGSTSBAR (cp.async.mbarrier.arrive.noinc). BLOCKING_GATHER 1:
//   the same counts without the ARRIVES, also 0 spill, no diagnostic.
// Measured speed (H200, 2026-12-02, clocks as found, CUPTI medians, L2 flushed; FlashInfer
//   0.6.14's SM90 paged prefill, 0.082-0.083 ms, as the reference): seeds 24 / 25 / 26:
//   0.0963 / 0.0871 / 0.0996 ms = 0.859x / 0.949x / 0.826x, all PASSED with GMMA and TMA
//   executed (dynamic_present); PTXB_RUNG3_BLOCKING_GATHER 1: 0.1010 ms = 0.820x (seed 24).
//   Rungs 1-2 on the same task: 0.64x (cp.async gather) and 0.55x (per-row TMA).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "ptxb/hopper.cuh"

// A/B switch for a GPU investigation only (not the default): 1 = each producer thread waits for
// its own copies (cp.async.wait_group), fences them into the async proxy and then arrives with
// an ordinary mbarrier.arrive (rung 1's proven cp.async hand-off, one tile in flight per thread)
// instead of cp.async.mbarrier.arrive.noinc. Barrier counts are the same (128 per phase).
#ifndef PTXB_RUNG3_BLOCKING_GATHER
#define PTXB_RUNG3_BLOCKING_GATHER 0
#endif

namespace {

constexpr int kD = 128;            // head dim (task constant)
constexpr int kBM = 128;           // query rows per work item
constexpr int kBN = 128;           // keys per KV tile
constexpr int kSlabCols = 64;      // 64 bf16 = 128 B = one 128B-swizzle span (TMA box inner dim)
constexpr int kSlabs = kD / kSlabCols;
constexpr int kQkSteps = kD / 16;
constexpr int kStages = 3;
constexpr int kConsumerWarpgroups = kBM / 64;
constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);  // warpgroup 0 = producer
constexpr int kProducerThreads = 128;
constexpr int kProducerRegs = 56;
constexpr int kConsumerRegs = 224;
constexpr int kCacheRequests = 192;  // indptrs cached in shared memory up to this many requests

constexpr uint32_t kSlabBytes = kBM * kSlabCols * 2;            // 16 KiB: 128 rows x 128 B
constexpr uint32_t kTileBytes = kSlabs * kSlabBytes;            // 32 KiB
constexpr uint32_t kWarpgroupQBytes = 64 * kSlabCols * 2;       // 8 KiB: rows 64w.. of a slab
constexpr uint32_t kRowBytes = kSlabCols * 2;                   // 128 B: one slab row
constexpr uint32_t kQOffset = 0;
constexpr uint32_t kKOffset = kQOffset + kTileBytes;            // kStages x tile
constexpr uint32_t kVOffset = kKOffset + kStages * kTileBytes;  // kStages x tile
constexpr uint32_t kBarOffset = kVOffset + kStages * kTileBytes;
// qfull[], qempty[] (one per consumer), kfull[], vfull[], empty[] (one per stage)
constexpr uint32_t kNumBarriers = 2 * kConsumerWarpgroups + 3 * kStages;
constexpr uint32_t kCacheOffset = kBarOffset + kNumBarriers * 8;
constexpr uint32_t kCacheBytes = 2 * (kCacheRequests + 1) * 4;  // qo_indptr, kv_indptr
constexpr uint32_t kSmemBytes = kCacheOffset + kCacheBytes + 1024;  // + alignment slack

constexpr float kLog2e = 1.4426950408889634f;

static_assert(kBN == kProducerThreads, "gather: the producer warps own 32 tile rows each");
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
  const int32_t* kv_indices;
  const __nv_bfloat16* k;
  const __nv_bfloat16* v;
  __nv_bfloat16* out;
  float* lse;
  int num_kv_heads;
  int num_requests;
  int num_qo_heads;
  int group;         // num_qo_heads / num_kv_heads
  float scale_log2;  // sm_scale * log2(e)
};

// 16 bytes global -> shared, L2 only (the gathered rows are shared by the group's CTAs in L2).
__device__ __forceinline__ void cp_async_16(uint32_t smem_dst, const void* gmem_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_dst), "l"(gmem_src)
               : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}
#if PTXB_RUNG3_BLOCKING_GATHER
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}
#else
// Arrival on `bar` triggered once all of this thread's earlier cp.async copies completed; the
// pending count is not incremented (.noinc), so the barrier's expected count includes it.
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ptxb::smem_u32(bar))
               : "memory");
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

// ---- work decoding (warp-collective: all 32 lanes, warp-uniform results) ----
struct Item {
  int head, q_begin, q0, q_len, kv_begin, kv_len, n;  // n = KV tiles of the causal range
};
// Rank walk state: the items of rank k are pair indices base .. base + cnt - 1 (cnt < 0:
// not yet counted).
struct RankWalk {
  int k, base, cnt;
};

__device__ __forceinline__ int request_tiles(const int32_t* qo, int b) {
  const int len = qo[b + 1] - qo[b];
  return len > 0 ? (len + kBM - 1) / kBM : 0;
}
// Number of requests with more than k query tiles.
__device__ __forceinline__ int rank_count(const int32_t* qo, int num_requests, int k) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  int count = 0;
  for (int base = 0; base < num_requests; base += 32) {
    const int b = base + lane;
    const int nt = b < num_requests ? request_tiles(qo, b) : 0;
    count += __popc(__ballot_sync(0xffffffffu, nt > k));
  }
  return count;
}
// The idx-th (0-based, in request order) request with more than k query tiles.
__device__ __forceinline__ int rank_select(const int32_t* qo, int num_requests, int k, int idx) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  for (int base = 0; base < num_requests; base += 32) {
    const int b = base + lane;
    const int nt = b < num_requests ? request_tiles(qo, b) : 0;
    const unsigned mask = __ballot_sync(0xffffffffu, nt > k);
    const int pc = __popc(mask);
    if (idx < pc) {
      const bool mine = nt > k && __popc(mask & ((1u << lane) - 1u)) == idx;
      return base + __ffs(__ballot_sync(0xffffffffu, mine)) - 1;
    }
    idx -= pc;
  }
  return -1;  // unreachable when idx < rank_count
}
// Item L (L never decreases between calls with the same walk). False: past the last item.
__device__ __forceinline__ bool decode_item(const int32_t* qo, const int32_t* kvp,
                                            int num_requests, int num_qo_heads, int L,
                                            RankWalk& w, Item& it) {
  const int u = L / num_qo_heads;
  for (;;) {
    if (w.cnt < 0) w.cnt = rank_count(qo, num_requests, w.k);
    if (w.cnt == 0) return false;  // no request has more than k tiles: the list ended
    if (u < w.base + w.cnt) break;
    w.base += w.cnt;
    ++w.k;
    w.cnt = -1;
  }
  const int b = rank_select(qo, num_requests, w.k, u - w.base);
  it.head = L - u * num_qo_heads;
  it.q_begin = qo[b];
  it.q_len = qo[b + 1] - it.q_begin;
  it.kv_begin = kvp[b];
  it.kv_len = max(kvp[b + 1] - it.kv_begin, 0);
  const int q_tile = (it.q_len + kBM - 1) / kBM - 1 - w.k;  // heaviest tile first
  it.q0 = q_tile * kBM;
  const int diag = it.kv_len - it.q_len;
  const int q_hi = min(it.q0 + kBM, it.q_len);
  const int kv_end = min(it.kv_len, q_hi + diag);
  it.n = kv_end > 0 ? (kv_end + kBN - 1) / kBN : 0;
  return true;
}

__global__ void __launch_bounds__(kThreads, 1)
    gqa_paged_persistent_kernel(const __grid_constant__ CUtensorMap tmap_q, const Params p) {
  extern __shared__ uint8_t smem_raw[];
  // 128B swizzle = XOR of address bits 4-6 with bits 7-9: every operand tile starts on 1024 B.
  uint8_t* smem = smem_raw + ((1024u - (ptxb::smem_u32(smem_raw) & 1023u)) & 1023u);
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kBarOffset);
  uint64_t* qfull = bars;                          // [kConsumerWarpgroups]
  uint64_t* qempty = bars + kConsumerWarpgroups;   // [kConsumerWarpgroups]
  uint64_t* kfull = bars + 2 * kConsumerWarpgroups;
  uint64_t* vfull = kfull + kStages;
  uint64_t* empty = kfull + 2 * kStages;
  int32_t* cache_qo = reinterpret_cast<int32_t*>(smem + kCacheOffset);
  int32_t* cache_kv = cache_qo + (kCacheRequests + 1);

  const int tid = threadIdx.x;
  const int num_requests = p.num_requests;
  const bool cached = num_requests <= kCacheRequests;
  if (cached) {
    for (int i = tid; i <= num_requests; i += kThreads) {
      cache_qo[i] = __ldg(p.qo_indptr + i);
      cache_kv[i] = __ldg(p.kv_indptr + i);
    }
  }
  if (tid == 0) {
    for (int c = 0; c < kConsumerWarpgroups; ++c) {
      ptxb::mbar_init(&qfull[c], 1);   // thread 0's arrive.expect_tx + the 16 KiB of Q_c
      ptxb::mbar_init(&qempty[c], 1);  // consumer c's elected thread
    }
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_init(&kfull[s], kProducerThreads);  // one noinc arrival per producer thread
      ptxb::mbar_init(&vfull[s], kProducerThreads);
      ptxb::mbar_init(&empty[s], kConsumerWarpgroups);
    }
    ptxb::fence_mbarrier_init();  // inits visible to the async proxy before TMA signals them
  }
  // The only CTA-wide barrier: afterwards the roles synchronise through mbarriers alone.
  __syncthreads();

  // Generic pointers: shared-memory copy when cached, else the global arrays.
  const int32_t* qo = cached ? cache_qo : p.qo_indptr;
  const int32_t* kvp = cached ? cache_kv : p.kv_indptr;
  const int num_qo_heads = p.num_qo_heads;
  const int grid = static_cast<int>(gridDim.x);
  const int cta = static_cast<int>(blockIdx.x);
  const int warpgroup = tid / 128;

  if (warpgroup == 0) {
    // ================= producer warpgroup =================
    ptxb::setmaxnreg_dec<kProducerRegs>();  // warpgroup-collective; frees registers
    const int wg_tid = static_cast<int>(threadIdx.x % 128);
    const int lane = static_cast<int>(threadIdx.x % 32);
    if (wg_tid == 0) ptxb::prefetch_tensormap(&tmap_q);
    const int pwarp = wg_tid / 32;
    // Copy geometry of this lane (fixed): 16-byte chunk l%16 of a 256-byte K/V row.
    const int sub = lane / 16;            // which of the warp's two rows per step
    const int slab = (lane % 16) / 8;     // 64-column slab
    const int chunk = lane % 8;           // 16-byte chunk inside the slab row
    // Shared offset of (step 0, this lane) in a stage: slab, row 32*pwarp + sub; the low part
    // row_lane = (row % 128 B) | swizzled chunk (step-dependent XOR added per step).
    const uint32_t lane_off = slab * kSlabBytes + static_cast<uint32_t>(pwarp * 32) * kRowBytes;
    const uint32_t row_lane = static_cast<uint32_t>(sub) * kRowBytes +
                              (static_cast<uint32_t>(chunk ^ sub) << 4);
    const uint32_t k_base = ptxb::smem_u32(smem + kKOffset);
    const uint32_t v_base = ptxb::smem_u32(smem + kVOffset);
    uint32_t fill = 0;  // KV tiles issued so far by this CTA (flat across items)
    int q_iter = 0;     // items with n > 0 so far
    RankWalk walk{0, 0, -1};
    // One item of look-ahead (decoded in the same L order as the consumers): thread 0 warms L2
    // with the next item's Q while the current item runs.
    Item it{};
    bool have = decode_item(qo, kvp, num_requests, num_qo_heads, cta, walk, it);
    for (int i = 1; have; ++i) {
      const int L_next = i * grid + ((i & 1) ? grid - 1 - cta : cta);
      Item nxt{};
      const bool have_next =
          decode_item(qo, kvp, num_requests, num_qo_heads, L_next, walk, nxt);
      if (it.n == 0) {  // no key visible: the consumers write 0 / -inf alone
        it = nxt;
        have = have_next;
        continue;
      }
      const int kv_head = it.head / p.group;
      const __nv_bfloat16* k_src = p.k + kv_head * kD + slab * kSlabCols + chunk * 8;
      const __nv_bfloat16* v_src = p.v + kv_head * kD + slab * kSlabCols + chunk * 8;
      const int page_stride = p.num_kv_heads * kD;  // elements per page; Hkv <= Hq <= 65535 (host)
      for (int j = 0; j < it.n; ++j, ++fill) {
        const uint32_t s = fill % kStages;
        const uint32_t round = fill / kStages;
        // Page of tile row 32*pwarp + 2*(lane%16) + lane/16 (loaded before the wait for the
        // free stage): step s of lane l copies row 2s + l/16, whose page lane (l & 16) + s
        // holds -- a width-16 shuffle with the immediate source lane s.
        const int page_lane = __ldg(
            p.kv_indices + it.kv_begin +
            min(j * kBN + pwarp * 32 + 2 * (lane % 16) + sub, it.kv_len - 1));
        // Stage s last held fill - kStages; empty[s] completes phase m when fill s + m*kStages
        // was released by both consumer warpgroups.
        if (fill >= static_cast<uint32_t>(kStages)) ptxb::mbar_wait(&empty[s], (round - 1) & 1u);
        const uint32_t k_dst = k_base + s * kTileBytes + lane_off;
        const uint32_t v_dst = v_base + s * kTileBytes + lane_off;
#pragma unroll
        for (int step = 0; step < 16; ++step) {
          // Row 2*step + sub of the warp's 32: its chunk goes to chunk ^ (row % 8), and
          // row % 8 = 2*(step%4) + sub = 2*(step%4) ^ sub, so the XOR splits into the lane's
          // fixed part (row_lane) and a compile-time one.
          const int page = __shfl_sync(0xffffffffu, page_lane, step, 16);
          cp_async_16(k_dst + step * 2 * kRowBytes + (row_lane ^ ((step % 4) << 5)),
                      k_src + static_cast<int64_t>(page) * page_stride);
        }
#if PTXB_RUNG3_BLOCKING_GATHER
        cp_async_commit();
#else
        cp_async_mbar_arrive_noinc(&kfull[s]);
#endif
#pragma unroll
        for (int step = 0; step < 16; ++step) {
          const int page = __shfl_sync(0xffffffffu, page_lane, step, 16);
          cp_async_16(v_dst + step * 2 * kRowBytes + (row_lane ^ ((step % 4) << 5)),
                      v_src + static_cast<int64_t>(page) * page_stride);
        }
#if PTXB_RUNG3_BLOCKING_GATHER
        cp_async_commit();
        cp_async_wait<1>();  // this thread's K copies landed
        ptxb::fence_proxy_async_smem();
        ptxb::mbar_arrive(&kfull[s]);
        cp_async_wait<0>();  // and its V copies
        ptxb::fence_proxy_async_smem();
        ptxb::mbar_arrive(&vfull[s]);
#else
        cp_async_mbar_arrive_noinc(&vfull[s]);
#endif
        if (j == 0 && wg_tid == 0) {
          // Q of this item, per consumer half (rows 64c..64c+63, 2 boxes of 64 rows x 128 B):
          // after this thread's first-tile copies (they need only a free stage) and once
          // consumer c's S GEMMs of the previous item completed (consumer 0 finishes first).
#pragma unroll
          for (int c = 0; c < kConsumerWarpgroups; ++c) {
            if (q_iter > 0) ptxb::mbar_wait(&qempty[c], static_cast<uint32_t>(q_iter - 1) & 1u);
            ptxb::mbar_arrive_expect_tx(&qfull[c], kSlabs * kWarpgroupQBytes);
#pragma unroll
            for (int sl = 0; sl < kSlabs; ++sl) {
              ptxb::tma_load(smem + kQOffset + sl * kSlabBytes + c * kWarpgroupQBytes, &tmap_q,
                             &qfull[c], sl * kSlabCols, it.head, it.q_begin + it.q0 + 64 * c);
            }
          }
          if (have_next && nxt.n > 0) {
#pragma unroll
            for (int c = 0; c < kConsumerWarpgroups; ++c) {
#pragma unroll
              for (int sl = 0; sl < kSlabs; ++sl) {
                ptxb::tma_prefetch(&tmap_q, sl * kSlabCols, nxt.head,
                                   nxt.q_begin + nxt.q0 + 64 * c);
              }
            }
          }
        }
      }
      ++q_iter;
      it = nxt;
      have = have_next;
    }
    // Every copy of this thread has landed (its noinc arrivals are then all counted) before it
    // retires; the consumers wait for the barriers themselves.
    cp_async_wait_all();
    return;
  }

  // ================= consumer warpgroups =================
  ptxb::setmaxnreg_inc<kConsumerRegs>();
  const int wg_tid = static_cast<int>(threadIdx.x % 128);
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int cw = warpgroup - 1;  // consumer index: query rows 64cw..64cw+63 of the tile
  const int warp = wg_tid / 32;
  // Ping-pong (as rung 2): consumer cw issues its GEMMs after named barrier 1+cw completes,
  // then arrives on the other consumer's barrier 2-cw. 256 threads per barrier.
  const uint32_t my_turn = 1 + cw, other_turn = 2 - cw;

  // Descriptors (as rung 2). Q and K K-major, 128B swizzle, SBO = 1024; k16 step kk = slab
  // kk/4 (+16 KiB) and +32 B * (kk%4). Consumer c reads Q rows 64c.. (+8 KiB per slab).
  // V: B of P·V, MN-major (imm-trans-b = 1); one m64n64 wgmma per 64-column slab; K = 16 keys =
  // two 8-key atoms 1024 B apart (LBO = SBO = 1024); k16 step = +2048 B.
  const uint64_t desc_q0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(
      smem + kQOffset + cw * kWarpgroupQBytes);
  const uint64_t desc_k0 =
      ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem + kKOffset);
  const uint64_t desc_v0 = ptxb::make_wgmma_desc(ptxb::smem_u32(smem + kVOffset), 1024, 1024,
                                                 ptxb::SmemSwizzle::k128B);
  const float scale_log2 = p.scale_log2;
  // Tile row of accumulator rows h = 0 / 1 (row l/4 and l/4 + 8 of the warp's 16 rows).
  const int tile_row0 = cw * 64 + 16 * warp + lane / 4;

  uint32_t tile_base = 0;  // KV tiles consumed so far by this CTA (= producer's fill count)
  int q_iter = 0;          // items with n > 0 so far
  RankWalk walk{0, 0, -1};
  for (int i = 0;; ++i) {
    const int L = i * grid + ((i & 1) ? grid - 1 - cta : cta);
    Item it{};
    if (!decode_item(qo, kvp, num_requests, num_qo_heads, L, walk, it)) break;
    const int num_kv_tiles = it.n;
    const int diag = it.kv_len - it.q_len;

    float o_acc[kSlabs][kSlabCols / 2];
#pragma unroll
    for (int r = 0; r < kSlabCols / 2; ++r) {
#pragma unroll
      for (int sl = 0; sl < kSlabs; ++sl) o_acc[sl][r] = 0.f;
    }
    float sacc[kBN / 2];
    uint32_t pfrag[kBN / 16][4];
    float m_run[2] = {-INFINITY, -INFINITY};
    float l_run[2] = {0.f, 0.f};
    // Last visible local key of the thread's two rows: min(i + diag, kv_len - 1).
    int key_lim[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) key_lim[h] = min(it.q0 + tile_row0 + 8 * h + diag, it.kv_len - 1);
    // Smallest limit of the tile (its first row): tiles whose last key is <= this need no mask.
    const int tile_lim = min(it.q0 + diag, it.kv_len - 1);

    // Flat tile g = tile_base + j: stage g % 3, phase g / 3. The cp.async data was written
    // through the generic proxy; wgmma reads through the async proxy: fence after the wait.
    auto wait_k = [&](int j) {
      const uint32_t g = tile_base + static_cast<uint32_t>(j);
      ptxb::mbar_wait(&kfull[g % kStages], (g / kStages) & 1u);
    };
    auto wait_v = [&](int j) {
      const uint32_t g = tile_base + static_cast<uint32_t>(j);
      ptxb::mbar_wait(&vfull[g % kStages], (g / kStages) & 1u);
    };
    auto issue_s = [&](int r) {
      const uint32_t s = (tile_base + static_cast<uint32_t>(r)) % kStages;
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
      const uint32_t s = (tile_base + static_cast<uint32_t>(j)) % kStages;
      const uint64_t desc_v = ptxb::wgmma_desc_advance(desc_v0, s * kTileBytes);
#pragma unroll
      for (int kk = 0; kk < kBN / 16; ++kk) {
        const uint32_t off = kk * 16 * 128;  // 16 keys x 128 B rows
#pragma unroll
        for (int sl = 0; sl < kSlabs; ++sl) {
          ptxb::wgmma_bf16_rs<kSlabCols, 1, 1, 1>(
              o_acc[sl], pfrag[kk], ptxb::wgmma_desc_advance(desc_v, sl * kSlabBytes + off),
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
        for (int e = 0; e < kBN / 2; ++e) {
          const int key = key0 + 8 * (e / 4) + 2 * (lane % 4) + (e % 2);
          if (key > key_lim[(e / 2) % 2]) sacc[e] = -INFINITY;
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
        // A row that has seen no key yet (m_new = -inf) uses 0 as the base: exp2(-inf) = 0.
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
      for (int sl = 0; sl < kSlabs; ++sl) ptxb::wgmma_fence_operand(o_acc[sl]);
      if (wg_tid == 0) ptxb::mbar_arrive(&empty[(tile_base + static_cast<uint32_t>(j)) % kStages]);
    };
    // After S_{n-1} completed: this consumer no longer reads Q of the item.
    auto q_done = [&]() {
      if (wg_tid == 0) ptxb::mbar_arrive(&qempty[cw]);
    };
    auto rescale_and_pack = [&](const float(&alpha)[2]) {
#pragma unroll
      for (int e = 0; e < kSlabCols / 2; ++e) {
        const float a = alpha[(e / 2) % 2];
#pragma unroll
        for (int sl = 0; sl < kSlabs; ++sl) o_acc[sl][e] *= a;
      }
#pragma unroll
      for (int kk = 0; kk < kBN / 16; ++kk) {
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          pfrag[kk][q] = ptxb::pack_bf16x2(sacc[8 * kk + 2 * q], sacc[8 * kk + 2 * q + 1]);
        }
      }
    };

    // num_kv_tiles is the same for both consumers, so both skip the loop together when it is 0
    // (no named barrier or mbarrier touched; the producer skipped the item too).
    if (num_kv_tiles > 0) {
      if (cw == 1) ptxb::named_barrier_arrive(1, 256);  // consumer 0 takes the first turn
      ptxb::mbar_wait(&qfull[cw], static_cast<uint32_t>(q_iter) & 1u);
      // Round 0: S_0 only.
      {
        wait_k(0);
        ptxb::fence_proxy_async_smem();
        ptxb::named_barrier_sync(my_turn, 256);
        ptxb::wgmma_fence();
        issue_s(0);
        ptxb::named_barrier_arrive(other_turn, 256);
        ptxb::wgmma_wait_group<0>();
        if (num_kv_tiles == 1) q_done();
        float alpha[2];
        softmax(0, alpha);
        rescale_and_pack(alpha);
      }
      // Steady rounds: S_r and P_{r-1}·V_{r-1} in flight together.
      for (int r = 1; r < num_kv_tiles; ++r) {
        wait_k(r);
        wait_v(r - 1);
        ptxb::fence_proxy_async_smem();
        ptxb::named_barrier_sync(my_turn, 256);
        ptxb::wgmma_fence();  // sacc, O and pfrag were last written by ordinary instructions
        issue_s(r);
        issue_pv(r - 1);
        ptxb::named_barrier_arrive(other_turn, 256);
        ptxb::wgmma_wait_group<1>();  // S_r (the older group) is complete
        if (r == num_kv_tiles - 1) q_done();
        float alpha[2];
        softmax(r, alpha);
        ptxb::wgmma_wait_group<0>();
        pv_done(r - 1);
        rescale_and_pack(alpha);
      }
      // Last round: P_{n-1}·V_{n-1} only. Consumer 1 skips its arrive (each consumer syncs n+1
      // times on n+1 arrivals of the other, counting consumer 1's initial arrive).
      {
        wait_v(num_kv_tiles - 1);
        ptxb::fence_proxy_async_smem();
        ptxb::named_barrier_sync(my_turn, 256);
        ptxb::wgmma_fence();
        issue_pv(num_kv_tiles - 1);
        if (cw == 0) ptxb::named_barrier_arrive(other_turn, 256);
        ptxb::wgmma_wait_group<0>();
        pv_done(num_kv_tiles - 1);
      }
      tile_base += static_cast<uint32_t>(num_kv_tiles);
      ++q_iter;
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
      const int row_local = it.q0 + tile_row0 + 8 * h;
      if (row_local < it.q_len) {
        const int64_t token = static_cast<int64_t>(it.q_begin) + row_local;
        const int64_t row_g = token * num_qo_heads + it.head;
        __nv_bfloat16* dst_row = p.out + row_g * kD;
#pragma unroll
        for (int e = 2 * h; e < kSlabCols / 2; e += 4) {
          // e with (e/2)%2 == h: registers e, e+1 = columns 8*(e/4) + col_base + {0, 1}.
          const int col = col_base + 8 * (e / 4);
#pragma unroll
          for (int sl = 0; sl < kSlabs; ++sl) {
            *reinterpret_cast<__nv_bfloat162*>(dst_row + sl * kSlabCols + col) =
                __floats2bfloat162_rn(o_acc[sl][e] * inv_l[h], o_acc[sl][e + 1] * inv_l[h]);
          }
        }
        if (lane % 4 == 0) p.lse[row_g] = lse[h];
      }
    }
  }
}

}  // namespace

void run(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
         const int32_t* qo_indptr, const int32_t* kv_indptr, const int32_t* kv_indices,
         float sm_scale, __nv_bfloat16* output, float* lse, int64_t num_qo_heads,
         int64_t num_kv_heads, int64_t head_dim, int64_t page_size, int64_t len_indptr,
         int64_t total_q, int64_t num_kv_indices, int64_t num_pages, cudaStream_t stream) {
  const char* name = "gqa_paged_prefill_causal_h24_kv8_d128_ps1 rung3";
  const int64_t num_requests = len_indptr - 1;
  if (num_requests <= 0 || total_q <= 0) return;  // no query rows: nothing to write
  if (page_size != 1 || num_pages < 0 || num_kv_indices < 0 || head_dim != kD ||
      num_qo_heads <= 0 || num_kv_heads <= 0 || num_qo_heads % num_kv_heads != 0 ||
      num_qo_heads > 65535 ||
      total_q >= (int64_t{1} << 31) || num_requests >= (int64_t{1} << 30)) {
    std::fprintf(stderr,
                 "%s: unsupported shape Hq=%lld Hkv=%lld D=%lld page_size=%lld total_q=%lld "
                 "num_pages=%lld\n",
                 name, static_cast<long long>(num_qo_heads), static_cast<long long>(num_kv_heads),
                 static_cast<long long>(head_dim), static_cast<long long>(page_size),
                 static_cast<long long>(total_q), static_cast<long long>(num_pages));
    return;
  }
  // Q: 3-D view {D, Hq, total_q} (innermost first), box {64, 1, 64} = 64 rows x 64 columns
  // of one head (one consumer's half of a swizzled 16 KiB slab).
  const uint64_t q_dims[3] = {kD, static_cast<uint64_t>(num_qo_heads),
                              static_cast<uint64_t>(total_q)};
  const uint64_t q_strides[2] = {kD * 2, static_cast<uint64_t>(num_qo_heads) * kD * 2};
  const uint32_t q_box[3] = {kSlabCols, 1, 64};  // one consumer half of a slab
  static CUtensorMap tmap_q;
  static uint64_t cache_key[3] = {0, 0, 0};
  static bool cache_valid = false;
  static int cached_device = -1, cached_sms = 0;
  const uint64_t key[3] = {reinterpret_cast<uint64_t>(q), static_cast<uint64_t>(total_q),
                           static_cast<uint64_t>(num_qo_heads)};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return;
  bool hit = cache_valid && cached_device == device;
  for (int i = 0; i < 3; ++i) hit = hit && cache_key[i] == key[i];
  if (!hit) {
    cache_valid = false;
    if (ptxb::make_tensor_map(&tmap_q, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 3, q, q_dims,
                              q_strides, q_box, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
      return;  // make_tensor_map already printed the reason
    }
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        sms <= 0) {
      std::fprintf(stderr, "%s: cannot query the SM count\n", name);
      return;
    }
    cudaFuncSetAttribute(gqa_paged_persistent_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         kSmemBytes);
    for (int i = 0; i < 3; ++i) cache_key[i] = key[i];
    cached_device = device;
    cached_sms = sms;
    cache_valid = true;
  }
  // Upper bound on the item count sum_b ceil(q_len_b / 128) * Hq without reading the indptrs.
  const int64_t tile_bound = (total_q + (kBM - 1) * num_requests) / kBM;
  const int64_t items_bound = tile_bound * num_qo_heads;
  if (items_bound + cached_sms >= (int64_t{1} << 31)) {
    std::fprintf(stderr, "%s: too many work items (%lld)\n", name,
                 static_cast<long long>(items_bound));
    return;
  }
  const int64_t blocks = items_bound < cached_sms ? items_bound : cached_sms;
  Params prm;
  prm.qo_indptr = qo_indptr;
  prm.kv_indptr = kv_indptr;
  prm.kv_indices = kv_indices;
  prm.k = k_cache;
  prm.v = v_cache;
  prm.out = output;
  prm.lse = lse;
  prm.num_kv_heads = static_cast<int>(num_kv_heads);
  prm.num_requests = static_cast<int>(num_requests);
  prm.num_qo_heads = static_cast<int>(num_qo_heads);
  prm.group = static_cast<int>(num_qo_heads / num_kv_heads);
  prm.scale_log2 = sm_scale * kLog2e;
  gqa_paged_persistent_kernel<<<static_cast<unsigned>(blocks), kThreads, kSmemBytes, stream>>>(
      tmap_q, prm);
}
