// Shared by rung1_tma_wgmma.cu, rung2_warp_specialized.cu and rung3_fused_dq.cu of
// mha_bwd_d{64,96,128}[_causal] (rungs 2 and 3 include it before ws_common.cuh):
// the RS-wgmma helper, accumulator packing and stores, kernel 1 (Dr = rowsum(dO ∘ O)) and the
// host side of run() (shape check, Dr scratch, cached tensor maps), written once so a fix
// reaches every rung. Not a standalone header: the rungs include it inside their anonymous
// namespace, after kD (the head dim, PTXB_HEAD_DIM), kSlabs (64-column slabs per tile: 1 for
// D = 64, 2 for 96 and 128), kBT, kSlabCols and kSlabBytes. A submission is one file, so the
// replay model (and `ptxbench tasks solution`) inline it textually (src/llm/solution_render.h).
#pragma once

// acc(64 x 64 kSlabs, as lo/hi 64-column halves) += A(64 x 64, register fragments) · B, where B
// is a 64-row x 64 kSlabs-column tile read MN-major (K = its rows, N = its columns, contiguous):
// 128B swizzle atom = 8 K-rows x 64 N-columns; LBO = SBO = 1024 B; k16 step = 16 rows = 2048 B;
// columns 64..127 = the second slab (+8 KiB). D = 64 has no hi half (hi is left untouched);
// D = 96 computes hi over all 64 columns, of which 96..127 multiply B's zero fill and are never
// stored (store_tile). Same pattern as the forward's P·V.
__device__ __forceinline__ void gemm_rs_k64(float (&lo)[32], float (&hi)[32],
                                            const uint32_t (&a)[4][4], uint64_t desc_b) {
#pragma unroll
  for (int kk = 0; kk < kBT / 16; ++kk) {
    const uint32_t off = kk * 16 * 128;
    ptxb::wgmma_bf16_rs<64, 1, 1, 1>(lo, a[kk], ptxb::wgmma_desc_advance(desc_b, off), true);
    if constexpr (kSlabs == 2)
      ptxb::wgmma_bf16_rs<64, 1, 1, 1>(hi, a[kk],
                                       ptxb::wgmma_desc_advance(desc_b, kSlabBytes + off), true);
  }
}

// m64n64 accumulator -> RS A fragments (contract 3.2: k16 slice kk = registers 8kk..8kk+7).
__device__ __forceinline__ void pack_a(const float (&acc)[32], uint32_t (&a)[4][4]) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
    for (int q = 0; q < 4; ++q)
      a[kk][q] = ptxb::pack_bf16x2(acc[8 * kk + 2 * q], acc[8 * kk + 2 * q + 1]);
  }
}

// Two-term bf16 split of an m64n64 accumulator as RS A fragments: hi (already packed by pack_a)
// = bf16(x), lo = bf16(x - hi), so hi·B + lo·B carries x with ~16 significant bits instead of 8.
__device__ __forceinline__ void pack_a_lo(const float (&acc)[32], const uint32_t (&hi)[4][4],
                                          uint32_t (&lo)[4][4]) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const float h0 = __uint_as_float(hi[kk][q] << 16);          // low half = first element
      const float h1 = __uint_as_float(hi[kk][q] & 0xffff0000u);  // high half = second
      lo[kk][q] = ptxb::pack_bf16x2(acc[8 * kk + 2 * q] - h0, acc[8 * kk + 2 * q + 1] - h1);
    }
  }
}

// Stores a 64 x D fp32 accumulator pair (rows 16w + l/4 + 8h) as bf16, times `scale`: only the
// D real columns (D = 96: hi columns 32..63, i.e. 96..127, are padding and are skipped; the
// conditions are compile-time constants per unrolled i, so no branch is emitted).
__device__ __forceinline__ void store_tile(__nv_bfloat16* dst_rows, const float (&lo)[32],
                                           const float (&hi)[32], float scale, int warp, int lane) {
  const int row0 = 16 * warp + lane / 4;
#pragma unroll
  for (int i = 0; i < 32; i += 2) {
    const int row = row0 + 8 * ((i / 2) % 2);
    const int col = 2 * (lane % 4) + 8 * (i / 4);
    __nv_bfloat16* d = dst_rows + static_cast<int64_t>(row) * kD + col;
    *reinterpret_cast<__nv_bfloat162*>(d) = __floats2bfloat162_rn(lo[i] * scale, lo[i + 1] * scale);
    if (kSlabCols + 8 * (i / 4) < kD)
      *reinterpret_cast<__nv_bfloat162*>(d + kSlabCols) =
          __floats2bfloat162_rn(hi[i] * scale, hi[i + 1] * scale);
    else if constexpr (kSlabs == 2)
      // D = 96 padding: not stored, but kept live to here as a store would keep it. Without
      // this, ptxas (nvcc 13.0) serialises every wgmma of rung 1's causal D = 96 dq kernel
      // (C7511: register resources), the accumulator's dead half confusing its allocation.
      asm volatile("" ::"f"(hi[i]), "f"(hi[i + 1]));
  }
}

// wgmma_fence_operand of an accumulator pair; D = 64 has no hi half to fence (fencing it would
// keep its 32 unused registers alive).
__device__ __forceinline__ void fence_operand(float (&lo)[32], float (&hi)[32]) {
  ptxb::wgmma_fence_operand(lo);
  if constexpr (kSlabs == 2) ptxb::wgmma_fence_operand(hi);
}

__device__ __forceinline__ void zero(float (&a)[32]) {
#pragma unroll
  for (int i = 0; i < 32; ++i) a[i] = 0.f;
}

// ---- 1. Dr = rowsum(dO ∘ O) (and, for rung 3, zeroes its fp32 dQ buffer's rows) ----
// Reads O and dO from global memory, row stride D: only the D real columns are summed (16
// threads per row, thread `part` takes columns 8 part..8 part+7; for D = 64, 96 the parts >= D/8
// add nothing), so the shared-memory padding of D = 96 never reaches Dr.
__global__ void __launch_bounds__(256)
    preprocess_kernel(const __nv_bfloat16* __restrict__ O, const __nv_bfloat16* __restrict__ dO,
                      float* __restrict__ Dr, float* __restrict__ zero_rows, int64_t rows) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * 16 + threadIdx.x / 16;
  const int part = threadIdx.x % 16;  // 8 elements = 16 bytes each
  float sum = 0.f;
  if (row < rows && (kD / 8 == 16 || part < kD / 8)) {
    const uint4 o = *reinterpret_cast<const uint4*>(O + row * kD + part * 8);
    const uint4 g = *reinterpret_cast<const uint4*>(dO + row * kD + part * 8);
    const __nv_bfloat162* o2 = reinterpret_cast<const __nv_bfloat162*>(&o);
    const __nv_bfloat162* g2 = reinterpret_cast<const __nv_bfloat162*>(&g);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 a = __bfloat1622float2(o2[k]);
      const float2 b = __bfloat1622float2(g2[k]);
      sum = fmaf(a.x, b.x, fmaf(a.y, b.y, sum));
    }
  }
#pragma unroll
  for (int m = 8; m >= 1; m /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, m);
  if (row < rows && part == 0) Dr[row] = sum;
  // zero_rows: rows x D floats (nullptr: none), 8 per thread, written while the loads stream.
  if (zero_rows != nullptr && row < rows && part < kD / 8) {
    float4* z = reinterpret_cast<float4*>(zero_rows + row * kD + part * 8);
    z[0] = make_float4(0.f, 0.f, 0.f, 0.f);
    z[1] = make_float4(0.f, 0.f, 0.f, 0.f);
  }
}

// ---- host side of both rungs' run() ----

// False (after a message naming the rung) for shapes this kernel does not take: d = kD, S a
// multiple of the rung's query/key block, B*H within gridDim.y, B*H*S rows within int32.
bool shape_supported(int64_t B, int64_t H, int64_t d, int64_t S, int64_t block, const char* rung) {
  const int64_t rows = B * H * S;
  if (d == kD && S > 0 && S % block == 0 && B > 0 && H > 0 && B * H <= 65535 &&
      rows <= (int64_t{1} << 31) - 1)
    return true;
  std::fprintf(stderr,
               "%s %s: unsupported shape B=%lld H=%lld d=%lld S=%lld (need d=%d, "
               "S %% %lld == 0, B*H <= 65535)\n",
               kTaskName, rung, static_cast<long long>(B), static_cast<long long>(H),
               static_cast<long long>(d), static_cast<long long>(S), kD,
               static_cast<long long>(block));
  return false;
}

// Scratch for Dr, grown on demand and kept across calls (allowed: scratch allocation).
float* dr_scratch(int64_t rows, const char* rung) {
  static float* buffer = nullptr;
  static int64_t capacity = 0;
  if (rows > capacity) {
    if (buffer != nullptr) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (cudaMalloc(&buffer, static_cast<size_t>(rows) * sizeof(float)) != cudaSuccess) {
      std::fprintf(stderr, "%s %s: cudaMalloc of %lld floats failed\n", kTaskName, rung,
                   static_cast<long long>(rows));
      return nullptr;
    }
    capacity = rows;
  }
  return buffer;
}

struct TensorMaps {
  CUtensorMap q, k, v, dO;
};

// The four 2-D views {D, B*H*S}, box {64, 64}, 128B swizzle, cached per pointer set (launch
// setup). D = 96: the view is 96 columns wide, so the second box (columns 64..127) is half out
// of bounds; TMA writes those elements to shared memory as zeros and still counts their bytes
// toward the barrier's transaction count (PTX ISA cp.async.bulk.tensor, OOB fill). D = 64: one
// box per row span. on_rebuild (the rung's kernel attributes) runs with each rebuild. nullptr
// when a map cannot be made (make_tensor_map already printed the reason).
template <class OnRebuild>
const TensorMaps* tensor_maps(const void* Q, const void* K, const void* V, const void* dO,
                              int64_t rows, OnRebuild on_rebuild) {
  static const void* cached[4] = {nullptr, nullptr, nullptr, nullptr};
  static int64_t cached_rows = -1;
  static TensorMaps maps;
  if (cached[0] != Q || cached[1] != K || cached[2] != V || cached[3] != dO ||
      cached_rows != rows) {
    const void* ptrs[4] = {Q, K, V, dO};
    CUtensorMap* out[4] = {&maps.q, &maps.k, &maps.v, &maps.dO};
    for (int i = 0; i < 4; ++i) {
      if (ptxb::make_tensor_map_2d_bf16(out[i], ptrs[i], static_cast<uint64_t>(rows), kD, kD, kBT,
                                        kSlabCols, ptxb::SmemSwizzle::k128B) != CUDA_SUCCESS) {
        cached_rows = -1;
        return nullptr;
      }
    }
    on_rebuild();
    for (int i = 0; i < 4; ++i) cached[i] = ptrs[i];
    cached_rows = rows;
  }
  return &maps;
}
