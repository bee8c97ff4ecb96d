// PTXBench expert reference, task gemm_n7168_k5120, rung 2: warp-specialized, persistent
// TMA -> wgmma pipeline with a setmaxnreg register split.
//
//   C[M,N] = A[M,K] · B[N,K]^T   A row-major [M,K] bf16, B row-major [N,K] bf16 (both K-major),
//   C row-major [M,N] bf16, fp32 accumulation. N = 7168 and K = 5120 are fixed by the task;
//   M is free (benchmark: 8192). Any M >= 1 works: TMA zero-fills the rows past M in the last
//   M tile and the epilogue does not store them.
//
// Design
//   CTA tile        BM x BN x BK = 128 x 256 x 64 (one k-tile = 4 wgmma k16 steps).
//   Threads         384 = 3 warpgroups, __launch_bounds__(384, 1):
//                     warpgroup 0  producer. One elected lane of warp 0 issues every TMA load;
//                                  warps 1-3 only take part in setmaxnreg and then retire.
//                     warpgroups 1, 2  consumers. Consumer c computes rows 64c..64c+63 of the
//                                  CTA tile with wgmma.m64n256k16 (SS): 128 fp32 accumulators
//                                  per thread; it also runs the epilogue of its 64 x 256 slice.
//   Register split  setmaxnreg: producer dec to 40, consumers inc to 232
//                   (128*40 + 256*232 = 64,512 <= 65,536; PTX ISA "setmaxnreg", 9.7.19).
//                   Launch budget 65,536 / 384 -> 168 per thread.
//   Pipeline        4 stages x 48 KiB (A 16 KiB + B 32 KiB) = 192 KiB of dynamic shared memory
//                   + 1 KiB alignment slack + barriers. full[s]: 1 arrival (producer's
//                   arrive.expect_tx) + 48 KiB of TMA transactions; empty[s]: 2 arrivals (one
//                   elected thread per consumer warpgroup, after wgmma.wait_group shows the
//                   wgmmas that read stage s are done). Stage index and parity bits run on
//                   across tiles on both sides; each side flips its parity when it wraps.
//   Schedule        persistent: grid = min(#tiles, #SMs) CTAs (132 on H100/H200), CTA b takes
//                   tiles b, b + grid, ... of the 64 x 28 = 1792 tiles (M = 8192), mapped with a
//                   grouped raster (16 M-tiles per group) so concurrently running tiles share A
//                   and B panels in L2. The producer runs ahead into the next tile while the
//                   consumers are in their epilogue, so the next main loop starts with a full
//                   ring.
//   Epilogue        fp32 -> bf16x2 (cvt.rn) from the accumulator fragment, 4-byte global stores.
//
// Build: ptxbench compile rung2_warp_specialized.cu --task gemm_n7168_k5120
//        (nvcc -gencode arch=compute_90a,code=sm_90a -O3 -lineinfo, pack include dir on -I)
// Measured speed (H200, 2026-11-29, `ptxbench eval`, CUPTI median with L2 flushed, 3 seeds):
// 0.820-0.821 ms = 732-733 TFLOP/s, 0.914-0.918x cuBLASLt (0.750-0.753 ms); PASSED, dynamic_present.
// The fastest rung: the `replay` model's default GEMM answer (issue 9).
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
constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);
constexpr int kKTiles = kK / kBK;
constexpr int kTilesN = kN / kBN;
constexpr int kGroupM = 16;  // M tiles per raster group
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;

constexpr uint32_t kStageABytes = kBM * kBK * 2;  // 16 KiB
constexpr uint32_t kStageBBytes = kBN * kBK * 2;  // 32 KiB
constexpr uint32_t kStageBytes = kStageABytes + kStageBBytes;
constexpr uint32_t kWarpgroupABytes = 64 * kBK * 2;  // 8 KiB: rows 64c.. of the A stage
constexpr uint32_t kBarrierBytes = 2 * kStages * sizeof(uint64_t);
constexpr uint32_t kSmemBytes = kStages * kStageBytes + kBarrierBytes + 1024;  // + align slack

static_assert(kN % kBN == 0, "N must be a multiple of the CTA tile N");
static_assert(kK % kBK == 0, "K must be a multiple of the k-tile");
static_assert(kKTiles >= kStages, "producer tail: every CTA filled each stage at least once");
static_assert(kBK * 2 == 128, "k-tile rows = exactly the 128 B swizzle span (contract 3.1.2)");
static_assert(kBM % 64 == 0 && kBN % 8 == 0 && kBN <= 256, "wgmma m64nNk16: N in 8..256");
static_assert(kBM <= 256 && kBN <= 256, "TMA boxDim[i] <= 256");
static_assert(kStageABytes % 1024 == 0 && kStageBBytes % 1024 == 0 && kWarpgroupABytes % 1024 == 0,
              "operand tiles must stay 1024-byte aligned (128B swizzle atom, base offset 0)");
static_assert(kSmemBytes <= 227 * 1024, "dynamic shared memory per block is at most 227 KiB");
static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumerWarpgroups <= 65536,
              "setmaxnreg split must fit the 64K-register file");
static_assert(kProducerRegs % 8 == 0 && kConsumerRegs % 8 == 0, "setmaxnreg takes multiples of 8");

// Linear tile index -> (m0, n0) with the grouped raster; identical on producer and consumers.
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int& m0, int& n0) {
  constexpr int group_span = kGroupM * kTilesN;
  const int first_m = (tile / group_span) * kGroupM;
  const int rows_in_group = min(tiles_m - first_m, kGroupM);
  const int local = tile % group_span;
  m0 = (first_m + local % rows_in_group) * kBM;
  n0 = (local / rows_in_group) * kBN;
}

__global__ void __launch_bounds__(kThreads, 1)
    gemm_ws_kernel(const __grid_constant__ CUtensorMap tmap_a,
                   const __grid_constant__ CUtensorMap tmap_b, __nv_bfloat16* __restrict__ C,
                   int M) {
  extern __shared__ uint8_t smem_raw[];
  // 128B swizzle = XOR of address bits 4-6 with bits 7-9: the ring must start on 1024 B.
  uint8_t* smem = smem_raw + ((1024u - (ptxb::smem_u32(smem_raw) & 1023u)) & 1023u);
  uint8_t* smem_a = smem;                           // kStages x 16 KiB
  uint8_t* smem_b = smem + kStages * kStageABytes;  // kStages x 32 KiB
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * kStageBytes);
  uint64_t* empty = full + kStages;

  const int warpgroup = threadIdx.x / 128;
  const int wg_tid = threadIdx.x % 128;
  const int tiles_m = (M + kBM - 1) / kBM;
  const int num_tiles = tiles_m * kTilesN;

  if (threadIdx.x == 0) {
    ptxb::prefetch_tensormap(&tmap_a);
    ptxb::prefetch_tensormap(&tmap_b);
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_init(&full[s], 1);
      ptxb::mbar_init(&empty[s], kConsumerWarpgroups);
    }
    ptxb::fence_mbarrier_init();  // inits visible to the async proxy before TMA signals them
  }
  // The only CTA-wide barrier: after it the roles synchronise through mbarriers alone.
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------- producer ----------------
    // All 4 warps execute the dec (setmaxnreg is warpgroup-collective, .sync.aligned); it
    // returns registers to the pool that the consumers' inc draws from.
    ptxb::setmaxnreg_dec<kProducerRegs>();
    if (wg_tid / 32 == 0 && ptxb::elect_one_sync()) {
      int stage = 0;
      uint32_t phase = 0;
      for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
        int m0, n0;
        tile_origin(tile, tiles_m, m0, n0);
        for (int kt = 0; kt < kKTiles; ++kt) {
          // Wait until both consumers released this stage's previous contents. On the first
          // pass the barrier is fresh (phase 0 in progress) and parity 1 = "the phase before"
          // counts as complete, so the wait falls through
          // (PTX ISA 9.7.13.15, mbarrier.try_wait.parity).
          ptxb::mbar_wait(&empty[stage], phase ^ 1u);
          // Full box bytes even for a last M tile hanging off the tensor (zero fill counts).
          ptxb::mbar_arrive_expect_tx(&full[stage], kStageBytes);
          ptxb::tma_load(smem_a + stage * kStageABytes, &tmap_a, &full[stage], kt * kBK, m0);
          ptxb::tma_load(smem_b + stage * kStageBBytes, &tmap_b, &full[stage], kt * kBK, n0);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1u;
          }
        }
      }
      // Tail: wait until the consumers released every stage, i.e. every load this thread
      // issued has landed and been consumed, before the issuing thread exits. Each slot waits
      // for the release of its most recent fill (the same wait a next load would do); every
      // CTA issued >= kKTiles >= kStages loads, so each slot has such a fill.
      for (int i = 0; i < kStages; ++i) {
        ptxb::mbar_wait(&empty[stage], phase ^ 1u);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1u;
        }
      }
    }
    // Producer warps 1-3 (and the idle lanes of warp 0) retire here.
  } else {
    // ---------------- consumers ----------------
    ptxb::setmaxnreg_inc<kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const uint64_t desc_a0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(
        smem_a + consumer * kWarpgroupABytes);
    const uint64_t desc_b0 = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(smem_b);
    const int warp = wg_tid / 32, lane = wg_tid % 32;

    float acc[kBN / 2];
    int stage = 0;
    uint32_t phase = 0;
    for (int tile = blockIdx.x; tile < num_tiles; tile += gridDim.x) {
      int m0, n0;
      tile_origin(tile, tiles_m, m0, n0);
      int prev_stage = 0;
      for (int kt = 0; kt < kKTiles; ++kt) {
        ptxb::mbar_wait(&full[stage], phase);  // TMA bytes landed and are visible (contract 3.4)
        // Orders the epilogue's reads of acc (previous tile) before this batch's async writes
        // (PTX ISA 9.7.15.6 wgmma.fence).
        ptxb::wgmma_fence();
        const uint64_t desc_a = ptxb::wgmma_desc_advance(desc_a0, stage * kStageABytes);
        const uint64_t desc_b = ptxb::wgmma_desc_advance(desc_b0, stage * kStageBBytes);
#pragma unroll
        for (int kk = 0; kk < kBK / 16; ++kk) {
          // scale-d = 0 on the tile's first k16 step: D = A*B, so no zeroing between tiles.
          ptxb::wgmma_bf16_ss<kBN>(acc, ptxb::wgmma_desc_advance(desc_a, kk * 32),
                                   ptxb::wgmma_desc_advance(desc_b, kk * 32), kt > 0 || kk > 0);
        }
        ptxb::wgmma_commit_group();
        // <= 1 group pending: the group of k-tile kt-1 has finished reading its stage.
        ptxb::wgmma_wait_group<1>();
        if (kt > 0 && wg_tid == 0) ptxb::mbar_arrive(&empty[prev_stage]);
        prev_stage = stage;
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1u;
        }
      }
      ptxb::wgmma_wait_group<0>();
      // Release the tile's last stage before the epilogue so the producer refills it meanwhile.
      if (wg_tid == 0) ptxb::mbar_arrive(&empty[prev_stage]);
      ptxb::wgmma_fence_operand(acc);

      // Accumulator fragment (PTX ISA 9.7.15.5.1 "Register Fragments"; verified by
      // tests/gpu/hopper_wrappers_test.cu): register i of (warp w, lane l) holds
      // row 16w + l/4 + 8*((i/2)%2), col 8*(i/4) + 2*(l%4) + i%2.
      const int row_base = m0 + consumer * 64 + 16 * warp + lane / 4;
      const int col_base = n0 + 2 * (lane % 4);
#pragma unroll
      for (int i = 0; i < kBN / 2; i += 2) {
        const int row = row_base + 8 * ((i / 2) % 2);
        const int col = col_base + 8 * (i / 4);
        if (row < M) {
          *reinterpret_cast<__nv_bfloat162*>(C + static_cast<int64_t>(row) * kN + col) =
              __floats2bfloat162_rn(acc[i], acc[i + 1]);
        }
      }
    }
  }
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N,
         int64_t K, cudaStream_t stream) {
  if (N != kN || K != kK || M <= 0 || M > (int64_t{1} << 30)) {
    std::fprintf(stderr, "gemm_n7168_k5120 rung2: unsupported shape M=%lld N=%lld K=%lld\n",
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
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      sms <= 0) {
    sms = 132;
  }
  cudaFuncSetAttribute(gemm_ws_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  const int num_tiles = static_cast<int>((M + kBM - 1) / kBM) * kTilesN;
  const unsigned grid = static_cast<unsigned>(num_tiles < sms ? num_tiles : sms);
  gemm_ws_kernel<<<grid, kThreads, kSmemBytes, stream>>>(tmap_a, tmap_b, C, static_cast<int>(M));
}
