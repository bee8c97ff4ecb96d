// Shared by rung2_warp_specialized.cu and rung3_fused_dq.cu of mha_bwd_d{64,96,128}[_causal]: the
// warp-specialized rungs' shared-memory carve-up, ring barriers, tile loads, the SS product over
// D and the key-side step (its elementwise math and its dV and dK products), written once. Not
// a standalone header: the rungs include it inside their anonymous namespace after kCausal, kBT,
// kBlockRows, kSlabs, kSlabCols, kSlabBytes, kDSteps, kStages, kConsumers, kLog2e, kScaleLog2 and
// kBarOffset (the barriers' offset: afull, then b0full[kStages], b1full[kStages],
// empty[kStages]), and after bwd_common.cuh (key_side_products uses its RS product and fragment
// packing). The replay model (and `ptxbench tasks solution`) inline it textually
// (src/llm/solution_render.h).
#pragma once

struct Smem {
  uint8_t* base;
  uint64_t* afull;
  uint64_t* b0full;
  uint64_t* b1full;
  uint64_t* empty;
};

__device__ __forceinline__ Smem carve(uint8_t* raw) {
  Smem s;
  // 128B swizzle = XOR of address bits 4-6 with bits 7-9: tiles start on 1024 B.
  s.base = raw + ((1024u - (ptxb::smem_u32(raw) & 1023u)) & 1023u);
  uint64_t* bars = reinterpret_cast<uint64_t*>(s.base + kBarOffset);
  s.afull = bars;
  s.b0full = bars + 1;
  s.b1full = bars + 1 + kStages;
  s.empty = bars + 1 + 2 * kStages;
  return s;
}

// threadIdx.x / 128, broadcast from lane 0 so that the compiler can prove it warp-uniform: the
// causal consumers' loop bounds depend on it, and wgmma must stay on warp-uniform paths (C7520).
__device__ __forceinline__ int warpgroup_index() {
  return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0);
}

// Thread 0, before the CTA barrier.
__device__ __forceinline__ void init_barriers(const Smem& sm) {
  ptxb::mbar_init(sm.afull, 1);
  for (int s = 0; s < kStages; ++s) {
    ptxb::mbar_init(&sm.b0full[s], 1);  // the producer's arrive.expect_tx
    ptxb::mbar_init(&sm.b1full[s], 1);
    ptxb::mbar_init(&sm.empty[s], kConsumers);  // one elected thread per consumer
  }
  ptxb::fence_mbarrier_init();  // inits visible to the async proxy before TMA signals them
}

// Thread 0, before the CTA barrier: the four tensor maps prefetched (the first TMA use otherwise
// waits for the map's fetch) and the ring's barriers initialised.
__device__ __forceinline__ void setup_cta(const Smem& sm, const CUtensorMap* q,
                                          const CUtensorMap* k, const CUtensorMap* v,
                                          const CUtensorMap* d_o) {
  ptxb::prefetch_tensormap(q);
  ptxb::prefetch_tensormap(k);
  ptxb::prefetch_tensormap(v);
  ptxb::prefetch_tensormap(d_o);
  init_barriers(sm);
}

// Producer lane: one 64 x D tile = kSlabs {64, 64} boxes (D = 96: the second box's columns
// 96..127 are out of bounds, written as zeros and counted in kTileBytes by complete_tx).
__device__ __forceinline__ void load_tile(uint8_t* dst, const CUtensorMap* map, uint64_t* bar,
                                          int row) {
  ptxb::tma_load(dst, map, bar, 0, row);
  if constexpr (kSlabs == 2) ptxb::tma_load(dst + kSlabBytes, map, bar, kSlabCols, row);
}

// D/16 k16 steps of an m64n64 SS product over D, both operands K-major 64-row tiles: step kk =
// slab kk/4 (+8 KiB) and +32 B * (kk%4) inside the swizzled 128 B row. D = 96 stops after 6
// steps, before the padded columns.
__device__ __forceinline__ void gemm_ss_d(float (&acc)[32], uint64_t desc_a, uint64_t desc_b) {
#pragma unroll
  for (int kk = 0; kk < kDSteps; ++kk) {
    const uint32_t off = (kk / 4) * kSlabBytes + (kk % 4) * 32;
    ptxb::wgmma_bf16_ss<64>(acc, ptxb::wgmma_desc_advance(desc_a, off),
                            ptxb::wgmma_desc_advance(desc_b, off), kk > 0);
  }
}

// Descriptors of a 128B-swizzled 64-row tile: K-major (rows = M or N, the reduction along the
// 128-byte rows), or MN-major (rows = K; 64 columns per atom of 8 rows, LBO = SBO = 1024 B, a
// k16 step = 16 rows = 2048 B).
__device__ __forceinline__ uint64_t desc_kmajor(const uint8_t* tile) {
  return ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(tile);
}
__device__ __forceinline__ uint64_t desc_mnmajor(const uint8_t* tile) {
  return ptxb::make_wgmma_desc(ptxb::smem_u32(tile), 1024, 1024, ptxb::SmemSwizzle::k128B);
}

// Key-side step, in place: the scores S^T (rows = keys, columns = queries) become P^T. The
// accumulator fragment: st[i] of (warp w, lane l) is key key_row + 8((i/2)%2) (key_row = the
// thread's row 16w + l/4 in the head), query q_row0 + 8(i/4) + 2(l%4) + i%2 (PTX ISA "Register
// Fragments"); lse_vec holds the tile's 64 L values as float2 pairs. `diagonal` (causal only):
// the tile reaches this CTA's keys, so keys after the query are zeroed.
__device__ __forceinline__ void probabilities_transposed(float (&st)[32], const float2* lse_vec,
                                                         int key_row, int q_row0, bool diagonal,
                                                         int lane) {
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const float2 lse = lse_vec[4 * jn + lane % 4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int i = 4 * jn + r;
      const float l2 = (r % 2 == 0 ? lse.x : lse.y) * kLog2e;
      float p = ptxb::exp2_approx(fmaf(st[i], kScaleLog2, -l2));
      if (kCausal && diagonal) {
        const int key = key_row + 8 * (r / 2);
        const int query = q_row0 + 8 * jn + 2 * (lane % 4) + r % 2;
        if (key > query) p = 0.f;
      }
      st[i] = p;
    }
  }
}

// Key-side step, in place: dP^T becomes dS^T = P^T ∘ (dP^T - Dr), Dr (dr_vec, float2 pairs)
// indexed by query = column.
__device__ __forceinline__ void ds_transposed(float (&dpt)[32], const float (&pt)[32],
                                              const float2* dr_vec, int lane) {
#pragma unroll
  for (int jn = 0; jn < 8; ++jn) {
    const float2 dr = dr_vec[4 * jn + lane % 4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int i = 4 * jn + r;
      dpt[i] = pt[i] * (dpt[i] - (r % 2 == 0 ? dr.x : dr.y));
    }
  }
}

// Key-side step, after S^T and dP^T were issued as two commit groups (S^T first): st becomes
// P^T, dV += P^T·dO_i, dpt becomes dS^T, dK += dS^T·Q_i (causal split: dS as hi + lo, two dK
// products), dV and dK committed as one further group. The fragments stay in pf (P^T; with the
// split, dS's lo term) and dsf (dS^T) for the caller. `after_p` runs once P^T is packed (rung
// 3's start skew; rung 2 passes an empty one). q_row0: the query tile's first row in the head;
// diagonal: see probabilities_transposed.
template <bool kSplit, class AfterP>
__device__ __forceinline__ void key_side_products(
    float (&st)[32], float (&dpt)[32], uint32_t (&pf)[4][4], uint32_t (&dsf)[4][4],
    float (&dv_lo)[32], float (&dv_hi)[32], float (&dk_lo)[32], float (&dk_hi)[32],
    const float2* lse_vec, const float2* dr_vec, int key_row, int q_row0, bool diagonal,
    const uint8_t* q_smem, const uint8_t* do_smem, int lane, AfterP&& after_p) {
  ptxb::wgmma_wait_group<1>();
  ptxb::wgmma_fence_operand(st);
  probabilities_transposed(st, lse_vec, key_row, q_row0, diagonal, lane);
  pack_a(st, pf);
  after_p();
  ptxb::wgmma_wait_group<0>();
  ptxb::wgmma_fence_operand(dpt);
  ptxb::wgmma_fence();  // pf and the accumulators were written by ordinary instructions
  gemm_rs_k64(dv_lo, dv_hi, pf, desc_mnmajor(do_smem));
  ptxb::wgmma_commit_group();
  ds_transposed(dpt, st, dr_vec, lane);
  pack_a(dpt, dsf);
  const uint64_t desc_q_mn = desc_mnmajor(q_smem);
  if constexpr (kSplit) {
    ptxb::wgmma_wait_group<0>();  // the dV product no longer reads pf: reuse it for lo
    fence_operand(dv_lo, dv_hi);
    pack_a_lo(dpt, dsf, pf);
    ptxb::wgmma_fence();
    gemm_rs_k64(dk_lo, dk_hi, dsf, desc_q_mn);
    gemm_rs_k64(dk_lo, dk_hi, pf, desc_q_mn);
  } else {
    ptxb::wgmma_fence();  // dsf was written by ordinary instructions
    gemm_rs_k64(dk_lo, dk_hi, dsf, desc_q_mn);
  }
  ptxb::wgmma_commit_group();
}
