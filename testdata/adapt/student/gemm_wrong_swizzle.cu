// PTXBench expert reference, task gemm_n7168_k5120, rung 1: TMA + wgmma (SS) + mbarrier ring.
//
//   C[M,N] = A[M,K] · B[N,K]^T   A row-major [M,K] bf16, B row-major [N,K] bf16 (both K-major),
//   C row-major [M,N] bf16, fp32 accumulation. N = 7168 and K = 5120 are fixed by the task;
//   M is free (benchmark: 8192). Any M >= 1 works: the last M tile is zero-filled by TMA and its
//   out-of-range rows are not stored.
//
// Design
//   CTA tile        BM x BN x BK = 128 x 256 x 64 (one k-tile = 4 wgmma k16 steps).
//   Threads         256 = 2 warpgroups, both consumers. Warpgroup w computes rows 64w..64w+63
//                   of the CTA tile with wgmma.m64n256k16 (SS): 128 fp32 accumulators/thread.
//                   Thread 0 additionally issues all TMA loads (no dedicated producer warp:
//                   that is rung 2).
//   Register split  none (no setmaxnreg); __launch_bounds__(256, 1) lets ptxas use up to 255
//                   registers per thread (65,536 / 256), ample for 128 accumulators.
//   Pipeline        4 stages x 48 KiB (A 16 KiB + B 32 KiB) = 192 KiB of dynamic shared memory,
//                   + 1 KiB alignment slack + barriers. full[s]: TMA transaction barrier
//                   (1 arrival + 48 KiB tx); empty[s]: one arrival per consumer warpgroup (2).
//                   Loads run 3 k-tiles ahead of the math; one wgmma group stays in flight
//                   (wgmma.wait_group 1), so a stage is refilled only after the group that read
//                   it has completed.
//   Grid            ceil(M/128) x (7168/256) = 64 x 28 = 1792 CTAs for M = 8192, one CTA per SM
//                   (smem-bound), 13.6 waves on 132 SMs. 1-D launch with a grouped raster
//                   (16 M-tiles per group, i.e. a ~16 x 8 block of tiles per wave) so concurrently
//                   running CTAs share A and B panels in L2.
//   Epilogue        fp32 -> bf16x2 (cvt.rn) straight from the accumulator fragment to global
//                   memory with 4-byte stores (rung 3+ would stage through smem / TMA store).
//
// Why 128 x 256 with two consumer warpgroups: m64n256k16 is the largest wgmma and has the best
// smem-bandwidth-to-math ratio (each k16 step reads 64x16 A + 256x16 B = 10 KiB for 524k FLOP);
// two warpgroups sharing the B tile halve B's smem traffic per FLOP again, and 128 accumulator
// registers per thread fit without setmaxnreg because there are only 256 threads.
//
// Build: ptxbench compile rung1_tma_wgmma.cu --task gemm_n7168_k5120
//        (nvcc -gencode arch=compute_90a,code=sm_90a -O3 -lineinfo, pack include dir on -I)
// Measured speed (H200, 2026-11-29, `ptxbench eval`, CUPTI median with L2 flushed, 3 seeds):
// 0.830-0.831 ms = 723-724 TFLOP/s, 0.904-0.909x cuBLASLt (0.751-0.755 ms); PASSED, dynamic_present.
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
constexpr int kStages = 4;
constexpr int kConsumerWarpgroups = kBM / 64;
constexpr int kThreads = 128 * kConsumerWarpgroups;
constexpr int kKTiles = kK / kBK;
constexpr int kGroupM = 16;  // M tiles per raster group

constexpr uint32_t kStageABytes = kBM * kBK * 2;  // 16 KiB
constexpr uint32_t kStageBBytes = kBN * kBK * 2;  // 32 KiB
constexpr uint32_t kStageBytes = kStageABytes + kStageBBytes;
constexpr uint32_t kWarpgroupABytes = 64 * kBK * 2;  // 8 KiB: rows 64w.. of the A stage
constexpr uint32_t kBarrierBytes = 2 * kStages * sizeof(uint64_t);
constexpr uint32_t kSmemBytes = kStages * kStageBytes + kBarrierBytes + 1024;  // + align slack

static_assert(kN % kBN == 0, "N must be a multiple of the CTA tile N");
static_assert(kK % kBK == 0, "K must be a multiple of the k-tile");
static_assert(kKTiles >= kStages, "prologue fills every stage");
static_assert(kBK * 2 == 128, "k-tile rows = exactly the 128 B swizzle span (contract 3.1.2)");
static_assert(kBM % 64 == 0 && kBN % 8 == 0 && kBN <= 256, "wgmma m64nNk16: N in 8..256");
static_assert(kBM <= 256 && kBN <= 256, "TMA boxDim[i] <= 256");
// 128B swizzle atoms are 8 rows x 128 B = 1024 B; every operand tile (and the 64-row slice of A
// each warpgroup reads) must start on an atom so the descriptor base offset stays 0 (contract
// 3.1.3, PTX ISA 9.7.15.5.1.2.2).
static_assert(kStageABytes % 1024 == 0 && kStageBBytes % 1024 == 0 && kWarpgroupABytes % 1024 == 0,
              "operand tiles must stay 1024-byte aligned");
static_assert(kSmemBytes <= 227 * 1024, "dynamic shared memory per block is at most 227 KiB");

__global__ void __launch_bounds__(kThreads, 1)
    gemm_tma_wgmma_kernel(const __grid_constant__ CUtensorMap tmap_a,
                          const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* __restrict__ C,
                          int M) {
  extern __shared__ uint8_t smem_raw[];
  // The 128B swizzle pattern is a function of address bits 4..9, so the operand ring must start
  // on a 1024-byte boundary; __align__ on extern shared is not a guarantee, round up at run time.
  uint8_t* smem = smem_raw + ((1024u - (ptxb::smem_u32(smem_raw) & 1023u)) & 1023u);
  uint8_t* smem_a = smem;                               // kStages x 16 KiB
  uint8_t* smem_b = smem + kStages * kStageABytes;      // kStages x 32 KiB
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * kStageBytes);
  uint64_t* empty = full + kStages;

  const int tid = threadIdx.x;
  const int warpgroup = tid / 128;
  const int wg_tid = tid % 128;

  // Grouped raster: consecutive CTAs walk kGroupM M-tiles down one N column, then the next
  // column, so a wave of 132 CTAs touches ~16 A panels and ~8 B panels.
  const int tiles_m = (M + kBM - 1) / kBM;
  const int tile = blockIdx.x;
  const int group_span = kGroupM * (kN / kBN);
  const int first_m = (tile / group_span) * kGroupM;
  const int rows_in_group = min(tiles_m - first_m, kGroupM);
  const int tile_m = first_m + (tile % group_span) % rows_in_group;
  const int tile_n = (tile % group_span) / rows_in_group;
  const int m0 = tile_m * kBM;
  const int n0 = tile_n * kBN;

  if (tid == 0) {
    ptxb::prefetch_tensormap(&tmap_a);
    ptxb::prefetch_tensormap(&tmap_b);
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_init(&full[s], 1);                     // the producer's arrive.expect_tx
      ptxb::mbar_init(&empty[s], kConsumerWarpgroups);  // one elected thread per warpgroup
    }
    // Makes the inits visible to the async proxy (TMA complete_tx) before the first load
    // (PTX ISA 9.7.13.15, contract 3.5).
    ptxb::fence_mbarrier_init();
  }
  __syncthreads();

  // Prologue: fill every stage. A stage's expect_tx is the full 48 KiB even for a last M tile
  // that hangs off the tensor: TMA zero-fills and still counts out-of-bounds bytes (contract 3.5).
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_arrive_expect_tx(&full[s], kStageBytes);
      ptxb::tma_load(smem_a + s * kStageABytes, &tmap_a, &full[s], s * kBK, m0);
      ptxb::tma_load(smem_b + s * kStageBBytes, &tmap_b, &full[s], s * kBK, n0);
    }
  }

  float acc[kBN / 2];
#pragma unroll
  for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.f;

  // Descriptor of stage 0 for this warpgroup's operands; stage s adds s * bytes, k16 slice kk
  // adds kk * 32 B inside the 128 B swizzled row (contract 3.1.5: the hardware applies the XOR
  // to the final address). SBO = 1024 (8-row atoms packed), LBO unused for swizzled K-major.
  const uint64_t desc_a0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(
      smem_a + warpgroup * kWarpgroupABytes);
  const uint64_t desc_b0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k64B>(smem_b);

  for (int kt = 0; kt < kKTiles; ++kt) {
    const int s = kt % kStages;
    // full[s] completes its n-th phase (parity n & 1) when k-tile s + n*kStages has landed.
    ptxb::mbar_wait(&full[s], static_cast<uint32_t>(kt / kStages) & 1u);

    // wgmma.fence orders the previous register writes to acc (zeroing, or nothing) before the
    // asynchronous reads of this batch (PTX ISA 9.7.15.6).
    ptxb::wgmma_fence();
    const uint64_t desc_a = ptxb::wgmma_desc_advance(desc_a0, s * kStageABytes);
    const uint64_t desc_b = ptxb::wgmma_desc_advance(desc_b0, s * kStageBBytes);
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      ptxb::wgmma_bf16_ss<kBN>(acc, ptxb::wgmma_desc_advance(desc_a, kk * 32),
                               ptxb::wgmma_desc_advance(desc_b, kk * 32), true);
    }
    ptxb::wgmma_commit_group();
    // Keep this k-tile's group in flight; the previous one (k-tile kt-1) is now complete, so its
    // stage may be overwritten (PTX ISA 9.7.15.8; contract 3.3 / 3.4 WAR).
    ptxb::wgmma_wait_group<1>();

    if (kt > 0) {
      const int ps = (kt - 1) % kStages;
      if (wg_tid == 0) ptxb::mbar_arrive(&empty[ps]);
      const int next = kt - 1 + kStages;  // k-tile that reuses stage ps
      if (tid == 0 && next < kKTiles) {
        // empty[ps] completes its n-th phase when both warpgroups released k-tile ps + n*kStages.
        ptxb::mbar_wait(&empty[ps], static_cast<uint32_t>((kt - 1) / kStages) & 1u);
        ptxb::mbar_arrive_expect_tx(&full[ps], kStageBytes);
        ptxb::tma_load(smem_a + ps * kStageABytes, &tmap_a, &full[ps], next * kBK, m0);
        ptxb::tma_load(smem_b + ps * kStageBBytes, &tmap_b, &full[ps], next * kBK, n0);
      }
    }
  }
  ptxb::wgmma_wait_group<0>();
  ptxb::wgmma_fence_operand(acc);  // no accumulator read may be hoisted above the wait

  // Accumulator fragment of m64nNk16 (PTX ISA 9.7.15.5.1 "Register Fragments", accumulator D;
  // verified by tests/gpu/hopper_wrappers_test.cu): register i of thread
  // (warp w, lane l) is row 16w + l/4 + 8*((i/2)%2), column 8*(i/4) + 2*(l%4) + (i%2).
  // Registers i, i+1 (i even) are adjacent columns: one bf16x2 4-byte store.
  const int warp = wg_tid / 32, lane = wg_tid % 32;
  const int row_base = m0 + warpgroup * 64 + 16 * warp + lane / 4;
  const int col_base = n0 + 2 * (lane % 4);
#pragma unroll
  for (int i = 0; i < kBN / 2; i += 2) {
    const int row = row_base + 8 * ((i / 2) % 2);
    const int col = col_base + 8 * (i / 4);
    if (row < M) {
      const __nv_bfloat162 v = __floats2bfloat162_rn(acc[i], acc[i + 1]);
      *reinterpret_cast<__nv_bfloat162*>(C + static_cast<int64_t>(row) * kN + col) = v;
    }
  }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  if (N != kN || K != kK || M <= 0 || M > (int64_t{1} << 30)) {
    std::fprintf(stderr, "gemm_n7168_k5120 rung1: unsupported shape M=%lld N=%lld K=%lld\n",
                 static_cast<long long>(M), static_cast<long long>(N), static_cast<long long>(K));
    return;
  }
  // Tensor maps (innermost dimension first): A is {K, M}, B is {K, N}, row pitch K*2 bytes;
  // boxes {64, 128} and {64, 256} with 128B swizzle = the canonical K-major wgmma layout.
  CUtensorMap tmap_a, tmap_b;
  if (ptxb::make_tensor_map_2d_bf16(&tmap_a, A, static_cast<uint64_t>(M), kK, kK, kBM, kBK,
                                    ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS ||
      ptxb::make_tensor_map_2d_bf16(&tmap_b, B, kN, kK, kK, kBN, kBK,
                                    ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
    return;  // make_tensor_map already printed the reason
  }
  cudaFuncSetAttribute(gemm_tma_wgmma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                       kSmemBytes);
  const int tiles_m = static_cast<int>((M + kBM - 1) / kBM);
  const unsigned grid = static_cast<unsigned>(tiles_m * (kN / kBN));
  gemm_tma_wgmma_kernel<<<grid, kThreads, kSmemBytes, stream>>>(tmap_a, tmap_b, C,
                                                                 static_cast<int>(M));
}
