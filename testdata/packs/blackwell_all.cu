// Compile-coverage translation unit for the Blackwell knowledge pack: instantiates EVERY
// wrapper of packs/blackwell/include/ptxb/blackwell.cuh so tests/packs/wrappers_compile_test.cc
// can check the SASS nvcc emits for sm_100a. Not run (no Blackwell GPU here). Build line:
//   nvcc -std=c++17 -gencode arch=compute_100a,code=sm_100a -Xptxas -v \
//        -Ipacks/hopper/include -Ipacks/blackwell/include -c testdata/packs/blackwell_all.cu
#include <cuda.h>
#include <cuda_runtime.h>

#include "ptxb/blackwell.cuh"

namespace {

template <int kNum>
__device__ void tmem_roundtrip(uint32_t taddr, float* out) {
  uint32_t r[kNum];
  ptxb::tmem_ld_32x32b(r, taddr);
  ptxb::tmem_wait_ld();
  for (int i = 0; i < kNum; ++i) r[i] += 1;
  ptxb::tmem_st_32x32b(taddr, r);
  ptxb::tmem_wait_st();
  out[threadIdx.x] += static_cast<float>(r[0]);
}

// One CTA, 128 threads: warp 0 owns TMEM; thread 0 issues TMA + MMA; all warps read back.
__global__ void __launch_bounds__(128, 1) tcgen05_cta1(const __grid_constant__ CUtensorMap map,
                                                       float* out) {
  __shared__ __align__(1024) unsigned char a_tile[128 * 128];
  __shared__ __align__(1024) unsigned char b_tile[128 * 128];
  __shared__ uint64_t full_bar, mma_bar;
  __shared__ uint32_t tmem_base;
  const int warp = threadIdx.x / 32;
  if (warp == 0) {
    ptxb::tmem_alloc<1>(&tmem_base, 256);
    ptxb::tmem_relinquish_alloc_permit<1>();
  }
  if (threadIdx.x == 32) {
    ptxb::mbar_init(&full_bar, 1);
    ptxb::mbar_init(&mma_bar, 1);
    ptxb::fence_mbarrier_init();
  }
  ptxb::tcgen05_fence_before_thread_sync();
  __syncthreads();
  ptxb::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_base;
  if (threadIdx.x == 0) {
    ptxb::mbar_arrive_expect_tx(&full_bar, 2 * 128 * 128);
    ptxb::tma_load(a_tile, &map, &full_bar, 0, 0);
    ptxb::tma_load(b_tile, &map, &full_bar, 0, 128);
    ptxb::mbar_wait(&full_bar, 0);
    const uint32_t idesc = ptxb::make_idesc_bf16_f32(128, 128);
    const uint64_t da = ptxb::make_umma_desc_kmajor<ptxb::SmemSwizzle::k128B>(a_tile);
    const uint64_t db = ptxb::make_umma_desc_kmajor<ptxb::SmemSwizzle::k128B>(b_tile);
    for (int k = 0; k < 4; ++k) {
      ptxb::tcgen05_mma_bf16<1>(tmem, da + 2 * k, db + 2 * k, idesc, k > 0);
    }
    ptxb::tcgen05_mma_bf16_ts<1>(tmem, tmem + 128, db, idesc, true);
    ptxb::tcgen05_cp_128x256b<1>(tmem + 192, ptxb::make_umma_desc(ptxb::smem_u32(b_tile), 128,
                                                                   1024, ptxb::SmemSwizzle::kNone));
    ptxb::tcgen05_commit<1>(&mma_bar);
    ptxb::tcgen05_commit_multicast<1>(&mma_bar, 0x1);
  }
  ptxb::mbar_wait(&mma_bar, 0);
  ptxb::tcgen05_fence_after_thread_sync();
  const uint32_t lane_base = static_cast<uint32_t>(warp * 32) << 16;
  tmem_roundtrip<1>(tmem + lane_base, out);
  tmem_roundtrip<2>(tmem + lane_base, out);
  tmem_roundtrip<4>(tmem + lane_base, out);
  tmem_roundtrip<8>(tmem + lane_base, out);
  tmem_roundtrip<16>(tmem + lane_base, out);
  tmem_roundtrip<32>(tmem + lane_base, out);
  tmem_roundtrip<64>(tmem + lane_base, out);
  tmem_roundtrip<128>(tmem + lane_base, out);
  ptxb::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == 0) {
    ptxb::tcgen05_fence_after_thread_sync();
    ptxb::tmem_dealloc<1>(tmem, 256);
  }
}

// CTA pair: both CTAs load their half with .cta_group::2 onto the leader's barrier; the leader
// issues the 2-CTA MMA and multicasts the commit to both CTAs.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    tcgen05_cta2(const __grid_constant__ CUtensorMap map, float* out) {
  __shared__ __align__(1024) unsigned char a_tile[128 * 128];
  __shared__ __align__(1024) unsigned char b_tile[128 * 128];
  __shared__ uint64_t full_bar, mma_bar;
  __shared__ uint32_t tmem_base;
  const uint32_t rank = ptxb::cluster_ctarank();
  const int warp = threadIdx.x / 32;
  if (warp == 0) {
    ptxb::tmem_alloc<2>(&tmem_base, 128);
    ptxb::tmem_relinquish_alloc_permit<2>();
  }
  if (threadIdx.x == 32) {
    ptxb::mbar_init(&full_bar, 2);
    ptxb::mbar_init(&mma_bar, 1);
    ptxb::fence_mbarrier_init();
  }
  ptxb::tcgen05_fence_before_thread_sync();
  ptxb::cluster_sync();
  ptxb::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = tmem_base;
  if (threadIdx.x == 0) {
    const uint32_t leader_bar = ptxb::mapa_shared(ptxb::smem_u32(&full_bar), rank & ~1u);
    if (rank % 2 == 0) ptxb::mbar_arrive_expect_tx(&full_bar, 4 * 128 * 128);
    ptxb::tma_load_2sm(a_tile, &map, leader_bar, 0, 128 * rank);
    ptxb::tma_load_2sm(b_tile, &map, leader_bar, 0, 128 * rank, 0);
    ptxb::tma_load_2sm(b_tile, &map, leader_bar, 0);
    ptxb::tma_load_2sm(b_tile, &map, leader_bar, 0, 1, 2, 3);
    ptxb::tma_load_2sm(b_tile, &map, leader_bar, 0, 1, 2, 3, 4);
    if (rank % 2 == 0) {
      ptxb::mbar_wait(&full_bar, 0);
      const uint32_t idesc = ptxb::make_idesc_bf16_f32(256, 128);
      ptxb::tcgen05_mma_bf16<2>(tmem, ptxb::make_umma_desc_kmajor<ptxb::SmemSwizzle::k64B>(a_tile),
                                ptxb::make_umma_desc_kmajor<ptxb::SmemSwizzle::k32B>(b_tile),
                                idesc, false);
      ptxb::tcgen05_mma_bf16_ts<2>(tmem, tmem + 64,
                                   ptxb::make_umma_desc_kmajor<ptxb::SmemSwizzle::k128B>(b_tile),
                                   idesc, true);
      ptxb::tcgen05_cp_128x256b<2>(tmem + 96, ptxb::make_umma_desc(ptxb::smem_u32(b_tile), 128,
                                                                    1024,
                                                                    ptxb::SmemSwizzle::kNone));
      ptxb::tcgen05_commit<2>(&mma_bar);
      ptxb::tcgen05_commit_multicast<2>(&mma_bar, 0x3);
    }
  }
  ptxb::mbar_wait_cluster(&mma_bar, 0);
  ptxb::tcgen05_fence_after_thread_sync();
  uint32_t r[16];
  ptxb::tmem_ld_32x32b(r, tmem + (static_cast<uint32_t>(warp * 32) << 16));
  ptxb::tmem_wait_ld();
  out[rank * 128 + threadIdx.x] = __uint_as_float(r[0] + r[15]);
  ptxb::tcgen05_fence_before_thread_sync();
  ptxb::cluster_sync();
  if (warp == 0) {
    ptxb::tcgen05_fence_after_thread_sync();
    ptxb::tmem_dealloc<2>(tmem, 128);
  }
}

// Shared wrappers on sm_100a: setmaxnreg roles (no C7508), ldmatrix/stmatrix, math, elect.
__global__ void __launch_bounds__(256, 1) shared_wrappers(float* out) {
  __shared__ __align__(128) uint16_t tile[32 * 64];
  if (threadIdx.x / 128 == 0) {
    ptxb::setmaxnreg_dec<56>();
    uint32_t r[4];
    ptxb::ldmatrix_x4(r, tile + (threadIdx.x % 32) * 64);
    ptxb::stmatrix_x4<true>(tile + (threadIdx.x % 32) * 64, r);
    out[threadIdx.x] = ptxb::exp2_approx(out[threadIdx.x]) + static_cast<float>(r[0]);
  } else {
    ptxb::setmaxnreg_inc<200>();
    if (ptxb::elect_one_sync()) out[threadIdx.x] = static_cast<float>(ptxb::pack_bf16x2(1.f, 2.f));
  }
}

}  // namespace

int blackwell_all_host(float* out, void* global) {
  CUtensorMap map;
  if (ptxb::make_tensor_map_2d_bf16(&map, global, 512, 64, 64, 128, 64,
                                    ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
    return 1;
  }
  tcgen05_cta1<<<1, 128>>>(map, out);
  tcgen05_cta2<<<2, 128>>>(map, out);
  shared_wrappers<<<1, 256>>>(out);
  return 0;
}
