// GPU tests of the Hopper knowledge-pack wrappers (packs/hopper/include/ptxb/hopper/*.cuh) on an
// H100/H200 (sm_90a). Every check is exact: inputs are small integers, representable in bf16,
// whose fp32 sums are exact, and layouts are compared byte for byte against host models derived
// from the PTX ISA (not from the headers under test).
//   wgmma: SS and RS, N in {8, 64, 128, 256} x swizzle {none, 32B, 64B, 128B}, + negate-A.
//   TMA: 2-D and 3-D load (raw shared bytes vs. the swizzle model), store and reduce-add, per
//        swizzle mode; multicast load across a 2-CTA cluster with remote mbarrier arrivals;
//        3-stage mbarrier producer/consumer pipeline (count + checksum per tile).
//   setmaxnreg + named barriers; ldmatrix/stmatrix (x1/x2/x4, .trans), ex2, bf16x2, elect.sync.
// mbarrier waits are bounded (PTXB_MBAR_SPIN_LIMIT) so a hang becomes a trap + test failure.
// Run: ptxbench_gpu_tests --gtest_filter='HopperWrappers*'   (whole file: a few seconds)
#define PTXB_MBAR_SPIN_LIMIT (1u << 22)  // legit waits here take microseconds

#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ptxb/hopper.cuh"

namespace {

using ptxb::SmemSwizzle;

#define PTXB_CUDA_CHECK(call)                                                               \
  do {                                                                                      \
    const cudaError_t ptxb_err_ = (call);                                                   \
    ASSERT_EQ(ptxb_err_, cudaSuccess)                                                       \
        << __FILE__ << ":" << __LINE__ << ": " #call ": " << cudaGetErrorString(ptxb_err_); \
  } while (0)

#define PTXB_CU_CHECK(call)                                                                     \
  do {                                                                                          \
    const CUresult ptxb_res_ = (call);                                                          \
    ASSERT_EQ(ptxb_res_, CUDA_SUCCESS)                                                          \
        << __FILE__ << ":" << __LINE__ << ": " #call ": " << ptxb::cu_result_string(ptxb_res_); \
  } while (0)

// Skips (visibly) without an sm_90 GPU.
#define PTXB_REQUIRE_HOPPER()                                                        \
  do {                                                                               \
    int count_ = 0;                                                                  \
    if (cudaGetDeviceCount(&count_) != cudaSuccess || count_ == 0) {                 \
      GTEST_SKIP() << "no CUDA device";                                              \
    }                                                                                \
    cudaDeviceProp prop_{};                                                          \
    PTXB_CUDA_CHECK(cudaGetDeviceProperties(&prop_, 0));                             \
    if (prop_.major != 9)                                                            \
      GTEST_SKIP() << "needs sm_90 (Hopper), got sm_" << prop_.major << prop_.minor; \
  } while (0)

// bf16 bit pattern of a small integer (exact: the top 16 bits of the float).
uint16_t bf16_bits(int value) {
  const float f = static_cast<float>(value);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);
}
int bf16_to_int(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &wide, 4);
  return static_cast<int>(f);
}

// Deterministic small integers in [-range, range].
struct Lcg {
  uint32_t state;
  int next(int range) {
    state = state * 1664525u + 1013904223u;
    return static_cast<int>((state >> 8) % (2 * range + 1)) - range;
  }
};

// Host model of the shared-memory swizzle (PTX ISA 9.7.15.5.1.2.1.3 "Canonical Layouts":
// Swizzle<B,4,3> = address bits [4, 4+B) XOR bits [7, 7+B), B = log2(span / 16); the same
// pattern TMA writes, CUDA driver API "CUtensorMapSwizzle"). `offset` is relative to a buffer
// aligned to the pattern repeat, so offset bits equal address bits.
uint32_t model_swizzle(SmemSwizzle swizzle, uint32_t offset) {
  switch (swizzle) {
    case SmemSwizzle::k32B:
      return offset ^ (((offset >> 7) & 1u) << 4);
    case SmemSwizzle::k64B:
      return offset ^ (((offset >> 7) & 3u) << 4);
    case SmemSwizzle::k128B:
      return offset ^ (((offset >> 7) & 7u) << 4);
    default:
      return offset;
  }
}
const char* swizzle_name(SmemSwizzle swizzle) {
  switch (swizzle) {
    case SmemSwizzle::k32B:
      return "32B";
    case SmemSwizzle::k64B:
      return "64B";
    case SmemSwizzle::k128B:
      return "128B";
    default:
      return "none";
  }
}

template <class T>
struct DeviceBuffer {
  T* ptr = nullptr;
  explicit DeviceBuffer(size_t count) {
    if (cudaMalloc(&ptr, count * sizeof(T)) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceBuffer() { cudaFree(ptr); }
};

// ============================== wgmma ==============================

// K extent of one operand tile: one swizzle span of bf16 (rows of exactly `span` bytes), or
// 64 for the interleaved layout; 1 to 4 wgmma K steps of 16.
__host__ __device__ constexpr int tile_k(SmemSwizzle swizzle) {
  return swizzle == SmemSwizzle::kNone ? 64 : static_cast<int>(swizzle) / 2;
}

// Byte offset of K-major element (row, k) in a tile of K extent `kt` (PTX ISA canonical K-major
// layouts): interleave = 8x16-byte core matrices of 128 contiguous bytes, K-adjacent core
// matrices 128 B apart (LBO), 8-row groups kt/8*128 B apart (SBO); swizzled = rows of `span`
// bytes, 8-row atoms packed (SBO = 8*span), XOR pattern on top.
uint32_t kmajor_offset(SmemSwizzle swizzle, int kt, int row, int k) {
  if (swizzle == SmemSwizzle::kNone) {
    return (row / 8) * (kt / 8) * 128 + (k / 8) * 128 + (row % 8) * 16 + (k % 8) * 2;
  }
  return model_swizzle(swizzle, row * static_cast<uint32_t>(swizzle) + k * 2);
}

template <int N, SmemSwizzle kSwizzle, bool kRs, int kScaleA>
__global__ void __launch_bounds__(128, 1) wgmma_kernel(const uint4* a_image, const uint4* b_image,
                                                       const uint16_t* a_rowmajor, float* d_out) {
  constexpr int kKt = tile_k(kSwizzle);
  constexpr int kABytes = 64 * kKt * 2;
  constexpr int kBBytes = N * kKt * 2;
  constexpr int kBOffset = (kABytes + 1023) / 1024 * 1024;
  extern __shared__ uint8_t dynamic_smem[];
  // 1024-byte alignment so the swizzle pattern starts at offset 0 (descriptor base offset 0).
  uint8_t* smem = dynamic_smem + ((1024 - (ptxb::smem_u32(dynamic_smem) & 1023)) & 1023);
  uint4* sa = reinterpret_cast<uint4*>(smem);
  uint4* sb = reinterpret_cast<uint4*>(smem + kBOffset);
  for (int i = threadIdx.x; i < kABytes / 16; i += 128) sa[i] = a_image[i];
  for (int i = threadIdx.x; i < kBBytes / 16; i += 128) sb[i] = b_image[i];
  ptxb::fence_proxy_async_smem();  // generic-proxy writes -> async-proxy (wgmma) reads
  __syncthreads();

  uint64_t desc_a, desc_b;
  uint32_t k_step_bytes;
  if constexpr (kSwizzle == SmemSwizzle::kNone) {
    desc_a = ptxb::make_wgmma_desc_kmajor_interleave(sa, 128, kKt / 8 * 128);
    desc_b = ptxb::make_wgmma_desc_kmajor_interleave(sb, 128, kKt / 8 * 128);
    k_step_bytes = 256;  // two core matrices along K
  } else {
    desc_a = ptxb::make_wgmma_desc_kmajor<kSwizzle>(sa);
    desc_b = ptxb::make_wgmma_desc_kmajor<kSwizzle>(sb);
    k_step_bytes = 32;  // 16 bf16 inside the swizzled row
  }
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = -12345.f;  // must be ignored by accumulate=false
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if constexpr (!kRs) {
    ptxb::wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kKt / 16; ++ks) {
      ptxb::wgmma_bf16_ss<N, kScaleA>(acc, ptxb::wgmma_desc_advance(desc_a, ks * k_step_bytes),
                                      ptxb::wgmma_desc_advance(desc_b, ks * k_step_bytes), ks > 0);
    }
    ptxb::wgmma_commit_group();
    ptxb::wgmma_wait_group<0>();
  } else {
#pragma unroll
    for (int ks = 0; ks < kKt / 16; ++ks) {
      // A fragment (PTX ISA "WGMMA .m64nNk16 register fragment layout for matrix A").
      const int r0 = 16 * warp + lane / 4, c0 = 16 * ks + 2 * (lane % 4);
      const auto pair = [&](int r, int c) {
        return static_cast<uint32_t>(a_rowmajor[r * kKt + c]) |
               (static_cast<uint32_t>(a_rowmajor[r * kKt + c + 1]) << 16);
      };
      uint32_t a[4] = {pair(r0, c0), pair(r0 + 8, c0), pair(r0, c0 + 8), pair(r0 + 8, c0 + 8)};
      ptxb::wgmma_fence_operand(a);
      ptxb::wgmma_fence();
      ptxb::wgmma_bf16_rs<N, kScaleA>(acc, a, ptxb::wgmma_desc_advance(desc_b, ks * k_step_bytes),
                                      ks > 0);
      ptxb::wgmma_commit_group();
      ptxb::wgmma_wait_group<0>();  // a[] must live until the wgmma has read it
      ptxb::wgmma_fence_operand(a);
    }
  }
  ptxb::wgmma_fence_operand(acc);
  // Accumulator fragment (PTX ISA "WGMMA .m64nNk16 register fragment layout for accumulator D").
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
    const int col = 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
    d_out[row * N + col] = acc[i];
  }
}

template <int N, SmemSwizzle kSwizzle, bool kRs, int kScaleA = 1>
void run_wgmma_case() {
  constexpr int kKt = tile_k(kSwizzle);
  const std::string name = std::string(kRs ? "RS" : "SS") + " N=" + std::to_string(N) +
                           " swizzle=" + swizzle_name(kSwizzle) +
                           (kScaleA < 0 ? " scale-a=-1" : "");
  SCOPED_TRACE(name);
  Lcg lcg{static_cast<uint32_t>(N * 131 + static_cast<int>(kSwizzle) + (kRs ? 7 : 0))};
  std::vector<int> a(64 * kKt), b(N * kKt);
  for (int& v : a) v = lcg.next(2);
  for (int& v : b) v = lcg.next(2);
  std::vector<uint16_t> a_rowmajor(64 * kKt);
  std::vector<uint8_t> a_image(64 * kKt * 2), b_image(N * kKt * 2);
  for (int r = 0; r < 64; ++r) {
    for (int k = 0; k < kKt; ++k) {
      const uint16_t bits = bf16_bits(a[r * kKt + k]);
      a_rowmajor[r * kKt + k] = bits;
      std::memcpy(&a_image[kmajor_offset(kSwizzle, kKt, r, k)], &bits, 2);
    }
  }
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < kKt; ++k) {
      const uint16_t bits = bf16_bits(b[n * kKt + k]);
      std::memcpy(&b_image[kmajor_offset(kSwizzle, kKt, n, k)], &bits, 2);
    }
  }
  DeviceBuffer<uint8_t> d_a(a_image.size()), d_b(b_image.size());
  DeviceBuffer<uint16_t> d_arow(a_rowmajor.size());
  DeviceBuffer<float> d_out(64 * N);
  ASSERT_TRUE(d_a.ptr && d_b.ptr && d_arow.ptr && d_out.ptr) << "cudaMalloc failed";
  PTXB_CUDA_CHECK(cudaMemcpy(d_a.ptr, a_image.data(), a_image.size(), cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemcpy(d_b.ptr, b_image.data(), b_image.size(), cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(
      cudaMemcpy(d_arow.ptr, a_rowmajor.data(), a_rowmajor.size() * 2, cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemset(d_out.ptr, 0xFF, 64 * N * sizeof(float)));
  const int smem_bytes = (64 * kKt * 2 + 1023) / 1024 * 1024 + N * kKt * 2 + 1024;
  auto kernel = wgmma_kernel<N, kSwizzle, kRs, kScaleA>;
  PTXB_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  kernel<<<1, 128, smem_bytes>>>(reinterpret_cast<const uint4*>(d_a.ptr),
                                 reinterpret_cast<const uint4*>(d_b.ptr), d_arow.ptr, d_out.ptr);
  PTXB_CUDA_CHECK(cudaGetLastError());
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(64 * N);
  PTXB_CUDA_CHECK(cudaMemcpy(got.data(), d_out.ptr, got.size() * 4, cudaMemcpyDeviceToHost));
  int mismatches = 0;
  for (int m = 0; m < 64; ++m) {
    for (int n = 0; n < N; ++n) {
      int want = 0;
      for (int k = 0; k < kKt; ++k) want += a[m * kKt + k] * b[n * kKt + k];
      want *= kScaleA;
      if (got[m * N + n] != static_cast<float>(want) && ++mismatches <= 5) {
        ADD_FAILURE() << name << ": D[" << m << "][" << n << "] = " << got[m * N + n]
                      << ", expected " << want;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << name << ": " << mismatches << " of " << 64 * N << " elements differ";
}

template <bool kRs, int N>
void run_wgmma_all_swizzles() {
  run_wgmma_case<N, SmemSwizzle::kNone, kRs>();
  run_wgmma_case<N, SmemSwizzle::k32B, kRs>();
  run_wgmma_case<N, SmemSwizzle::k64B, kRs>();
  run_wgmma_case<N, SmemSwizzle::k128B, kRs>();
}

TEST(HopperWrappersWgmma, SsEveryShapeAndSwizzle) {
  PTXB_REQUIRE_HOPPER();
  run_wgmma_all_swizzles<false, 8>();
  run_wgmma_all_swizzles<false, 64>();
  run_wgmma_all_swizzles<false, 128>();
  run_wgmma_all_swizzles<false, 256>();
}

TEST(HopperWrappersWgmma, RsEveryShapeAndSwizzle) {
  PTXB_REQUIRE_HOPPER();
  run_wgmma_all_swizzles<true, 8>();
  run_wgmma_all_swizzles<true, 64>();
  run_wgmma_all_swizzles<true, 128>();
  run_wgmma_all_swizzles<true, 256>();
}

TEST(HopperWrappersWgmma, NegateA) {
  PTXB_REQUIRE_HOPPER();
  run_wgmma_case<64, SmemSwizzle::k128B, false, -1>();
  run_wgmma_case<64, SmemSwizzle::k64B, true, -1>();
}

// ============================== TMA load / store / reduce ==============================

// Global tensor [kDepth][kRows][kCols] bf16, row-major.
constexpr int kCols = 128, kRows = 64, kDepth = 4;

struct TmaBox {
  int dims;          // 2 or 3
  uint32_t box[3];   // elements, innermost first
  int32_t coord[3];  // box origin, innermost first
  __host__ __device__ uint32_t bytes() const {
    return box[0] * box[1] * (dims == 3 ? box[2] : 1) * 2;
  }
};

__global__ void __launch_bounds__(128, 1)
    tma_roundtrip_kernel(const __grid_constant__ CUtensorMap in_map,
                         const __grid_constant__ CUtensorMap out_map,
                         const __grid_constant__ CUtensorMap red_map, TmaBox box,
                         uint4* smem_dump) {
  __shared__ __align__(1024) uint8_t tile[16384];
  __shared__ uint64_t bar;
  if (threadIdx.x == 0) {
    ptxb::prefetch_tensormap(&in_map);
    ptxb::mbar_init(&bar, 1);
    ptxb::fence_mbarrier_init();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    ptxb::mbar_arrive_expect_tx(&bar, box.bytes());
    if (box.dims == 2) {
      ptxb::tma_prefetch(&in_map, box.coord[0], box.coord[1]);
      ptxb::tma_load(tile, &in_map, &bar, box.coord[0], box.coord[1]);
    } else {
      ptxb::tma_prefetch(&in_map, box.coord[0], box.coord[1], box.coord[2]);
      ptxb::tma_load(tile, &in_map, &bar, box.coord[0], box.coord[1], box.coord[2]);
    }
  }
  ptxb::mbar_wait(&bar, 0);
  for (uint32_t i = threadIdx.x; i < box.bytes() / 16; i += 128) {
    smem_dump[i] = reinterpret_cast<const uint4*>(tile)[i];
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    if (box.dims == 2) {
      ptxb::tma_store(&out_map, tile, box.coord[0], box.coord[1]);
      ptxb::bulk_commit_group();
      ptxb::tma_reduce_add(&red_map, tile, box.coord[0], box.coord[1]);
    } else {
      ptxb::tma_store(&out_map, tile, box.coord[0], box.coord[1], box.coord[2]);
      ptxb::bulk_commit_group();
      ptxb::tma_reduce_add(&red_map, tile, box.coord[0], box.coord[1], box.coord[2]);
    }
    ptxb::bulk_commit_group();
    ptxb::bulk_wait_group_read<0>();  // shared source consumed: the CTA may exit
    ptxb::bulk_wait_group<0>();       // global writes performed
  }
}

void run_tma_case(int dims, SmemSwizzle swizzle) {
  const std::string name = std::to_string(dims) + "-D swizzle=" + swizzle_name(swizzle);
  SCOPED_TRACE(name);
  const uint32_t inner = swizzle == SmemSwizzle::kNone ? 64 : static_cast<uint32_t>(swizzle) / 2;
  TmaBox box{};
  box.dims = dims;
  box.box[0] = inner;
  box.box[1] = dims == 2 ? 32 : 16;
  box.box[2] = 2;
  box.coord[0] = static_cast<int32_t>(inner);  // second column block
  box.coord[1] = dims == 2 ? 16 : 8;
  box.coord[2] = 1;
  const size_t elems = static_cast<size_t>(kDepth) * kRows * kCols;
  std::vector<uint16_t> input(elems), out_init(elems, bf16_bits(-7)), red_init(elems, bf16_bits(1));
  Lcg lcg{static_cast<uint32_t>(dims * 97 + static_cast<int>(swizzle))};
  for (auto& v : input) v = bf16_bits(lcg.next(8));
  DeviceBuffer<uint16_t> d_in(elems), d_out(elems), d_red(elems);
  DeviceBuffer<uint4> d_dump(16384 / 16);
  ASSERT_TRUE(d_in.ptr && d_out.ptr && d_red.ptr && d_dump.ptr) << "cudaMalloc failed";
  PTXB_CUDA_CHECK(cudaMemcpy(d_in.ptr, input.data(), elems * 2, cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemcpy(d_out.ptr, out_init.data(), elems * 2, cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemcpy(d_red.ptr, red_init.data(), elems * 2, cudaMemcpyHostToDevice));
  CUtensorMap maps[3];
  uint16_t* bases[3] = {d_in.ptr, d_out.ptr, d_red.ptr};
  for (int i = 0; i < 3; ++i) {
    if (dims == 2) {  // the first 2-D slice [kRows][kCols]
      PTXB_CU_CHECK(ptxb::make_tensor_map_2d_bf16(&maps[i], bases[i], kRows, kCols, kCols,
                                                  box.box[1], box.box[0], swizzle));
    } else {
      const uint64_t gdims[3] = {kCols, kRows, kDepth};
      const uint64_t strides[2] = {kCols * 2, kCols * kRows * 2};
      PTXB_CU_CHECK(ptxb::make_tensor_map(&maps[i], CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 3,
                                          bases[i], gdims, strides, box.box, swizzle));
    }
  }
  tma_roundtrip_kernel<<<1, 128>>>(maps[0], maps[1], maps[2], box, d_dump.ptr);
  PTXB_CUDA_CHECK(cudaGetLastError());
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> dump(box.bytes());
  std::vector<uint16_t> out(elems), red(elems);
  PTXB_CUDA_CHECK(cudaMemcpy(dump.data(), d_dump.ptr, dump.size(), cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(cudaMemcpy(out.data(), d_out.ptr, elems * 2, cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(cudaMemcpy(red.data(), d_red.ptr, elems * 2, cudaMemcpyDeviceToHost));

  const auto index = [](int z, int y, int x) {
    return (static_cast<size_t>(z) * kRows + y) * kCols + x;
  };
  int bad_smem = 0, bad_out = 0, bad_red = 0;
  const int depth = dims == 3 ? static_cast<int>(box.box[2]) : 1;
  const int z0 = dims == 3 ? box.coord[2] : 0;
  for (int z = 0; z < depth; ++z) {
    for (int y = 0; y < static_cast<int>(box.box[1]); ++y) {
      for (int x = 0; x < static_cast<int>(box.box[0]); ++x) {
        const uint32_t linear = ((z * box.box[1] + y) * box.box[0] + x) * 2;
        uint16_t got;
        std::memcpy(&got, &dump[model_swizzle(swizzle, linear)], 2);
        const uint16_t want = input[index(z0 + z, box.coord[1] + y, box.coord[0] + x)];
        if (got != want && ++bad_smem <= 5) {
          ADD_FAILURE() << name << ": shared tile (z " << z << ", y " << y << ", x " << x
                        << ") = " << bf16_to_int(got) << ", expected " << bf16_to_int(want);
        }
      }
    }
  }
  for (int z = 0; z < kDepth; ++z) {
    for (int y = 0; y < kRows; ++y) {
      for (int x = 0; x < kCols; ++x) {
        const bool inside = (dims == 3 ? (z >= z0 && z < z0 + depth) : z == 0) &&
                            y >= box.coord[1] && y < box.coord[1] + static_cast<int>(box.box[1]) &&
                            x >= box.coord[0] && x < box.coord[0] + static_cast<int>(box.box[0]);
        const size_t i = index(z, y, x);
        const int want_out = inside ? bf16_to_int(input[i]) : -7;
        const int want_red = inside ? 1 + bf16_to_int(input[i]) : 1;
        if (bf16_to_int(out[i]) != want_out && ++bad_out <= 5) {
          ADD_FAILURE() << name << ": TMA store [" << z << "][" << y << "][" << x
                        << "] = " << bf16_to_int(out[i]) << ", expected " << want_out;
        }
        if (bf16_to_int(red[i]) != want_red && ++bad_red <= 5) {
          ADD_FAILURE() << name << ": TMA reduce-add [" << z << "][" << y << "][" << x
                        << "] = " << bf16_to_int(red[i]) << ", expected " << want_red;
        }
      }
    }
  }
  EXPECT_EQ(bad_smem + bad_out + bad_red, 0) << name << ": shared " << bad_smem << ", store "
                                             << bad_out << ", reduce " << bad_red << " mismatches";
}

TEST(HopperWrappersTma, LoadStoreReduce2dEverySwizzle) {
  PTXB_REQUIRE_HOPPER();
  for (SmemSwizzle s :
       {SmemSwizzle::kNone, SmemSwizzle::k32B, SmemSwizzle::k64B, SmemSwizzle::k128B}) {
    run_tma_case(2, s);
  }
}

TEST(HopperWrappersTma, LoadStoreReduce3dEverySwizzle) {
  PTXB_REQUIRE_HOPPER();
  for (SmemSwizzle s :
       {SmemSwizzle::kNone, SmemSwizzle::k32B, SmemSwizzle::k64B, SmemSwizzle::k128B}) {
    run_tma_case(3, s);
  }
}

// ============================== multicast across a 2-CTA cluster ==============================

// Tile = 32 rows x 64 bf16 (128-byte rows, 128B swizzle). CTA r loads rows 16r..16r+15 once and
// multicasts them to both CTAs; each CTA expects the whole 4 KiB. Then each CTA arrives on the
// peer's "ack" barrier remotely (mapa + release.cluster) and waits on its own.
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    multicast_kernel(const __grid_constant__ CUtensorMap map, uint4* dump, int* acks) {
  __shared__ __align__(1024) uint8_t tile[4096];
  __shared__ uint64_t full_bar, ack_bar;
  const uint32_t rank = ptxb::cluster_ctarank();
  if (threadIdx.x == 0) {
    ptxb::mbar_init(&full_bar, 1);
    ptxb::mbar_init(&ack_bar, 1);
    ptxb::fence_mbarrier_init();
  }
  ptxb::cluster_sync();  // both CTAs' barriers initialised before any multicast lands
  if (threadIdx.x == 0) {
    ptxb::mbar_arrive_expect_tx(&full_bar, 4096);
    ptxb::tma_load_multicast(tile + rank * 2048, &map, &full_bar, 0x3, 0, 16 * rank);
  }
  ptxb::mbar_wait_cluster(&full_bar, 0);
  for (int i = threadIdx.x; i < 4096 / 16; i += 128) {
    dump[rank * 256 + i] = reinterpret_cast<const uint4*>(tile)[i];
  }
  if (threadIdx.x == 0) ptxb::mbar_arrive_remote(&ack_bar, rank ^ 1);
  ptxb::mbar_wait_cluster(&ack_bar, 0);
  if (threadIdx.x == 0) acks[rank] = 1 + static_cast<int>(ptxb::cluster_nctarank());
  ptxb::cluster_sync();  // no CTA exits while its peer may still touch its shared memory
}

TEST(HopperWrappersTma, MulticastReachesBothCtasOfCluster) {
  PTXB_REQUIRE_HOPPER();
  std::vector<uint16_t> input(64 * 64);
  Lcg lcg{4242};
  for (auto& v : input) v = bf16_bits(lcg.next(100));
  DeviceBuffer<uint16_t> d_in(input.size());
  DeviceBuffer<uint4> d_dump(2 * 256);
  DeviceBuffer<int> d_acks(2);
  ASSERT_TRUE(d_in.ptr && d_dump.ptr && d_acks.ptr);
  PTXB_CUDA_CHECK(cudaMemcpy(d_in.ptr, input.data(), input.size() * 2, cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemset(d_dump.ptr, 0, 2 * 4096));
  PTXB_CUDA_CHECK(cudaMemset(d_acks.ptr, 0, 2 * sizeof(int)));
  CUtensorMap map;
  PTXB_CU_CHECK(
      ptxb::make_tensor_map_2d_bf16(&map, d_in.ptr, 64, 64, 64, 16, 64, SmemSwizzle::k128B));
  multicast_kernel<<<2, 128>>>(map, d_dump.ptr, d_acks.ptr);
  PTXB_CUDA_CHECK(cudaGetLastError());
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint8_t> dump(2 * 4096);
  int acks[2];
  PTXB_CUDA_CHECK(cudaMemcpy(dump.data(), d_dump.ptr, dump.size(), cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(cudaMemcpy(acks, d_acks.ptr, sizeof(acks), cudaMemcpyDeviceToHost));
  EXPECT_EQ(acks[0], 3) << "CTA 0 did not get the remote arrival (or cluster size != 2)";
  EXPECT_EQ(acks[1], 3) << "CTA 1 did not get the remote arrival (or cluster size != 2)";
  int bad = 0;
  for (int cta = 0; cta < 2; ++cta) {
    for (int row = 0; row < 32; ++row) {
      for (int col = 0; col < 64; ++col) {
        uint16_t got;
        std::memcpy(&got,
                    &dump[cta * 4096 + model_swizzle(SmemSwizzle::k128B, row * 128 + col * 2)], 2);
        if (got != input[row * 64 + col] && ++bad <= 5) {
          ADD_FAILURE() << "multicast: CTA " << cta << " row " << row << " col " << col << " = "
                        << bf16_to_int(got) << ", expected " << bf16_to_int(input[row * 64 + col])
                        << " (rows " << (row < 16 ? "0-15 from CTA 0" : "16-31 from CTA 1") << ")";
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

// ============================== 3-stage mbarrier pipeline ==============================

constexpr int kStages = 3, kTiles = 30, kTileRows = 32, kTileCols = 64;

// Warp 0 produces (one elected lane issues TMA), warps 1-4 consume. full[s]: 1 arrival + bytes;
// empty[s]: one arrival per consumer warp.
__global__ void __launch_bounds__(160, 1)
    pipeline_kernel(const __grid_constant__ CUtensorMap map, int* checksums, int* seen) {
  __shared__ __align__(128) uint16_t stage[kStages][kTileRows * kTileCols];
  __shared__ uint64_t full[kStages], empty[kStages];
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptxb::mbar_init(&full[s], 1);
      ptxb::mbar_init(&empty[s], 4);
    }
    ptxb::fence_mbarrier_init();
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (ptxb::elect_one_sync()) {
      for (int t = 0; t < kTiles; ++t) {
        const int s = t % kStages;
        const uint32_t round = t / kStages;
        ptxb::mbar_wait(&empty[s], (round & 1) ^ 1);  // fresh barrier: parity 1 passes at once
        ptxb::mbar_arrive_expect_tx(&full[s], kTileRows * kTileCols * 2);
        ptxb::tma_load(stage[s], &map, &full[s], 0, t * kTileRows);
      }
    }
  } else {
    const int consumer = threadIdx.x - 32;  // 0..127, 16 elements each
    for (int t = 0; t < kTiles; ++t) {
      const int s = t % kStages;
      const uint32_t round = t / kStages;
      ptxb::mbar_wait(&full[s], round & 1);
      int sum = 0;
      for (int i = 0; i < 16; ++i) {
        const uint32_t wide = static_cast<uint32_t>(stage[s][consumer * 16 + i]) << 16;
        sum += static_cast<int>(__uint_as_float(wide));
      }
      for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
      __syncwarp();
      if (lane == 0) {
        atomicAdd(&checksums[t], sum);
        atomicAdd(&seen[t], 1);
        ptxb::mbar_arrive(&empty[s]);
      }
    }
  }
}

TEST(HopperWrappersMbarrier, ThreeStagePipelineDeliversEveryTileOnce) {
  PTXB_REQUIRE_HOPPER();
  std::vector<uint16_t> input(kTiles * kTileRows * kTileCols);
  std::vector<int> want(kTiles, 0);
  for (size_t i = 0; i < input.size(); ++i) {
    const int value = static_cast<int>((i * 7 + i / 64 * 3) % 251) - 125;
    input[i] = bf16_bits(value);
    want[i / (kTileRows * kTileCols)] += value;
  }
  DeviceBuffer<uint16_t> d_in(input.size());
  DeviceBuffer<int> d_sums(kTiles), d_seen(kTiles);
  ASSERT_TRUE(d_in.ptr && d_sums.ptr && d_seen.ptr);
  PTXB_CUDA_CHECK(cudaMemcpy(d_in.ptr, input.data(), input.size() * 2, cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemset(d_sums.ptr, 0, kTiles * sizeof(int)));
  PTXB_CUDA_CHECK(cudaMemset(d_seen.ptr, 0, kTiles * sizeof(int)));
  CUtensorMap map;
  PTXB_CU_CHECK(ptxb::make_tensor_map_2d_bf16(&map, d_in.ptr, kTiles * kTileRows, kTileCols,
                                              kTileCols, kTileRows, kTileCols, SmemSwizzle::kNone));
  pipeline_kernel<<<1, 160>>>(map, d_sums.ptr, d_seen.ptr);
  PTXB_CUDA_CHECK(cudaGetLastError());
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> sums(kTiles), seen(kTiles);
  PTXB_CUDA_CHECK(
      cudaMemcpy(sums.data(), d_sums.ptr, kTiles * sizeof(int), cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(
      cudaMemcpy(seen.data(), d_seen.ptr, kTiles * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 0; t < kTiles; ++t) {
    EXPECT_EQ(seen[t], 4) << "tile " << t << " consumed " << seen[t]
                          << " times by the 4 consumer warps (expected once each)";
    EXPECT_EQ(sums[t], want[t]) << "tile " << t << " checksum";
  }
}

// ============================== setmaxnreg + named barriers ==============================

// Warpgroup 0 (producer) drops to 40 registers and hands data to warpgroups 1-2 (consumers,
// 232 registers) through shared memory and named barrier 1 (bar.arrive / bar.sync, 384 threads).
__global__ void __launch_bounds__(384, 1) setmaxnreg_kernel(const float* in, float* out) {
  __shared__ float handoff[256];
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    ptxb::setmaxnreg_dec<40>();
    handoff[threadIdx.x] = in[threadIdx.x] * 2.f;
    handoff[threadIdx.x + 128] = in[threadIdx.x + 128] * 2.f;
    ptxb::named_barrier_arrive(1, 384);
  } else {
    ptxb::setmaxnreg_inc<232>();
    float acc[64];
    const int i = threadIdx.x - 128;
#pragma unroll
    for (int j = 0; j < 64; ++j) acc[j] = in[(i + j) % 256];
    ptxb::named_barrier_sync(1, 384);
    float total = handoff[i];
#pragma unroll
    for (int j = 0; j < 64; ++j) total += acc[j] * static_cast<float>(j % 3);
    out[i] = total;
  }
}

TEST(HopperWrappersSync, SetmaxnregWarpgroupsWithNamedBarrier) {
  PTXB_REQUIRE_HOPPER();
  std::vector<float> in(256);
  for (int i = 0; i < 256; ++i) in[i] = static_cast<float>(i % 17 - 8);
  DeviceBuffer<float> d_in(256), d_out(256);
  ASSERT_TRUE(d_in.ptr && d_out.ptr);
  PTXB_CUDA_CHECK(cudaMemcpy(d_in.ptr, in.data(), 256 * 4, cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemset(d_out.ptr, 0xFF, 256 * 4));
  setmaxnreg_kernel<<<1, 384>>>(d_in.ptr, d_out.ptr);
  PTXB_CUDA_CHECK(cudaGetLastError());
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float> out(256);
  PTXB_CUDA_CHECK(cudaMemcpy(out.data(), d_out.ptr, 256 * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 256; ++i) {
    float want = in[i] * 2.f;
    for (int j = 0; j < 64; ++j) want += in[(i + j) % 256] * static_cast<float>(j % 3);
    EXPECT_EQ(out[i], want) << "consumer thread " << i;
  }
}

// ============================== ldmatrix / stmatrix / math / elect ==============================

// One warp. `tile` is 16x16 bf16 row-major (32-byte rows); matrix i of an x4 is the 8x8 block
// (rows 8*(i%2).., cols 8*(i/2)..); lane l supplies the address of row l%8 of matrix l/8.
__global__ void misc_kernel(const uint16_t* tile_in, uint32_t* frags, uint16_t* tile_out,
                            const float* exp_in, float* exp_out, uint32_t* packed, int* elected) {
  __shared__ __align__(128) uint16_t tile[16 * 16];
  __shared__ __align__(128) uint16_t back[6][16 * 16];
  const int lane = threadIdx.x % 32;
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    tile[i] = tile_in[i];
    for (int k = 0; k < 6; ++k) back[k][i] = 0xFFFF;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    const int m = lane / 8, r = lane % 8;
    const int offset = ((m % 2) * 8 + r) * 16 + (m / 2) * 8;
    uint32_t x1[1], x2[2], x4[4], t1[1], t2[2], t4[4];
    ptxb::ldmatrix_x1(x1, tile + offset);
    ptxb::ldmatrix_x2(x2, tile + offset);
    ptxb::ldmatrix_x4(x4, tile + offset);
    ptxb::ldmatrix_x1<true>(t1, tile + offset);
    ptxb::ldmatrix_x2<true>(t2, tile + offset);
    ptxb::ldmatrix_x4<true>(t4, tile + offset);
    const uint32_t all[14] = {x1[0], x2[0], x2[1], x4[0], x4[1], x4[2], x4[3],
                              t1[0], t2[0], t2[1], t4[0], t4[1], t4[2], t4[3]};
    for (int k = 0; k < 14; ++k) frags[k * 32 + lane] = all[k];
    ptxb::stmatrix_x1(back[0] + offset, x1);
    ptxb::stmatrix_x2(back[1] + offset, x2);
    ptxb::stmatrix_x4(back[2] + offset, x4);
    ptxb::stmatrix_x1<true>(back[3] + offset, t1);
    ptxb::stmatrix_x2<true>(back[4] + offset, t2);
    ptxb::stmatrix_x4<true>(back[5] + offset, t4);
    exp_out[lane] = ptxb::exp2_approx(exp_in[lane]);
    packed[lane] = ptxb::pack_bf16x2(static_cast<float>(lane), -static_cast<float>(lane) - 0.5f);
  }
  if (ptxb::elect_one_sync()) atomicAdd(&elected[threadIdx.x / 32], 1);
  __syncthreads();
  for (int i = threadIdx.x; i < 6 * 256; i += blockDim.x) tile_out[i] = back[i / 256][i % 256];
}

TEST(HopperWrappersMisc, LdmatrixStmatrixExp2PackElect) {
  PTXB_REQUIRE_HOPPER();
  std::vector<uint16_t> tile(256);
  for (int i = 0; i < 256; ++i) tile[i] = static_cast<uint16_t>(0x1000 + i);  // unique payloads
  std::vector<float> exp_in(32);
  for (int i = 0; i < 32; ++i) exp_in[i] = -10.f + 0.7f * i;
  DeviceBuffer<uint16_t> d_tile(256), d_back(6 * 256);
  DeviceBuffer<uint32_t> d_frags(14 * 32), d_packed(32);
  DeviceBuffer<float> d_exp_in(32), d_exp_out(32);
  DeviceBuffer<int> d_elected(4);
  ASSERT_TRUE(d_tile.ptr && d_back.ptr && d_frags.ptr && d_packed.ptr && d_exp_in.ptr &&
              d_exp_out.ptr && d_elected.ptr);
  PTXB_CUDA_CHECK(cudaMemcpy(d_tile.ptr, tile.data(), 512, cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemcpy(d_exp_in.ptr, exp_in.data(), 128, cudaMemcpyHostToDevice));
  PTXB_CUDA_CHECK(cudaMemset(d_elected.ptr, 0, 4 * sizeof(int)));
  misc_kernel<<<1, 128>>>(d_tile.ptr, d_frags.ptr, d_back.ptr, d_exp_in.ptr, d_exp_out.ptr,
                          d_packed.ptr, d_elected.ptr);
  PTXB_CUDA_CHECK(cudaGetLastError());
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<uint32_t> frags(14 * 32), packed(32);
  std::vector<uint16_t> back(6 * 256);
  std::vector<float> exp_out(32);
  int elected[4];
  PTXB_CUDA_CHECK(cudaMemcpy(frags.data(), d_frags.ptr, frags.size() * 4, cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(cudaMemcpy(back.data(), d_back.ptr, back.size() * 2, cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(cudaMemcpy(packed.data(), d_packed.ptr, 128, cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(cudaMemcpy(exp_out.data(), d_exp_out.ptr, 128, cudaMemcpyDeviceToHost));
  PTXB_CUDA_CHECK(cudaMemcpy(elected, d_elected.ptr, sizeof(elected), cudaMemcpyDeviceToHost));

  // Expected fragments (PTX ISA "ldmatrix": lane l holds row l/4, cols 2(l%4), 2(l%4)+1 of each
  // matrix; with .trans, of the transposed matrix).
  const auto element = [&](int m, int row, int col) {
    return static_cast<uint32_t>(tile[((m % 2) * 8 + row) * 16 + (m / 2) * 8 + col]);
  };
  const int kinds[14][2] = {{0, 0}, {0, 0}, {1, 0}, {0, 0}, {1, 0}, {2, 0}, {3, 0},
                            {0, 1}, {0, 1}, {1, 1}, {0, 1}, {1, 1}, {2, 1}, {3, 1}};
  const char* names[14] = {"x1",          "x2[0]",       "x2[1]",       "x4[0]",
                           "x4[1]",       "x4[2]",       "x4[3]",       "x1.trans",
                           "x2.trans[0]", "x2.trans[1]", "x4.trans[0]", "x4.trans[1]",
                           "x4.trans[2]", "x4.trans[3]"};
  for (int k = 0; k < 14; ++k) {
    const int m = kinds[k][0];
    const bool trans = kinds[k][1] != 0;
    for (int l = 0; l < 32; ++l) {
      const int row = l / 4, col = 2 * (l % 4);
      const uint32_t lo = trans ? element(m, col, row) : element(m, row, col);
      const uint32_t hi = trans ? element(m, col + 1, row) : element(m, row, col + 1);
      EXPECT_EQ(frags[k * 32 + l], lo | (hi << 16)) << "ldmatrix " << names[k] << " lane " << l;
    }
  }
  // stmatrix(.trans) of what ldmatrix(.trans) loaded restores the covered matrices exactly.
  const int covered[6] = {1, 2, 4, 1, 2, 4};
  for (int k = 0; k < 6; ++k) {
    for (int i = 0; i < 256; ++i) {
      const int row = i / 16, col = i % 16;
      const int m = (row / 8) + 2 * (col / 8);
      const uint16_t want = m < covered[k] ? tile[i] : 0xFFFF;
      EXPECT_EQ(back[k * 256 + i], want)
          << "stmatrix variant " << k << " element (" << row << ", " << col << ")";
    }
  }
  for (int l = 0; l < 32; ++l) {
    const double want = std::exp2(static_cast<double>(exp_in[l]));
    EXPECT_NEAR(exp_out[l], want, want * 1e-6) << "ex2.approx(" << exp_in[l] << ")";
    // lo = l in bits 0-15; hi = -l - 0.5 (exact in bf16 for l < 128) in bits 16-31.
    const float hi_value = -static_cast<float>(l) - 0.5f;
    uint32_t hi_bits;
    std::memcpy(&hi_bits, &hi_value, 4);
    EXPECT_EQ(packed[l], static_cast<uint32_t>(bf16_bits(l)) | (hi_bits & 0xFFFF0000u))
        << "cvt.rn.bf16x2 lane " << l;
  }
  for (int w = 0; w < 4; ++w) EXPECT_EQ(elected[w], 1) << "elect.sync in warp " << w;
}

}  // namespace
