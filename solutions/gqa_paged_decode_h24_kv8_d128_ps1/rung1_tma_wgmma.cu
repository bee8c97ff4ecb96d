// PTXBench expert reference, task gqa_paged_decode_h24_kv8_d128_ps1, rung 1:
// batched GQA decode over a paged KV cache (page size 1). TMA for Q, a cp.async gather of the
// K/V rows named by the page table into 128B-swizzled shared memory, wgmma for Q·K^T (SS) and
// P·V (RS), mbarrier-pipelined producer warps, online softmax in registers, optional split-KV
// with a small combine kernel.
//
//   q           [batch, 24, 128] bf16; query head h reads KV head h / 3 (group of 3).
//   k/v_cache   [num_pages, 1, 8, 128] bf16 (page size 1: one token per page).
//   kv_indptr   [batch + 1] int32, kv_indices [num_kv_indices] int32: request b attends to the
//               pages kv_indices[kv_indptr[b] .. kv_indptr[b+1]).
//   output      [batch, 24, 128] bf16 = softmax(q·k^T * sm_scale) · v per (request, head).
//   lse         [batch, 24] fp32, BASE 2: log2(sum_t exp(q·k_t * sm_scale)); -inf (and output
//               zeros) for a request without tokens.
//   Benchmark workload: batch 32, 2048 tokens per request (65,536 pages, random page ids),
//   sm_scale = 1/sqrt(128). Memory-bound: K+V = 65,536 x 8 x 256 B x 2 = 268 MB.
//
// Design
//   Unit of work    one (request b, KV head g, split) = the 3 query heads 3g..3g+2 against a
//                   contiguous range of that request's tokens. Grid (splits, 8, batch), one CTA
//                   per unit. splits is chosen on the host from batch, num_kv_indices and the
//                   SM count only (no read of kv_indptr on the host): splits =
//                   max(1, floor(2*SMs / (batch*8))), capped at avg tokens/128 and 64. The
//                   benchmark gets splits = 1: 256 CTAs, all resident at once (2 per SM), each
//                   streaming 1 MB; the DRAM bandwidth is shared by all of them so they finish
//                   together, and no combine pass runs. With splits > 1 (small batches; never
//                   run by the benchmark) the CTA derives its token range on the device
//                   from kv_indptr (the request's 64-token tiles divided evenly over the
//                   splits), writes a partial (o/l, lse) pair, and combine_kernel merges them.
//   Threads         192 = warpgroup 0 (consumer: 4 warps, all wgmma) + warps 4-5 (producers:
//                   64 threads gathering K/V with cp.async). __launch_bounds__(192, 2): two
//                   CTAs per SM (<= 168 registers/thread, 2 x 83 KB shared memory).
//   Q·K^T           M = 64 rows of which rows 0..2 are the group's 3 query heads and rows
//                   3..63 are zeros; Q is loaded ONCE per CTA by TMA from a 3-D tensor map
//                   {128, 3, batch*8} (innermost first) with box {64, 64, 1}: box rows 3..63 lie
//                   past the tensor's second dimension (extent 3) and are TMA's out-of-bounds
//                   zero fill, so the padding costs no extra global traffic and no proxy fence.
//                   S(64 x 64 fp32) = Q · K_j^T: 8 x wgmma.m64n64k16 SS (K-major A and B).
//   Softmax         base 2, scores scaled by sm_scale*log2(e); only warp 0 holds the 3 real
//                   rows (fragment rows l/4, l < 12, registers i with (i/2)%2 == 0); warps 1-3
//                   and the (i/2)%2 == 1 registers are padding rows: their P is 0, so their O
//                   rows stay 0 and are never stored. Tokens past the range end (last tile) are
//                   -inf before the max. Lanes 12..31 of warp 0 run the same math on zero Q rows
//                   (finite, never stored) so the quad shuffles stay full-warp.
//   P·V             O(64 x 128 fp32) += P · V_j: 4 k16 steps x 2 x wgmma.m64n64k16 RS, P from
//                   the S accumulator repacked to bf16 A fragments (row+8 halves are zero), V
//                   MN-major (imm-trans-b = 1), one wgmma per 64-column swizzle slab of V.
//   K/V gather      page size 1 makes every token a separate 256-byte row at a random address,
//                   so K/V are gathered with cp.async.cg (16 B, L2 only; zero fill via
//                   src-size 0 for tokens past the range end, so padded V rows are 0, never
//                   NaN) straight into the canonical 128B-swizzle layout that a TMA box
//                   {64, rows} with CU_TENSOR_MAP_SWIZZLE_128B would produce: 16-byte chunk c of
//                   row r of a 1024 B-aligned slab at r*128 + ((c ^ (r%8)) * 16). (A per-row
//                   TMA would need 2 UTMALDG of 128 B per row and tensor, 4 per token and KV
//                   head; FlashInfer's maintainers report (flashinfer issue 1474) that TMA does
//                   not reach full bandwidth with such small boxes, which is why their paged
//                   kernels gather with LDGSTS for small pages too.) Producer warp w' (0/1) owns
//                   tokens 32w'..32w'+31 of a tile: lane l loads the page id of token 32w'+l
//                   (one coalesced load per tile, prefetched one tile ahead) and the warp
//                   issues chunk l%16 of tokens 32w' + l/16 + 2k (k = 0..15) after a shuffle of
//                   the page id: 16 cp.async for K, then 16 for V, per thread and tile. At the
//                   start the producers prefetch the CTA's whole page-id range into L2.
//   Shared memory   Q 16 KiB (2 slabs x 64 rows x 128 B) + 2 stages x (K 16 KiB + V 16 KiB, each
//                   2 slabs x 64 tokens x 128 B) + 5 barriers + 1 KiB alignment slack =
//                   82,984 B (3 stages would need 115,792 B > the 115,712 B that let 2 CTAs
//                   share an SM; 2 stages x 2 CTAs = up to 4 tiles = 128 KB in flight per SM,
//                   256 CTAs resident at once for the benchmark: ~10 MB in flight on the GPU).
//   Pipeline        kfull[s], vfull[s]: 64 arrivals = every producer thread's
//                   cp.async.mbarrier.arrive.noinc (fires when that thread's earlier cp.asyncs
//                   have landed); the consumer waits, then fence.proxy.async (cp.async writes
//                   through the generic proxy, wgmma reads through the async proxy) before the
//                   wgmma. K and V have separate barriers so Q·K^T starts before V lands.
//                   empty[s]: 1 arrival by consumer thread 0 after the tile's P·V wgmmas
//                   completed (wait_group 0); all producer threads wait on it (parity starts at
//                   1) before refilling stage s. qfull: thread 0's arrive.expect_tx(16 KiB).
//   Epilogue        splits == 1: O = acc / l -> bf16x2 stores, lse = m + log2 l by warp 0
//                   lanes < 12. splits > 1: fp32 o/l and lse per split to a cudaMallocAsync
//                   scratch on `stream`; combine_kernel (one CTA of 128 threads per (b, head))
//                   merges them with weights 2^(lse_s - max lse) and frees nothing itself (the
//                   host enqueues cudaFreeAsync after it). Empty range: o = 0, lse = -inf.
//
// Build: ptxbench compile rung1_tma_wgmma.cu --task gqa_paged_decode_h24_kv8_d128_ps1
//        (nvcc -gencode arch=compute_90a,code=sm_90a -O3 -lineinfo, pack include dir on -I)
// ptxas (nvcc 13.0.88, 2026-12-02): gqa_decode_kernel 140 registers, 0 spill bytes, no stack,
//   no diagnostic (no wgmma serialisation warning); combine_kernel 32 registers. SASS:
//   16 HGMMA.64x64x16 (8 SS for Q·K^T, 8 RS .tnspB for P·V) + 2 UTMALDG.3D (Q) + 32 LDGSTS
//   per tile in the producer loop.
// Checked on the development machine: the index math (producer swizzled writes, TMA Q box with
//   OOB rows, SW128 K-major and MN-major descriptor addressing, register fragments, per-thread
//   online softmax, masking, epilogue, splits 1/2/3 + combine, an empty request) was replayed
//   by a host-only C++ emulation against a float64 reference: max |err| 2.3e-3 (bf16 P and
//   output rounding), lse exact to 1e-6. Not a substitute for the GPU run.
// Measured speed (H200, 2026-12-02, clocks as found, CUPTI medians, L2 flushed): 0.0735 ms vs
//   FlashInfer 0.6.14's BatchDecodeWithPagedKVCacheKernel 0.0948 ms = 1.29x (seed 22; the
//   replay's two turns 1.285x and 1.286x): 268 MB of K and V in 73.5 us = 3.65 TB/s. PASSED
//   with GMMA and TMA executed (dynamic_present).
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "ptxb/hopper.cuh"

namespace {

constexpr int kHeadDim = 128;
constexpr int kQoHeads = 24;
constexpr int kKvHeads = 8;
constexpr int kGroup = kQoHeads / kKvHeads;  // 3 query heads per KV head
constexpr int kTileTokens = 64;              // tokens per KV tile (N of Q·K^T, K of P·V)
constexpr int kSlabCols = 64;                // 64 bf16 = 128 B = one 128B-swizzle span
constexpr int kSlabs = kHeadDim / kSlabCols;  // 2
constexpr int kQkSteps = kHeadDim / 16;       // 8 k16 steps of Q·K^T
constexpr int kPvSteps = kTileTokens / 16;    // 4 k16 steps of P·V
constexpr int kStages = 2;
constexpr int kConsumerThreads = 128;
constexpr int kProducerThreads = 64;
constexpr int kThreads = kConsumerThreads + kProducerThreads;

constexpr uint32_t kRowBytes = kSlabCols * 2;                   // 128
constexpr uint32_t kQSlabBytes = 64 * kRowBytes;                // 8 KiB: 64 rows
constexpr uint32_t kKvSlabBytes = kTileTokens * kRowBytes;      // 8 KiB: 64 tokens
constexpr uint32_t kQBytes = kSlabs * kQSlabBytes;              // 16 KiB
constexpr uint32_t kKvTileBytes = kSlabs * kKvSlabBytes;        // 16 KiB (K or V of one tile)
constexpr uint32_t kStageBytes = 2 * kKvTileBytes;              // K + V
constexpr uint32_t kQOffset = 0;
constexpr uint32_t kStageOffset = kQOffset + kQBytes;           // stage s at + s * kStageBytes
constexpr uint32_t kVInStage = kKvTileBytes;                    // V after K inside a stage
constexpr uint32_t kBarOffset = kStageOffset + kStages * kStageBytes;
constexpr uint32_t kNumBarriers = 1 + 3 * kStages;              // qfull, kfull[], vfull[], empty[]
constexpr uint32_t kSmemBytes = kBarOffset + kNumBarriers * 8 + 1024;  // + alignment slack

constexpr float kLog2e = 1.4426950408889634f;

static_assert(kSlabCols * 2 == 128, "slab rows = exactly the 128 B swizzle span");
static_assert(kQSlabBytes % 1024 == 0 && kKvSlabBytes % 1024 == 0 && kStageBytes % 1024 == 0,
              "operand tiles must stay 1024-byte aligned (128B swizzle atom, base offset 0)");
static_assert(kQSlabBytes == kKvSlabBytes, "Q and K share the k16-step offset formula");
static_assert(kTileTokens == 2 * 32, "two producer warps, 32 tokens each");
static_assert(2 * (kSmemBytes + 1024) <= 228 * 1024, "two CTAs per SM");

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// 16-byte global -> shared copy through L2 only (.cg); src_bytes = 16 copies, 0 zero-fills the
// 16 destination bytes without reading global memory (PTX ISA "cp.async", src-size operand).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, uint32_t src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
// One arrival on `bar` once all of this thread's earlier cp.async have completed. .noinc: the
// arrival counts against the barrier's init count (the producer thread count).
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(ptxb::smem_u32(bar))
               : "memory");
}
__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}

// Token range [tok_begin, tok_end) of split `split` of request b (global positions in
// kv_indices): the request's 64-token tiles are divided evenly over the splits.
__device__ __forceinline__ void split_range(const int32_t* __restrict__ kv_indptr, int b,
                                            int split, int num_splits, int& tok_begin,
                                            int& tok_end) {
  const int req_begin = __ldg(kv_indptr + b);
  const int req_end = __ldg(kv_indptr + b + 1);
  const int len = max(req_end - req_begin, 0);
  const int tiles = (len + kTileTokens - 1) / kTileTokens;
  const int tiles_per_split = (tiles + num_splits - 1) / num_splits;
  const int first = min(split * tiles_per_split, tiles);
  const int last = min(first + tiles_per_split, tiles);
  tok_begin = req_begin + first * kTileTokens;
  tok_end = min(req_begin + last * kTileTokens, req_end);
  if (tok_end < tok_begin) tok_end = tok_begin;
}

__global__ void __launch_bounds__(kThreads, 2)
    gqa_decode_kernel(const __grid_constant__ CUtensorMap tmap_q,
                      const __nv_bfloat16* __restrict__ k_cache,
                      const __nv_bfloat16* __restrict__ v_cache,
                      const int32_t* __restrict__ kv_indptr,
                      const int32_t* __restrict__ kv_indices, float scale_log2,
                      __nv_bfloat16* __restrict__ output, float* __restrict__ lse,
                      float* __restrict__ part_o, float* __restrict__ part_lse) {
  extern __shared__ uint8_t smem_raw[];
  // 128B swizzle = XOR of address bits 4-6 with bits 7-9: every operand tile starts on 1024 B.
  uint8_t* smem = smem_raw + ((1024u - (ptxb::smem_u32(smem_raw) & 1023u)) & 1023u);
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kBarOffset);
  uint64_t* qfull = bars;
  uint64_t* kfull = bars + 1;
  uint64_t* vfull = bars + 1 + kStages;
  uint64_t* empty = bars + 1 + 2 * kStages;

  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int split = blockIdx.x, num_splits = gridDim.x;
  const int kvh = blockIdx.y;
  const int b = blockIdx.z;

  int tok_begin, tok_end;
  split_range(kv_indptr, b, split, num_splits, tok_begin, tok_end);
  const int num_tiles = (tok_end - tok_begin + kTileTokens - 1) / kTileTokens;

  if (tid == 0) {
    ptxb::prefetch_tensormap(&tmap_q);
    ptxb::mbar_init(qfull, 1);  // thread 0's arrive.expect_tx
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_init(&kfull[s], kProducerThreads);  // cp.async.mbarrier.arrive.noinc each
      ptxb::mbar_init(&vfull[s], kProducerThreads);
      ptxb::mbar_init(&empty[s], 1);  // consumer thread 0
    }
    ptxb::fence_mbarrier_init();  // inits visible to the async proxy before TMA signals them
  }
  __syncthreads();

  if (tid >= kConsumerThreads) {
    // ===================== producers: warps 4-5, cp.async gather of K/V rows ==================
    const int pwarp = warp - kConsumerThreads / 32;  // 0 or 1: tokens 32*pwarp.. of a tile
    const int chunk = lane % 16;                      // 16-byte chunk of the 256-byte row
    const int sub = lane / 16;                        // rows 32*pwarp + sub + 2k
    const uint32_t chunk_off = (chunk / 8) * kKvSlabBytes;  // slab of the chunk
    const int c = chunk % 8;                                 // chunk inside the 128 B row
    const uint32_t stage0 = ptxb::smem_u32(smem + kStageOffset);
    const size_t head_off = static_cast<size_t>(kvh) * kHeadDim + chunk * 8;  // elements

    // Page id of token 32*pwarp + lane of tile j (prefetched one tile ahead).
    auto load_page = [&](int j) -> int {
      const int tok = tok_begin + j * kTileTokens + 32 * pwarp + lane;
      return tok < tok_end ? __ldg(kv_indices + tok) : 0;
    };
    int page_lane = num_tiles > 0 ? load_page(0) : 0;
    // Warm L2 with the rest of this CTA's page ids (one 128 B line per 32 ids), so the per-tile
    // page-id loads below do not each pay a DRAM round trip.
    for (int t = (tok_begin & ~31) + 32 * (tid - kConsumerThreads); t < tok_end;
         t += 32 * kProducerThreads) {
      asm volatile("prefetch.global.L2 [%0];" ::"l"(kv_indices + t));
    }

    for (int j = 0; j < num_tiles; ++j) {
      const int s = j % kStages;
      // Stage s was last used by tile j - 2; fresh barriers pass parity 1 at once.
      ptxb::mbar_wait(&empty[s], ((static_cast<uint32_t>(j) / kStages) & 1u) ^ 1u);
      const int tile_tok = tok_begin + j * kTileTokens + 32 * pwarp;  // token of row 32*pwarp
      const uint32_t k_base = stage0 + s * kStageBytes;
      const uint32_t v_base = k_base + kVInStage;
      int pages[16];
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        const int r_in_warp = sub + 2 * k;  // 0..31
        pages[k] = __shfl_sync(0xffffffffu, page_lane, r_in_warp);
      }
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        const int r_in_warp = sub + 2 * k;
        const int r = 32 * pwarp + r_in_warp;  // row of the tile (0..63); r % 8 = r_in_warp % 8
        const uint32_t dst = chunk_off + r * kRowBytes + ((c ^ (r_in_warp & 7)) << 4);
        const bool valid = tile_tok + r_in_warp < tok_end;
        const __nv_bfloat16* src =
            k_cache + static_cast<size_t>(pages[k]) * (kKvHeads * kHeadDim) + head_off;
        cp_async_16(k_base + dst, valid ? src : k_cache, valid ? 16u : 0u);
      }
      cp_async_mbar_arrive_noinc(&kfull[s]);
#pragma unroll
      for (int k = 0; k < 16; ++k) {
        const int r_in_warp = sub + 2 * k;
        const int r = 32 * pwarp + r_in_warp;
        const uint32_t dst = chunk_off + r * kRowBytes + ((c ^ (r_in_warp & 7)) << 4);
        const bool valid = tile_tok + r_in_warp < tok_end;
        const __nv_bfloat16* src =
            v_cache + static_cast<size_t>(pages[k]) * (kKvHeads * kHeadDim) + head_off;
        cp_async_16(v_base + dst, valid ? src : v_cache, valid ? 16u : 0u);
      }
      cp_async_mbar_arrive_noinc(&vfull[s]);
      if (j + 1 < num_tiles) page_lane = load_page(j + 1);
    }
    cp_async_wait_all();  // no copy of this thread still in flight when it exits
    return;
  }

  // ===================== consumer: warpgroup 0 =====================
  if (tid == 0) {
    ptxb::mbar_arrive_expect_tx(qfull, kQBytes);
    // Box {64, 64, 1} at (col, row 0, b*8 + kvh): rows 0..2 = q[b, 3*kvh .. 3*kvh+2, col..],
    // rows 3..63 out of bounds (extent 3) -> zeros; full box bytes counted.
    ptxb::tma_load(smem + kQOffset, &tmap_q, qfull, 0, 0, b * kKvHeads + kvh);
    ptxb::tma_load(smem + kQOffset + kQSlabBytes, &tmap_q, qfull, kSlabCols, 0,
                   b * kKvHeads + kvh);
  }
  __syncwarp();

  // Descriptors (contract 3.1). Q and K K-major, 128B swizzle, SBO = 1024 (8-row atoms packed);
  // k16 step kk = slab kk/4 (+8 KiB) and +32 B * (kk%4) inside the swizzled 128 B row.
  const uint64_t desc_q0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem + kQOffset);
  const uint64_t desc_k0 =
      ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem + kStageOffset);
  // V is B of P·V with N = head dim (contiguous), K = tokens: MN-major (imm-trans-b = 1).
  // 128B-swizzle MN-major atom = 64 N elements (one 128 B slab row) x 8 tokens = 1024 B; each
  // wgmma covers N = 64 = one slab, K = 16 tokens = two atoms 1024 B apart: LBO = SBO = 1024
  // (the N-direction stride is never used). k16 step = +16 tokens = +2048 B.
  const uint64_t desc_v0 = ptxb::make_wgmma_desc(ptxb::smem_u32(smem + kStageOffset + kVInStage),
                                                 1024, 1024, ptxb::SmemSwizzle::k128B);

  float o_acc[kSlabs][kSlabCols / 2];
#pragma unroll
  for (int i = 0; i < kSlabCols / 2; ++i) {
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) o_acc[slab][i] = 0.f;
  }
  float sacc[kTileTokens / 2];
#pragma unroll
  for (int i = 0; i < kTileTokens / 2; ++i) sacc[i] = 0.f;
  // Statistics of the thread's fragment row l/4 (meaningful in warp 0, lanes < 12): m in
  // base-2 scaled units, l = this thread's partial sum (quad-reduced in the epilogue).
  float m_run = -INFINITY;
  float l_run = 0.f;

  ptxb::mbar_wait(qfull, 0);

  for (int j = 0; j < num_tiles; ++j) {
    const int s = j % kStages;
    const uint32_t parity = (static_cast<uint32_t>(j) / kStages) & 1u;
    const uint32_t stage_off = s * kStageBytes;

    // ---- S = Q · K_j^T ----
    ptxb::mbar_wait(&kfull[s], parity);
    ptxb::fence_proxy_async_smem();  // cp.async (generic proxy) writes -> wgmma (async proxy)
    ptxb::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kQkSteps; ++kk) {
      const uint32_t off = (kk / 4) * kQSlabBytes + (kk % 4) * 32;
      ptxb::wgmma_bf16_ss<kTileTokens>(sacc, ptxb::wgmma_desc_advance(desc_q0, off),
                                       ptxb::wgmma_desc_advance(desc_k0, stage_off + off),
                                       kk > 0);
    }
    ptxb::wgmma_commit_group();
    ptxb::wgmma_wait_group<0>();
    ptxb::wgmma_fence_operand(sacc);

    // Accumulator fragment: sacc[4jn + i] of (warp w, lane l) is row 16w + l/4 + 8*(i/2),
    // token 8jn + 2(l%4) + i%2. Real rows: warp 0, l/4 < 3, i/2 == 0.
    uint32_t pfrag[kPvSteps][4];
    if (warp == 0) {
      const int valid = tok_end - (tok_begin + j * kTileTokens);  // >= 1 tokens in this tile
      float mx = -INFINITY;
#pragma unroll
      for (int jn = 0; jn < kTileTokens / 8; ++jn) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int col = 8 * jn + 2 * (lane % 4) + e;
          const float v = col < valid ? sacc[4 * jn + e] * scale_log2 : -INFINITY;
          sacc[4 * jn + e] = v;
          mx = fmaxf(mx, v);
        }
      }
      mx = quad_max(mx);  // the 4 lanes of a quad share the row
      // At least one token of every processed tile is valid and every score is finite (Q
      // padding rows are zeros, masked K rows zero-filled), so m_new is finite.
      const float m_new = fmaxf(m_run, mx);
      const float alpha = ptxb::exp2_approx(m_run - m_new);  // 0 on the first tile
      m_run = m_new;
      float sum = 0.f;
#pragma unroll
      for (int jn = 0; jn < kTileTokens / 8; ++jn) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const float p = ptxb::exp2_approx(sacc[4 * jn + e] - m_new);  // masked: 2^-inf = 0
          sacc[4 * jn + e] = p;
          sum += p;
        }
      }
      l_run = l_run * alpha + sum;
#pragma unroll
      for (int i = 0; i < kSlabCols / 2; ++i) {
        if ((i / 2) % 2 == 0) {  // rows l/4 only; rows l/4 + 8 are padding (stay 0)
#pragma unroll
          for (int slab = 0; slab < kSlabs; ++slab) o_acc[slab][i] *= alpha;
        }
      }
      // RS A fragments (contract 3.2), k16 slice kk = tokens 16kk..16kk+15 = registers
      // 8kk..8kk+7: a0 = (row, 2(l%4)+{0,1}) = regs 8kk+{0,1}, a1 = row+8 (padding) = 0,
      // a2 = (row, 8+2(l%4)+{0,1}) = regs 8kk+{4,5}, a3 = row+8 = 0.
#pragma unroll
      for (int kk = 0; kk < kPvSteps; ++kk) {
        pfrag[kk][0] = ptxb::pack_bf16x2(sacc[8 * kk + 0], sacc[8 * kk + 1]);
        pfrag[kk][1] = 0u;
        pfrag[kk][2] = ptxb::pack_bf16x2(sacc[8 * kk + 4], sacc[8 * kk + 5]);
        pfrag[kk][3] = 0u;
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < kPvSteps; ++kk) {
#pragma unroll
        for (int r = 0; r < 4; ++r) pfrag[kk][r] = 0u;
      }
    }

    // ---- O += P · V_j ----
    ptxb::mbar_wait(&vfull[s], parity);
    ptxb::fence_proxy_async_smem();
    ptxb::wgmma_fence();  // O (rescaled) and P were written by ordinary instructions
#pragma unroll
    for (int kk = 0; kk < kPvSteps; ++kk) {
      const uint32_t off = stage_off + kk * 16 * kRowBytes;  // 16 tokens x 128 B rows
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        ptxb::wgmma_bf16_rs<kSlabCols, 1, 1, 1>(
            o_acc[slab], pfrag[kk],
            ptxb::wgmma_desc_advance(desc_v0, off + slab * kKvSlabBytes), true);
      }
    }
    ptxb::wgmma_commit_group();
    // Every wgmma of this warpgroup reading stage s (Q·K^T and P·V) has completed: release it.
    ptxb::wgmma_wait_group<0>();
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) ptxb::wgmma_fence_operand(o_acc[slab]);
    if (tid == 0) ptxb::mbar_arrive(&empty[s]);
  }

  // ---- epilogue: warp 0, lanes 0..11 own the 3 real rows ----
  if (warp != 0) return;
  const float l_tot = quad_sum(l_run);  // full warp: the shuffles need every lane
  if (lane >= 4 * kGroup) return;
  const int row = lane / 4;  // query head within the group
  const int qh = kvh * kGroup + row;
  const int64_t bq = static_cast<int64_t>(b) * kQoHeads + qh;
  const bool has_tokens = l_tot > 0.f;  // false only for an empty range (no tile processed)
  const float inv_l = has_tokens ? 1.f / l_tot : 0.f;
  const float row_lse = has_tokens ? m_run + log2f(l_tot) : -INFINITY;
  const int col_base = 2 * (lane % 4);
  if (num_splits == 1) {
    __nv_bfloat16* dst = output + bq * kHeadDim + col_base;
#pragma unroll
    for (int i = 0; i < kSlabCols / 2; i += 4) {  // registers i, i+1 (row l/4) of n8 block i/4
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        *reinterpret_cast<__nv_bfloat162*>(dst + slab * kSlabCols + 8 * (i / 4)) =
            __floats2bfloat162_rn(o_acc[slab][i] * inv_l, o_acc[slab][i + 1] * inv_l);
      }
    }
    if (lane % 4 == 0) lse[bq] = row_lse;
  } else {
    float* dst = part_o + (bq * num_splits + split) * kHeadDim + col_base;
#pragma unroll
    for (int i = 0; i < kSlabCols / 2; i += 4) {
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) {
        *reinterpret_cast<float2*>(dst + slab * kSlabCols + 8 * (i / 4)) =
            make_float2(o_acc[slab][i] * inv_l, o_acc[slab][i + 1] * inv_l);
      }
    }
    if (lane % 4 == 0) part_lse[bq * num_splits + split] = row_lse;
  }
}

// Merges the splits of one (request, query head): o = sum_s w_s o_s / sum_s w_s with
// w_s = 2^(lse_s - max lse), lse = max + log2(sum w). All splits empty -> zeros, -inf.
__global__ void __launch_bounds__(kHeadDim)
    combine_kernel(const float* __restrict__ part_o, const float* __restrict__ part_lse,
                   int num_splits, __nv_bfloat16* __restrict__ output, float* __restrict__ lse) {
  const int64_t bq = blockIdx.x;
  const int d = threadIdx.x;
  const float* pl = part_lse + bq * num_splits;
  float mx = -INFINITY;
  for (int s = 0; s < num_splits; ++s) mx = fmaxf(mx, pl[s]);
  if (mx == -INFINITY) {
    output[bq * kHeadDim + d] = __float2bfloat16(0.f);
    if (d == 0) lse[bq] = -INFINITY;
    return;
  }
  float den = 0.f, acc = 0.f;
  for (int s = 0; s < num_splits; ++s) {
    const float w = exp2f(pl[s] - mx);  // empty split: 2^-inf = 0
    den += w;
    acc += w * part_o[(bq * num_splits + s) * kHeadDim + d];
  }
  output[bq * kHeadDim + d] = __float2bfloat16(acc / den);
  if (d == 0) lse[bq] = mx + log2f(den);
}

// Tensor map of q cached by (pointer, batch): encoding costs host time on every call otherwise.
struct QMapCache {
  const void* ptr = nullptr;
  int64_t batch = -1;
  CUtensorMap map;
};

}  // namespace

void run(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
         const int32_t* kv_indptr, const int32_t* kv_indices, float sm_scale,
         __nv_bfloat16* output, float* lse, int64_t batch_size, int64_t num_qo_heads,
         int64_t num_kv_heads, int64_t head_dim, int64_t num_pages, int64_t page_size,
         int64_t len_indptr, int64_t num_kv_indices, cudaStream_t stream) {
  if (num_qo_heads != kQoHeads || num_kv_heads != kKvHeads || head_dim != kHeadDim ||
      page_size != 1 || batch_size < 0 || batch_size > 65535 || len_indptr != batch_size + 1 ||
      num_pages < 0 || num_kv_indices < 0 || num_pages * kKvHeads * kHeadDim > (int64_t{1} << 40) ||
      num_kv_indices > (int64_t{1} << 31) - 1) {
    std::fprintf(stderr,
                 "gqa_paged_decode rung1: unsupported shape batch=%lld Hq=%lld Hkv=%lld D=%lld "
                 "page_size=%lld len_indptr=%lld (need Hq=24, Hkv=8, D=128, page_size=1)\n",
                 static_cast<long long>(batch_size), static_cast<long long>(num_qo_heads),
                 static_cast<long long>(num_kv_heads), static_cast<long long>(head_dim),
                 static_cast<long long>(page_size), static_cast<long long>(len_indptr));
    return;
  }
  if (batch_size == 0) return;

  static int num_sms = 0;
  if (num_sms == 0) {
    int dev = 0;
    cudaGetDevice(&dev);
    if (cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        num_sms <= 0) {
      num_sms = 132;
    }
    cudaFuncSetAttribute(gqa_decode_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         static_cast<int>(kSmemBytes));
    // Largest shared-memory carveout, so that two 83 KB CTAs fit on one SM (the L1 left over is
    // not needed: the K/V gather bypasses L1).
    cudaFuncSetAttribute(gqa_decode_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                         static_cast<int>(cudaSharedmemCarveoutMaxShared));
  }

  // q viewed as {128 (d), 3 (head in group), batch*8 (request, KV head)}, innermost first;
  // box {64, 64, 1}: rows 3..63 of the box are out of bounds -> zero fill (the M padding).
  static QMapCache qmap;
  if (qmap.ptr != q || qmap.batch != batch_size) {
    const uint64_t dims[3] = {kHeadDim, kGroup, static_cast<uint64_t>(batch_size) * kKvHeads};
    const uint64_t strides[2] = {kHeadDim * 2, kGroup * kHeadDim * 2};
    const uint32_t box[3] = {kSlabCols, 64, 1};
    if (ptxb::make_tensor_map(&qmap.map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 3, q, dims, strides,
                              box, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
      qmap.ptr = nullptr;
      return;  // make_tensor_map already printed the reason
    }
    qmap.ptr = q;
    qmap.batch = batch_size;
  }

  // Splits: 1 when batch * 8 units already fill 2 CTAs per SM; otherwise enough to fill them,
  // keeping ~128+ tokens (2 tiles) per split on average.
  const int64_t units = batch_size * kKvHeads;
  const int64_t target = 2 * static_cast<int64_t>(num_sms);
  int64_t splits = 1;
  if (units < target) {
    splits = target / units;
    const int64_t avg_len = num_kv_indices / batch_size;
    splits = std::min<int64_t>(splits, std::max<int64_t>(1, avg_len / 128));
    splits = std::min<int64_t>(splits, 64);
  }

  float* part_o = nullptr;
  float* part_lse = nullptr;
  if (splits > 1) {
    const size_t rows = static_cast<size_t>(batch_size) * kQoHeads * splits;
    if (cudaMallocAsync(reinterpret_cast<void**>(&part_o), rows * kHeadDim * sizeof(float),
                        stream) != cudaSuccess ||
        cudaMallocAsync(reinterpret_cast<void**>(&part_lse), rows * sizeof(float), stream) !=
            cudaSuccess) {
      std::fprintf(stderr, "gqa_paged_decode rung1: cudaMallocAsync of the split scratch failed\n");
      if (part_o != nullptr) cudaFreeAsync(part_o, stream);
      return;
    }
  }

  const float scale_log2 = sm_scale * kLog2e;
  const dim3 grid(static_cast<unsigned>(splits), kKvHeads, static_cast<unsigned>(batch_size));
  gqa_decode_kernel<<<grid, kThreads, kSmemBytes, stream>>>(qmap.map, k_cache, v_cache, kv_indptr,
                                                            kv_indices, scale_log2, output, lse,
                                                            part_o, part_lse);
  if (splits > 1) {
    combine_kernel<<<static_cast<unsigned>(batch_size * kQoHeads), kHeadDim, 0, stream>>>(
        part_o, part_lse, static_cast<int>(splits), output, lse);
    cudaFreeAsync(part_o, stream);
    cudaFreeAsync(part_lse, stream);
  }
}
