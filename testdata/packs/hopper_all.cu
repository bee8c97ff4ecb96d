// Compile-coverage translation unit for the Hopper knowledge pack: instantiates EVERY wrapper
// of packs/hopper/include/ptxb/hopper.cuh (every wgmma N in SS and RS form, every TMA rank) so
// that tests/packs/wrappers_compile_test.cc can check the SASS nvcc emits for sm_90a.
// Not run: kernels here only need to compile. Build line (what the test runs):
//   nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xptxas -v \
//        -Ipacks/hopper/include -c testdata/packs/hopper_all.cu -o hopper_all.o
#include <cuda.h>
#include <cuda_runtime.h>

#include <utility>

#include "ptxb/hopper.cuh"

namespace {

// One kernel per N so every m64nNk16 shape appears in the SASS (HGMMA.64xNx16.F32.BF16).
template <int N>
__global__ void __launch_bounds__(128, 1) wgmma_every_n(float* out, const uint32_t* a_regs) {
  __shared__ __align__(1024) unsigned char tile[2][32768];
  float acc[N / 2];
  const uint64_t desc_a = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k128B>(tile[0]);
  const uint64_t desc_b = ptxb::make_wgmma_desc_kmajor_interleave(tile[1], 128, 1024);
  uint32_t a[4];
  for (int i = 0; i < 4; ++i) a[i] = a_regs[threadIdx.x * 4 + i];
  ptxb::wgmma_fence();
  ptxb::wgmma_bf16_ss<N>(acc, desc_a, desc_b, false);
  ptxb::wgmma_bf16_rs<N>(acc, a, ptxb::wgmma_desc_advance(desc_b, 256), true);
  ptxb::wgmma_commit_group();
  ptxb::wgmma_wait_group<0>();
  ptxb::wgmma_fence_operand(acc);
  for (int i = 0; i < N / 2; ++i) out[i * 128 + threadIdx.x] = acc[i];
}

template <int... Is>
constexpr auto every_n_kernels(std::integer_sequence<int, Is...>) {
  return sizeof...(Is);
}
template <int... Is>
void launch_every_n(std::integer_sequence<int, Is...>, float* out, const uint32_t* a) {
  (wgmma_every_n<(Is + 1) * 8><<<1, 128>>>(out, a), ...);
}

// The transpose / negate controls (MN-major operands, imm-scale = -1).
__global__ void __launch_bounds__(128, 1) wgmma_controls(float* out, const uint32_t* a_regs) {
  __shared__ __align__(1024) unsigned char tile[2][16384];
  float acc[32];
  uint32_t a[4] = {a_regs[0], a_regs[1], a_regs[2], a_regs[3]};
  const uint64_t da = ptxb::make_wgmma_desc(ptxb::smem_u32(tile[0]), 8192, 1024,
                                            ptxb::SmemSwizzle::k64B);
  const uint64_t db = ptxb::make_wgmma_desc_kmajor<ptxb::SmemSwizzle::k32B>(tile[1]);
  ptxb::wgmma_fence_operand(a);
  ptxb::wgmma_fence();
  ptxb::wgmma_bf16_ss<64, -1, 1, 1, 1>(acc, da, db, false);
  ptxb::wgmma_bf16_ss<64, 1, -1, 0, 1>(acc, da, db, true);
  ptxb::wgmma_bf16_rs<64, -1, -1, 1>(acc, a, db, true);
  ptxb::wgmma_commit_group();
  ptxb::wgmma_wait_group<1>();
  ptxb::wgmma_wait_group<0>();
  ptxb::wgmma_fence_operand(acc);
  for (int i = 0; i < 32; ++i) out[i * 128 + threadIdx.x] = acc[i];
}

// Every TMA rank for load, multicast load, store, reduce-add and prefetch; bulk copies; groups.
__global__ void __launch_bounds__(128, 1) tma_everything(const __grid_constant__ CUtensorMap map,
                                                         const float4* src, int x) {
  __shared__ __align__(1024) unsigned char tile[8192];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    ptxb::prefetch_tensormap(&map);
    ptxb::mbar_init(&bar, 1);
    ptxb::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxb::mbar_arrive_expect_tx(&bar, 11 * 4096 + 1024);
    ptxb::tma_load(tile, &map, &bar, x);
    ptxb::tma_load(tile, &map, &bar, x, 1);
    ptxb::tma_load(tile, &map, &bar, x, 1, 2);
    ptxb::tma_load(tile, &map, &bar, x, 1, 2, 3);
    ptxb::tma_load(tile, &map, &bar, x, 1, 2, 3, 4);
    ptxb::tma_load_multicast(tile, &map, &bar, 0x3, x);
    ptxb::tma_load_multicast(tile, &map, &bar, 0x3, x, 1);
    ptxb::tma_load_multicast(tile, &map, &bar, 0x3, x, 1, 2);
    ptxb::tma_load_multicast(tile, &map, &bar, 0x3, x, 1, 2, 3);
    ptxb::tma_load_multicast(tile, &map, &bar, 0x3, x, 1, 2, 3, 4);
    ptxb::bulk_copy_g2s(tile, src, 1024, &bar);
    ptxb::tma_prefetch(&map, x);
    ptxb::tma_prefetch(&map, x, 1);
    ptxb::tma_prefetch(&map, x, 1, 2);
    ptxb::tma_prefetch(&map, x, 1, 2, 3);
    ptxb::tma_prefetch(&map, x, 1, 2, 3, 4);
  }
  ptxb::mbar_wait(&bar, 0);
  ptxb::fence_proxy_async_smem();
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxb::tma_store(&map, tile, x);
    ptxb::tma_store(&map, tile, x, 1);
    ptxb::tma_store(&map, tile, x, 1, 2);
    ptxb::tma_store(&map, tile, x, 1, 2, 3);
    ptxb::tma_store(&map, tile, x, 1, 2, 3, 4);
    ptxb::bulk_commit_group();
    ptxb::tma_reduce_add(&map, tile, x);
    ptxb::tma_reduce_add(&map, tile, x, 1);
    ptxb::tma_reduce_add(&map, tile, x, 1, 2);
    ptxb::tma_reduce_add(&map, tile, x, 1, 2, 3);
    ptxb::tma_reduce_add(&map, tile, x, 1, 2, 3, 4);
    ptxb::bulk_commit_group();
    ptxb::bulk_wait_group_read<1>();
    ptxb::bulk_wait_group<0>();
  }
}

// mbarrier, cluster, named barriers, elect, ldmatrix/stmatrix, math.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    sync_everything(float* out, uint32_t parity) {
  __shared__ __align__(128) uint16_t tile[32 * 64];
  __shared__ uint64_t bars[2];
  const uint32_t rank = ptxb::cluster_ctarank();
  if (threadIdx.x == 0) {
    ptxb::mbar_init(&bars[0], 1);
    ptxb::mbar_init(&bars[1], 2);
    ptxb::fence_mbarrier_init();
  }
  ptxb::cluster_sync();
  if (threadIdx.x == 0) {
    ptxb::mbar_expect_tx(&bars[0], 0);
    ptxb::mbar_arrive(&bars[0]);
    ptxb::mbar_arrive_remote(&bars[1], rank ^ 1);
    ptxb::mbar_arrive_remote(&bars[1], rank);
  }
  if (ptxb::mbar_try_wait(&bars[0], parity)) out[1] = 1.f;
  ptxb::mbar_wait(&bars[0], parity);
  ptxb::mbar_wait_cluster(&bars[1], parity);
  if (ptxb::mbar_try_wait_cluster(&bars[1], parity)) out[2] = 1.f;
  const dim3 dims = ptxb::cluster_dims(), id = ptxb::cluster_ctaid();
  out[3] = dims.x + dims.y + dims.z + id.x + id.y + id.z + ptxb::cluster_nctarank() +
           ptxb::mapa_shared(ptxb::smem_u32(tile), rank ^ 1);
  if (ptxb::elect_one_sync()) out[4 + threadIdx.x / 32] = 1.f;
  ptxb::named_barrier_arrive(1, 64);
  ptxb::named_barrier_sync(1, 64);
  uint16_t* row = tile + (threadIdx.x % 32) * 64;
  uint32_t r1[1], r2[2], r4[4], t1[1], t2[2], t4[4];  // all used: ptxas drops dead loads
  ptxb::ldmatrix_x1(r1, row);
  ptxb::ldmatrix_x2(r2, row);
  ptxb::ldmatrix_x4(r4, row);
  ptxb::ldmatrix_x1<true>(t1, row);
  ptxb::ldmatrix_x2<true>(t2, row);
  ptxb::ldmatrix_x4<true>(t4, row);
  __syncwarp();
  ptxb::stmatrix_x1(row, r1);
  ptxb::stmatrix_x2(row + 8, r2);
  ptxb::stmatrix_x4(row + 16, r4);
  ptxb::stmatrix_x1<true>(row + 24, t1);
  ptxb::stmatrix_x2<true>(row + 32, t2);
  ptxb::stmatrix_x4<true>(row + 40, t4);
  out[8 + threadIdx.x] = ptxb::exp2_approx(out[threadIdx.x]) +
                         static_cast<float>(ptxb::pack_bf16x2(out[1], out[2]));
  ptxb::cluster_arrive_relaxed();
  ptxb::cluster_wait_acquire();
}

// setmaxnreg with warpgroup roles split by one if/else under __launch_bounds__(384, 1): ptxas
// must apply it (no C7508 warning) and emit USETMAXREG with both counts.
__global__ void __launch_bounds__(384, 1) setmaxnreg_roles(float* out) {
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    ptxb::setmaxnreg_dec<40>();
    out[threadIdx.x] = 1.f;
  } else {
    ptxb::setmaxnreg_inc<232>();
    out[threadIdx.x] = 2.f;
  }
}

}  // namespace

// Host code: the tensor-map helper and launches (compiled, never run by the test).
int hopper_all_host(float* out, uint32_t* a, void* global, int x) {
  CUtensorMap map;
  const uint64_t dims[5] = {64, 64, 4, 4, 4};
  const uint64_t strides[4] = {128, 128 * 64, 128 * 64 * 4, 128 * 64 * 16};
  const uint32_t box[5] = {64, 8, 2, 2, 2};
  if (ptxb::make_tensor_map(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 5, global, dims, strides,
                            box, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
    return 1;
  }
  CUtensorMap map2d;
  if (ptxb::make_tensor_map_2d_bf16(&map2d, global, 64, 64, 64, 32, 32,
                                    ptxb::SmemSwizzle::k64B) != CUDA_SUCCESS) {
    return 1;
  }
  launch_every_n(std::make_integer_sequence<int, 32>{}, out, a);
  static_assert(every_n_kernels(std::make_integer_sequence<int, 32>{}) == 32);
  wgmma_controls<<<1, 128>>>(out, a);
  tma_everything<<<1, 128>>>(map, static_cast<const float4*>(global), x);
  sync_everything<<<2, 128>>>(out, 0);
  setmaxnreg_roles<<<1, 384>>>(out);
  return 0;
}
