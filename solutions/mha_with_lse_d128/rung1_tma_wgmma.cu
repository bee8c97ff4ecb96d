// PTXBench expert reference, tasks mha_with_lse_d{64,96,128}[_causal], rung 1:
// TMA + wgmma (SS for Q·K^T, RS for P·V) + 2-stage mbarrier ring, online softmax in registers.
// One source: PTXB_HEAD_DIM (default 128) picks the head dim, PTXB_CAUSAL (default 0) the causal
// mask; solutions/replay.json puts the defines in front per task.
//
//   Q, K, V, O  [B, H, S, D] bf16 row-major (D innermost), B = 4, H = 48, D = PTXB_HEAD_DIM =
//               64, 96 or 128 (task constants; B and H are taken from the arguments), S variable
//               (benchmark 4096), S % 128 == 0 required (checked in run).
//   LSE         [B, H, S] fp32, natural-log logsumexp of the scaled score row.
//   O = softmax(Q·K^T / sqrt(D) [+ causal mask]) · V. Causal (PTXB_CAUSAL 1, the _causal task)
//   is top-left aligned: query i attends keys j <= i.
//
// Design (written for D = 128; the head-dim-dependent parts are listed per D below)
//   Grid            (S/128 query tiles, B*H) = 32 x 192 = 6144 CTAs for S = 4096, one CTA per
//                   SM (smem-bound). blockIdx.x walks the query tiles of one head fastest, so
//                   the ~132 concurrently running CTAs cover ~4 heads and share their K/V in L2.
//                   Causal: tile index reversed (heaviest query tile of a head first).
//   Threads         256 = 2 warpgroups, both consumers; warpgroup w owns query rows
//                   64w..64w+63 of the 128-row tile. Thread 0 additionally issues every TMA load
//                   (no producer warp: that is the next rung).
//   Per KV tile j (128 keys), per warpgroup:
//                   S(64x128 fp32) = Q_w · K_j^T   8 x wgmma.m64n128k16 SS (K-major A and B)
//                   [causal, diagonal tile only: S = -inf where key > query]
//                   online softmax in base 2 (scores prescaled by log2(e)/sqrt(D)), rescale O
//                   P (bf16) = accumulator fragment of S repacked as RS A fragments (no smem)
//                   O(64x128 fp32) += P · V_j      8 k16 steps x 2 x wgmma.m64n64k16 RS, B = V
//                                                  MN-major (imm-trans-b = 1), one wgmma per
//                                                  64-column swizzle slab of V.
//   Register budget __launch_bounds__(256, 1): up to 255 regs/thread, no setmaxnreg; live state
//                   per thread: S 64 + O 64 fp32, P 32 packed bf16x2, m/l 4, addresses.
//                   ptxas (CUDA 13.0): 200 registers (causal: 198), 0 spill bytes, no stack.
//   Shared memory   Q 32 KiB (loaded once) + 2 stages x (K 32 KiB + V 32 KiB) = 160 KiB
//                   + barriers + 1 KiB alignment slack = 164,920 B. Every 128-wide row is two
//                   64-element (128 B) slabs, each one TMA box {64, 128} with 128B swizzle:
//                   slab 0 = columns 0..63 of all 128 rows (16 KiB), slab 1 = columns 64..127.
//   Pipeline        depth 2. kfull[s], vfull[s]: 1 arrival (thread 0's arrive.expect_tx) +
//                   32 KiB of TMA bytes each; empty[s]: 2 arrivals (one per warpgroup, after the
//                   P·V wgmmas of the tile in stage s completed, hence after the Q·K^T wgmmas
//                   too). Thread 0 refills stage s with tile j+2 once empty[s] completed, while
//                   tile j+1 (the other stage) is already resident. K and V have separate full
//                   barriers so Q·K^T starts before V has landed.
//   Epilogue        O = acc / l -> bf16x2 4-byte global stores from the accumulator fragment;
//                   LSE = (m2 + log2 l) * ln 2 written by lane%4 == 0 for its two rows.
//
// Per head dim  slabs  Q·K^T wgmmas  P·V wgmmas   tile (Q, K, V)  dynamic smem  ptxas registers
//   D = 128     2      8 x n128k16   16 x n64k16  32 KiB          164,920 B     200 (causal 198)
//   D = 96      2 (*)  6 x n128k16   16 x n64k16  32 KiB (*)      164,920 B     200 (causal 198)
//   D = 64      1      4 x n128k16    8 x n64k16  16 KiB           83,000 B     154 (causal 154)
//   (*) D = 96: each row is padded to 128 columns in shared memory. The second slab's TMA box
//   {64, 128} starts at column 64 of a tensor map 96 columns wide; TMA writes the out-of-bounds
//   columns 96..127 as zeros and still counts the full box bytes for complete_tx. Q·K^T runs
//   only the 6 k16 steps of real columns; P·V's accumulator columns 96..127 are never stored,
//   so the pad cannot reach O. Same layouts and descriptors as D = 128 (proven on the GPU), at
//   the cost of a third more P·V MMA work; rung 2's top comment gives the reasoning in full.
//   D = 64 still runs one CTA per SM (2 x 256 threads x 154 registers > 64K registers).
//   All variants: 0 spill bytes, no stack (ptxas, CUDA 13.0, 2026-12-02). D = 128 with
//   PTXB_HEAD_DIM unset compiles to the same SASS as before the head dim was a define (same
//   instructions and order; ptxas swaps the registers of the two O accumulators).
// d64/d96: compiled and statically checked on the development machine; this rung has not yet
//   run on a GPU at those head dims (rung 2 has: see its top comment).
//
// Build: ptxbench tasks solution mha_with_lse_d{64,96,128}[_causal] --turn 1 >k.cu &&
//        ptxbench compile k.cu --task mha_with_lse_d{64,96,128}[_causal]
//        (nvcc -gencode arch=compute_90a,code=sm_90a -O3 -lineinfo, pack include dir on -I)
// Measured speed, D = 128 (H200, 2026-11-29, `ptxbench eval --seed 5`, CUPTI medians, L2 flushed):
//   2.925 ms vs cuDNN 2.487 ms = 0.850x (S=4096, 564 TFLOP/s); S=1024: 0.812x; S=8192: 0.881x.
//   PASSED with target instructions dynamic_present at every S. Rung 2 (warp specialization,
//   ping-pong, softmax/GEMM overlap) is faster; numbers in bench/results/reference_solutions.md.
// Causal task, D = 128 (PTXB_CAUSAL 1), same method: 1.602 ms vs cuDNN 1.387 ms = 0.865x
//   (S=4096, causal half counted: 515 TFLOP/s); S=1024: 0.845x; S=8192: 0.885x; PASSED,
//   dynamic_present.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>

#include "ptxb/hopper.cuh"

namespace {

// One source, six tasks: "#define PTXB_CAUSAL 1" in front of this file gives the causal kernel,
// "#define PTXB_HEAD_DIM 64" (or 96) the head dim of mha_with_lse_d64[_causal] (_d96[_causal]);
// solutions/replay.json lists those tasks that way. The replay model and `ptxbench tasks
// solution` prepend the defines, so an answer stays one self-contained file.
#ifndef PTXB_CAUSAL
#define PTXB_CAUSAL 0
#endif
#ifndef PTXB_HEAD_DIM
#define PTXB_HEAD_DIM 128
#endif
constexpr bool kCausal = PTXB_CAUSAL != 0;

constexpr int kD = PTXB_HEAD_DIM;  // head dim (task constant)
constexpr int kBM = 128;           // query rows per CTA
constexpr int kBN = 128;           // keys per KV tile
constexpr int kSlabCols = 64;      // 64 bf16 = 128 B = one 128B-swizzle span (TMA box inner dim)
// Shared memory holds D in 64-column slabs; D = 96 is padded to two slabs whose columns 96..127
// are TMA's out-of-bounds zero fill (see the top comment).
constexpr int kSlabs = (kD + kSlabCols - 1) / kSlabCols;
constexpr int kQkSteps = kD / 16;  // k16 steps of S = Q·K^T: the padding is never multiplied
constexpr int kStages = 2;
constexpr int kConsumerWarpgroups = kBM / 64;
constexpr int kThreads = 128 * kConsumerWarpgroups;

constexpr uint32_t kSlabBytes = kBM * kSlabCols * 2;            // 16 KiB: 128 rows x 128 B
constexpr uint32_t kTileBytes = kSlabs * kSlabBytes;            // 16 or 32 KiB: 128 rows
constexpr uint32_t kWarpgroupQBytes = 64 * kSlabCols * 2;       // 8 KiB: rows 64w.. of a slab
constexpr uint32_t kQOffset = 0;
constexpr uint32_t kKOffset = kQOffset + kTileBytes;            // kStages x tile
constexpr uint32_t kVOffset = kKOffset + kStages * kTileBytes;  // kStages x tile
constexpr uint32_t kBarOffset = kVOffset + kStages * kTileBytes;
constexpr uint32_t kNumBarriers = 1 + 3 * kStages;              // qfull, kfull[], vfull[], empty[]
constexpr uint32_t kSmemBytes = kBarOffset + kNumBarriers * 8 + 1024;  // + alignment slack

// Softmax in base 2: s2 = s * log2(e) / sqrt(D); exp(x) = exp2(x * log2(e)).
constexpr float kSqrtD = kD == 64 ? 8.0f : kD == 96 ? 9.797958971132712f : 11.313708498984761f;
constexpr float kScaleLog2 = 1.4426950408889634f / kSqrtD;  // log2(e) / sqrt(D)
constexpr float kLn2 = 0.6931471805599453f;

static_assert(kD == 64 || kD == 96 || kD == 128,
              "PTXB_HEAD_DIM: 64 (one slab), 96 (two slabs, the second half zero fill) or 128");
static_assert(kSlabs == 1 || kSlabs == 2, "thread 0 issues one or two slab boxes per tile");
static_assert(kD % 16 == 0 && kSlabs * kSlabCols >= kD && kSlabs * kSlabCols - kD < kSlabCols,
              "D covered by whole slabs, k16 steps of Q·K^T inside the real columns");
static_assert(kBM == kBN, "causal diagonal logic assumes square tiles");
static_assert(kSlabCols * 2 == 128, "slab rows = exactly the 128 B swizzle span (contract 3.1.2)");
static_assert(kSlabBytes % 1024 == 0 && kWarpgroupQBytes % 1024 == 0 && kTileBytes % 1024 == 0,
              "operand tiles must stay 1024-byte aligned (128B swizzle atom, base offset 0)");
static_assert(kSmemBytes <= 227 * 1024, "dynamic shared memory per block is at most 227 KiB");

__device__ __forceinline__ float quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
__device__ __forceinline__ float quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Thread 0 only: K and V of KV tile `kv_tile` into stage `s` (one 64-column box per slab). A box
// that reaches past column D (D = 96) still completes its full box bytes: the out-of-bounds
// elements are written as zeros and counted (TMA OOB fill).
__device__ __forceinline__ void load_kv(const CUtensorMap* tmap_k, const CUtensorMap* tmap_v,
                                        uint8_t* smem, uint64_t* kfull, uint64_t* vfull, int s,
                                        int row) {
  uint8_t* k_dst = smem + kKOffset + s * kTileBytes;
  uint8_t* v_dst = smem + kVOffset + s * kTileBytes;
  ptxb::mbar_arrive_expect_tx(&kfull[s], kTileBytes);
  ptxb::tma_load(k_dst, tmap_k, &kfull[s], 0, row);
  if constexpr (kSlabs == 2) ptxb::tma_load(k_dst + kSlabBytes, tmap_k, &kfull[s], kSlabCols, row);
  ptxb::mbar_arrive_expect_tx(&vfull[s], kTileBytes);
  ptxb::tma_load(v_dst, tmap_v, &vfull[s], 0, row);
  if constexpr (kSlabs == 2) ptxb::tma_load(v_dst + kSlabBytes, tmap_v, &vfull[s], kSlabCols, row);
}

__global__ void __launch_bounds__(kThreads, 1)
    mha_fwd_kernel(const __grid_constant__ CUtensorMap tmap_q,
                   const __grid_constant__ CUtensorMap tmap_k,
                   const __grid_constant__ CUtensorMap tmap_v, __nv_bfloat16* __restrict__ O,
                   float* __restrict__ LSE, int S) {
  extern __shared__ uint8_t smem_raw[];
  // 128B swizzle = XOR of address bits 4-6 with bits 7-9: every operand tile starts on 1024 B.
  uint8_t* smem = smem_raw + ((1024u - (ptxb::smem_u32(smem_raw) & 1023u)) & 1023u);
  uint64_t* bars = reinterpret_cast<uint64_t*>(smem + kBarOffset);
  uint64_t* qfull = bars;
  uint64_t* kfull = bars + 1;
  uint64_t* vfull = bars + 1 + kStages;
  uint64_t* empty = bars + 1 + 2 * kStages;

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const int wg_tid = tid % 128;
  const int warp = wg_tid / 32, lane = wg_tid % 32;

  const int num_q_tiles = S / kBM;
  // Causal: heaviest (last) query tile of each head first; the light ones fill the tail.
  const int q_tile = kCausal ? (num_q_tiles - 1 - static_cast<int>(blockIdx.x))
                             : static_cast<int>(blockIdx.x);
  const int bh = blockIdx.y;
  const int head_row0 = bh * S;               // row of (b, h, 0) in the {D, B*H*S} 2-D view
  const int q_row0 = head_row0 + q_tile * kBM;
  // Causal: key tiles 0..q_tile (tile q_tile is the diagonal one); tiles above are skipped.
  const int num_kv_tiles = kCausal ? (q_tile + 1) : (S / kBN);

  if (tid == 0) {
    ptxb::prefetch_tensormap(&tmap_q);
    ptxb::prefetch_tensormap(&tmap_k);
    ptxb::prefetch_tensormap(&tmap_v);
    ptxb::mbar_init(qfull, 1);
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_init(&kfull[s], 1);                    // thread 0's arrive.expect_tx
      ptxb::mbar_init(&vfull[s], 1);
      ptxb::mbar_init(&empty[s], kConsumerWarpgroups);  // one elected thread per warpgroup
    }
    ptxb::fence_mbarrier_init();  // inits visible to the async proxy before TMA signals them
  }
  __syncthreads();

  if (tid == 0) {
    ptxb::mbar_arrive_expect_tx(qfull, kTileBytes);
    ptxb::tma_load(smem + kQOffset, &tmap_q, qfull, 0, q_row0);
    if constexpr (kSlabs == 2) {
      ptxb::tma_load(smem + kQOffset + kSlabBytes, &tmap_q, qfull, kSlabCols, q_row0);
    }
    for (int j = 0; j < kStages && j < num_kv_tiles; ++j) {
      load_kv(&tmap_k, &tmap_v, smem, kfull, vfull, j, head_row0 + j * kBN);
    }
  }
  __syncwarp();

  // Descriptors (contract 3.1). Q and K are K-major (reduction over D, contiguous): 128B swizzle,
  // SBO = 1024 (8-row atoms packed), k16 step kk = slab kk/4 (+16 KiB) and +32 B * (kk%4)
  // inside the swizzled 128 B row. Warpgroup w reads Q rows 64w.. = +8 KiB inside each slab.
  const uint64_t desc_q0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(
      smem + kQOffset + warpgroup * kWarpgroupQBytes);
  const uint64_t desc_k0 =
      ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem + kKOffset);
  // V is B of P·V with N = D (contiguous) and K = keys: MN-major (imm-trans-b = 1, contract 3.1
  // rule 7). 128B-swizzle MN-major atom = 64 contiguous N elements (one 128 B slab row) x 8 K
  // rows, 1024 B. Each wgmma covers N = 64 = exactly one atom along N (one slab), so the
  // N-direction atom stride is never used; K = 16 keys = two 8-key atoms 1024 B apart. Both
  // LBO and SBO are set to 1024 B so the K-direction stride is right under either field
  // assignment. k16 step kk = +16 keys = +2048 B (a multiple of 1024: swizzle phase kept).
  const uint64_t desc_v0 = ptxb::make_wgmma_desc(ptxb::smem_u32(smem + kVOffset), 1024, 1024,
                                                 ptxb::SmemSwizzle::k128B);

  // O columns 64*slab..64*slab+63, one m64n64 accumulator fragment per slab (D = 96: columns
  // 96..127 of slab 1 multiply V's zero fill and are never stored).
  float o_acc[kSlabs][kSlabCols / 2];
#pragma unroll
  for (int i = 0; i < kSlabCols / 2; ++i) {
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) o_acc[slab][i] = 0.f;
  }
  float sacc[kBN / 2];
  // Row statistics for the thread's two rows (h = 0: row l/4, h = 1: row l/4 + 8 of its warp's
  // 16): m in base-2 scaled units, l = this thread's partial sum (quad-reduced at the end).
  float m_run[2] = {-INFINITY, -INFINITY};
  float l_run[2] = {0.f, 0.f};
  // Query row (within the 128-row tile) of accumulator rows h = 0 / 1, for the causal mask.
  const int tile_row0 = warpgroup * 64 + 16 * warp + lane / 4;

  ptxb::mbar_wait(qfull, 0);

  for (int j = 0; j < num_kv_tiles; ++j) {
    const int s = j % kStages;
    const uint32_t parity = static_cast<uint32_t>(j / kStages) & 1u;

    // ---- S = Q · K_j^T ----
    ptxb::mbar_wait(&kfull[s], parity);
    ptxb::wgmma_fence();  // orders the previous iteration's reads of sacc before the new writes
    {
      const uint64_t desc_k = ptxb::wgmma_desc_advance(desc_k0, s * kTileBytes);
#pragma unroll
      for (int kk = 0; kk < kQkSteps; ++kk) {
        const uint32_t off = (kk / 4) * kSlabBytes + (kk % 4) * 32;
        ptxb::wgmma_bf16_ss<kBN>(sacc, ptxb::wgmma_desc_advance(desc_q0, off),
                                 ptxb::wgmma_desc_advance(desc_k, off), kk > 0);
      }
    }
    ptxb::wgmma_commit_group();
    ptxb::wgmma_wait_group<0>();
    ptxb::wgmma_fence_operand(sacc);

    // Accumulator fragment (PTX ISA "Register Fragments", verified by hopper_wrappers_test):
    // sacc[i] of (warp w, lane l) is row 16w + l/4 + 8*((i/2)%2), key 8*(i/4) + 2*(l%4) + i%2.
    if (kCausal && j == q_tile) {
      // Diagonal tile: query tile row r attends key tile column c iff c <= r (same origin).
#pragma unroll
      for (int i = 0; i < kBN / 2; ++i) {
        const int row = tile_row0 + 8 * ((i / 2) % 2);
        const int col = 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
        if (col > row) sacc[i] = -INFINITY;
      }
    }

    // ---- online softmax (base 2) ----
    float alpha[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = -INFINITY;
#pragma unroll
      for (int jn = 0; jn < kBN / 8; ++jn) {
        mx = fmaxf(mx, fmaxf(sacc[4 * jn + 2 * h], sacc[4 * jn + 2 * h + 1]));
      }
      mx = quad_max(mx);  // the 4 lanes of a quad share the row
      // Every row has at least one unmasked key in every processed tile except possibly in a
      // causal diagonal tile, and the diagonal tile is processed last (key tile 0 first, whose
      // key 0 is visible to every query), so m_new is always finite: no -inf - -inf.
      const float m_new = fmaxf(m_run[h], mx * kScaleLog2);
      alpha[h] = ptxb::exp2_approx(m_run[h] - m_new);  // 0 on the first tile (m_run = -inf)
      m_run[h] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int jn = 0; jn < kBN / 8; ++jn) {
        const float p0 = ptxb::exp2_approx(fmaf(sacc[4 * jn + 2 * h], kScaleLog2, -m_new));
        const float p1 = ptxb::exp2_approx(fmaf(sacc[4 * jn + 2 * h + 1], kScaleLog2, -m_new));
        sacc[4 * jn + 2 * h] = p0;
        sacc[4 * jn + 2 * h + 1] = p1;
        sum += p0 + p1;
      }
      l_run[h] = l_run[h] * alpha[h] + sum;
    }
#pragma unroll
    for (int i = 0; i < kSlabCols / 2; ++i) {
      const float a = alpha[(i / 2) % 2];
#pragma unroll
      for (int slab = 0; slab < kSlabs; ++slab) o_acc[slab][i] *= a;
    }

    // P as RS A fragments (contract 3.2): k16 slice kk = keys 16kk..16kk+15 = accumulator
    // registers 8kk..8kk+7: a0 = (row, keys 2(l%4)+{0,1}) = regs 8kk+{0,1}; a1 = row+8 =
    // regs 8kk+{2,3}; a2 = (row, keys 8+...) = regs 8kk+{4,5}; a3 = regs 8kk+{6,7}.
    uint32_t pfrag[kBN / 16][4];
#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        pfrag[kk][r] = ptxb::pack_bf16x2(sacc[8 * kk + 2 * r], sacc[8 * kk + 2 * r + 1]);
      }
    }

    // ---- O += P · V_j ----
    ptxb::mbar_wait(&vfull[s], parity);
    ptxb::wgmma_fence();  // O (rescaled) and P were written by ordinary instructions
    {
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
    }
    ptxb::wgmma_commit_group();
    // All wgmmas of this warpgroup reading stage s (Q·K^T above, P·V here) are complete, and
    // pfrag may be overwritten next iteration (PTX ISA 9.7.15.8; contract 3.3 / 3.4 WAR).
    ptxb::wgmma_wait_group<0>();
#pragma unroll
    for (int slab = 0; slab < kSlabs; ++slab) ptxb::wgmma_fence_operand(o_acc[slab]);

    if (wg_tid == 0) ptxb::mbar_arrive(&empty[s]);
    const int next = j + kStages;  // KV tile that reuses stage s
    if (tid == 0 && next < num_kv_tiles) {
      // empty[s] completes its n-th phase when both warpgroups released KV tile s + n*kStages.
      ptxb::mbar_wait(&empty[s], parity);
      load_kv(&tmap_k, &tmap_v, smem, kfull, vfull, s, head_row0 + next * kBN);
    }
    __syncwarp();
  }

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
      // Compile-time per (i, slab): col < 8 * (i / 4) + 8, so this drops exactly the padding.
      if (slab * kSlabCols + 8 * (i / 4) < kD) {
        __nv_bfloat162* dst_slab = reinterpret_cast<__nv_bfloat162*>(dst + slab * kSlabCols);
        *dst_slab = __floats2bfloat162_rn(o_acc[slab][i] * inv_l[h], o_acc[slab][i + 1] * inv_l[h]);
      }
    }
  }
  if (lane % 4 == 0) {
    LSE[row_g] = lse[0];
    LSE[row_g + 8] = lse[1];
  }
}

}  // namespace

void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
         __nv_bfloat16* O, float* LSE, int64_t B, int64_t H, int64_t D, int64_t S,
         cudaStream_t stream) {
  const int64_t rows = B * H * S;
  if (D != kD || S <= 0 || S % kBM != 0 || B <= 0 || H <= 0 || B * H > 65535 ||
      rows > (int64_t{1} << 31) - 1) {
    std::fprintf(stderr,
                 "mha_with_lse_d%d%s rung1: unsupported shape B=%lld H=%lld D=%lld S=%lld (need "
                 "D=%d, S %% 128 == 0, B*H <= 65535)\n",
                 kD, kCausal ? "_causal" : "", static_cast<long long>(B),
                 static_cast<long long>(H), static_cast<long long>(D), static_cast<long long>(S),
                 kD);
    return;
  }
  // 2-D views {D, B*H*S} (innermost first), row pitch D*2 bytes; box {64, 128} with 128B swizzle
  // = one 128-row x 64-column slab in the canonical 128B-swizzled layout (D = 96: the second box
  // is half zero fill, columns >= D are out of bounds). A tile never straddles heads because
  // S % 128 == 0.
  CUtensorMap tmap_q, tmap_k, tmap_v;
  if (ptxb::make_tensor_map_2d_bf16(&tmap_q, Q, static_cast<uint64_t>(rows), kD, kD, kBM,
                                    kSlabCols, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS ||
      ptxb::make_tensor_map_2d_bf16(&tmap_k, K, static_cast<uint64_t>(rows), kD, kD, kBN,
                                    kSlabCols, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS ||
      ptxb::make_tensor_map_2d_bf16(&tmap_v, V, static_cast<uint64_t>(rows), kD, kD, kBN,
                                    kSlabCols, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
    return;  // make_tensor_map already printed the reason
  }
  cudaFuncSetAttribute(mha_fwd_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  const dim3 grid(static_cast<unsigned>(S / kBM), static_cast<unsigned>(B * H));
  mha_fwd_kernel<<<grid, kThreads, kSmemBytes, stream>>>(tmap_q, tmap_k, tmap_v, O, LSE,
                                                         static_cast<int>(S));
}
