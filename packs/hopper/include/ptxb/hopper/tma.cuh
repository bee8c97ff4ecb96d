// PTXBench knowledge pack, Hopper (sm_90a): Tensor Memory Accelerator (TMA) and bulk copies.
//
// PTX ISA 9.7.9.25 "Data Movement and Conversion Instructions: cp.async.bulk.tensor" and
// "cp.async.bulk", "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch.tensor".
// Host: a CUtensorMap (128-byte opaque object) describes a global tensor and the box one TMA
// instruction moves; it is built with cuTensorMapEncodeTiled, reached through
// cudaGetDriverEntryPointByVersion so the program does not link libcuda. Pass it to the kernel
// as a `const __grid_constant__ CUtensorMap` parameter (or keep it in __constant__/global
// memory) and hand its address to the device wrappers.
//
// Contracts (what silently corrupts or hangs if broken):
//   * Coordinates are signed element indices, innermost dimension first (x, y, z, ...). Boxes
//     may hang off the tensor edge: loads fill out-of-bounds elements with zero (or NaN with
//     CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA), stores/reduces skip them. The mbarrier
//     transaction count is always the FULL box size in bytes, edge boxes included.
//   * Loads complete on an mbarrier: the expected bytes must be declared on that barrier in the
//     current phase (mbar_arrive_expect_tx / mbar_expect_tx) or the phase completes early or
//     never (hang). Shared destinations: 128-byte aligned; with a swizzle, aligned to the swizzle
//     repeat (8 x span bytes; 1024 for 128B) so the pattern matches wgmma descriptors.
//   * Stores/reduces read shared memory through the async proxy: every thread that wrote the
//     tile executes fence_proxy_async_smem(), then a barrier, then ONE thread issues the store,
//     bulk_commit_group(), and bulk_wait_group_read<0>() before the tile is overwritten or the
//     CTA exits (bulk_wait_group<0>() if the global result must be complete, e.g. before a
//     grid-wide dependency).
//   * Swizzle: the box inner dimension in bytes must be <= the swizzle span (32/64/128); use
//     exactly the span to get the canonical K-major layout of ptxb/hopper/wgmma.cuh.
#pragma once

#include <cstdint>
#include <cstdio>

#include <cuda.h>
#include <cuda_runtime.h>

#include "ptxb/hopper/common.cuh"

namespace ptxb {

// ---------------------------------------------------------------------------------------------
// Host: tensor-map creation
// ---------------------------------------------------------------------------------------------

// Signatures of the driver entry points we fetch (CUDA driver API 12.0 ABI).
using TensorMapEncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                            const cuuint64_t*, const cuuint64_t*,
                                            const cuuint32_t*, const cuuint32_t*,
                                            CUtensorMapInterleave, CUtensorMapSwizzle,
                                            CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
using GetErrorStringFn = CUresult (*)(CUresult, const char**);

// Fetches a driver function by name; nullptr (with a message) when the driver lacks it.
inline void* driver_entry_point(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult query = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t err =
      cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &query);
  if (err != cudaSuccess || query != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "cudaGetDriverEntryPointByVersion(\"%s\", 12000) failed: %s (query %d)\n",
                 name, cudaGetErrorString(err), static_cast<int>(query));
    return nullptr;
  }
  return fn;
}

// "CUDA_ERROR_INVALID_VALUE: invalid argument"-style text for a driver result.
inline const char* cu_result_string(CUresult result) {
  static auto fn = reinterpret_cast<GetErrorStringFn>(driver_entry_point("cuGetErrorString"));
  const char* text = nullptr;
  if (fn == nullptr || fn(result, &text) != CUDA_SUCCESS || text == nullptr) {
    return "unknown CUresult";
  }
  return text;
}

inline CUtensorMapSwizzle to_tensor_map_swizzle(SmemSwizzle swizzle) {
  switch (swizzle) {
    case SmemSwizzle::k32B: return CU_TENSOR_MAP_SWIZZLE_32B;
    case SmemSwizzle::k64B: return CU_TENSOR_MAP_SWIZZLE_64B;
    case SmemSwizzle::k128B: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

// Encodes a tiled tensor map. Arrays are innermost dimension first:
//   dims[rank]            tensor extent in elements;
//   strides_bytes[rank-1] byte stride of dimensions 1..rank-1 (dimension 0 is contiguous);
//                         multiples of 16, < 2^40;
//   box[rank]             elements moved per instruction, each <= 256; box[0] * element size
//                         a multiple of 16 bytes and <= the swizzle span when swizzled.
// The global address must be 16-byte aligned (the solution ABI gives 256).
// Returns CUDA_SUCCESS, or prints which argument or driver call failed and returns the error.
inline CUresult make_tensor_map(CUtensorMap* map, CUtensorMapDataType dtype,
                                uint32_t element_bytes, uint32_t rank, const void* global_address,
                                const uint64_t* dims, const uint64_t* strides_bytes,
                                const uint32_t* box, SmemSwizzle swizzle,
                                CUtensorMapL2promotion l2_promotion =
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                CUtensorMapFloatOOBfill oob_fill = CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) {
  const auto fail = [&](const char* why) {
    std::fprintf(stderr, "make_tensor_map(rank %u): %s\n", rank, why);
    return CUDA_ERROR_INVALID_VALUE;
  };
  if (rank < 1 || rank > 5) return fail("rank must be 1..5");
  if (reinterpret_cast<uintptr_t>(global_address) % 16 != 0) {
    return fail("global address not 16-byte aligned");
  }
  for (uint32_t i = 0; i < rank; ++i) {
    if (box[i] == 0 || box[i] > 256) return fail("box dimension outside 1..256");
    if (i > 0 && strides_bytes[i - 1] % 16 != 0) return fail("stride not a multiple of 16 B");
  }
  const uint32_t inner_bytes = box[0] * element_bytes;
  if (inner_bytes % 16 != 0) return fail("box inner dimension not a multiple of 16 bytes");
  if (swizzle != SmemSwizzle::kNone && inner_bytes > static_cast<uint32_t>(swizzle)) {
    return fail("box inner dimension exceeds the swizzle span");
  }
  static auto encode =
      reinterpret_cast<TensorMapEncodeTiledFn>(driver_entry_point("cuTensorMapEncodeTiled"));
  if (encode == nullptr) return CUDA_ERROR_NOT_FOUND;
  cuuint64_t dims_[5];
  cuuint64_t strides_[4];
  cuuint32_t box_[5];
  cuuint32_t element_strides[5];
  for (uint32_t i = 0; i < rank; ++i) {
    dims_[i] = dims[i];
    box_[i] = box[i];
    element_strides[i] = 1;
    if (i + 1 < rank) strides_[i] = strides_bytes[i];
  }
  const CUresult result =
      encode(map, dtype, rank, const_cast<void*>(global_address), dims_, strides_, box_,
             element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, to_tensor_map_swizzle(swizzle),
             l2_promotion, oob_fill);
  if (result != CUDA_SUCCESS) {
    std::fprintf(stderr,
                 "cuTensorMapEncodeTiled(rank %u, box[0] %u, swizzle %d) failed: %s (%d)\n", rank,
                 box[0], static_cast<int>(swizzle), cu_result_string(result),
                 static_cast<int>(result));
  }
  return result;
}

// Row-major bf16 matrix [rows][cols] (row pitch `row_stride` elements) moved in
// box_rows x box_cols tiles.
inline CUresult make_tensor_map_2d_bf16(CUtensorMap* map, const void* global_address,
                                        uint64_t rows, uint64_t cols, uint64_t row_stride,
                                        uint32_t box_rows, uint32_t box_cols,
                                        SmemSwizzle swizzle) {
  const uint64_t dims[2] = {cols, rows};
  const uint64_t strides[1] = {row_stride * 2};
  const uint32_t box[2] = {box_cols, box_rows};
  return make_tensor_map(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 2, global_address, dims,
                         strides, box, swizzle);
}

// ---------------------------------------------------------------------------------------------
// Device: tensor copies (all issued by ONE thread; the others wait on the mbarrier)
// ---------------------------------------------------------------------------------------------

namespace detail {
PTXB_DEVICE uint64_t map_u64(const CUtensorMap* map) { return reinterpret_cast<uint64_t>(map); }
}  // namespace detail

// Global -> shared tile load; completes `bytes = box size` transactions on `mbar` (which must be
// in the same CTA as `smem_dst`). Coordinates: 1 to 5 int32, innermost first.
template <class... Coords>
PTXB_DEVICE void tma_load(void* smem_dst, const CUtensorMap* map, uint64_t* mbar,
                          Coords... coords) {
  constexpr int kDims = sizeof...(Coords);
  static_assert(kDims >= 1 && kDims <= 5, "TMA tensors have 1 to 5 dimensions");
  const int32_t c[kDims] = {static_cast<int32_t>(coords)...};
  const uint32_t dst = smem_u32(smem_dst), bar = smem_u32(mbar);
  const uint64_t m = detail::map_u64(map);
  if constexpr (kDims == 1) {
    asm volatile(
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]) : "memory");
  } else if constexpr (kDims == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]), "r"(c[1])
        : "memory");
  } else if constexpr (kDims == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]), "r"(c[1]),
        "r"(c[2]) : "memory");
  } else if constexpr (kDims == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]),
        "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];" ::"r"(dst), "l"(m), "r"(bar), "r"(c[0]),
        "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
  }
}

// Multicast load: one global read, written to the same smem offset in every CTA of the cluster
// whose %cluster_ctarank bit is set in `cta_mask`, and completing `box bytes` on the mbarrier at
// the same offset in EACH destination CTA. Every destination CTA must therefore have
// initialised that barrier (cluster_sync() after init + fence_mbarrier_init()) and declared the
// bytes it expects, before the data can land. Typical use: each of k CTAs loads 1/k of a shared
// tile with mask = all k bits, and every CTA expects the full tile's bytes.
template <class... Coords>
PTXB_DEVICE void tma_load_multicast(void* smem_dst, const CUtensorMap* map, uint64_t* mbar,
                                    uint16_t cta_mask, Coords... coords) {
  constexpr int kDims = sizeof...(Coords);
  static_assert(kDims >= 1 && kDims <= 5, "TMA tensors have 1 to 5 dimensions");
  const int32_t c[kDims] = {static_cast<int32_t>(coords)...};
  const uint32_t dst = smem_u32(smem_dst), bar = smem_u32(mbar);
  const uint64_t m = detail::map_u64(map);
  if constexpr (kDims == 1) {
    asm volatile(
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%4}], [%2], %3;" ::"r"(dst), "l"(m), "r"(bar),
        "h"(cta_mask), "r"(c[0]) : "memory");
  } else if constexpr (kDims == 2) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;" ::"r"(dst), "l"(m), "r"(bar),
        "h"(cta_mask), "r"(c[0]), "r"(c[1]) : "memory");
  } else if constexpr (kDims == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%4, %5, %6}], [%2], %3;" ::"r"(dst), "l"(m), "r"(bar),
        "h"(cta_mask), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
  } else if constexpr (kDims == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%4, %5, %6, %7}], [%2], %3;" ::"r"(dst), "l"(m),
        "r"(bar), "h"(cta_mask), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;" ::"r"(dst), "l"(m),
        "r"(bar), "h"(cta_mask), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4])
        : "memory");
  }
}

// Shared -> global tile store (bulk async-group completion; see the contract above).
template <class... Coords>
PTXB_DEVICE void tma_store(const CUtensorMap* map, const void* smem_src, Coords... coords) {
  constexpr int kDims = sizeof...(Coords);
  static_assert(kDims >= 1 && kDims <= 5, "TMA tensors have 1 to 5 dimensions");
  const int32_t c[kDims] = {static_cast<int32_t>(coords)...};
  const uint32_t src = smem_u32(smem_src);
  const uint64_t m = detail::map_u64(map);
  if constexpr (kDims == 1) {
    asm volatile("cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%0, {%2}], [%1];" ::"l"(m),
                 "r"(src), "r"(c[0]) : "memory");
  } else if constexpr (kDims == 2) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                     m),
                 "r"(src), "r"(c[0]), "r"(c[1]) : "memory");
  } else if constexpr (kDims == 3) {
    asm volatile(
        "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(m),
        "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
  } else if constexpr (kDims == 4) {
    asm volatile(
        "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5}], [%1];" ::"l"(
            m),
        "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  } else {
    asm volatile(
        "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [%0, {%2, %3, %4, %5, %6}], [%1];" ::"l"(
            m),
        "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
  }
}

// Shared -> global element-wise add (global = global + tile), atomic per element, in the tensor
// map's element type; same completion and proxy rules as tma_store.
template <class... Coords>
PTXB_DEVICE void tma_reduce_add(const CUtensorMap* map, const void* smem_src, Coords... coords) {
  constexpr int kDims = sizeof...(Coords);
  static_assert(kDims >= 1 && kDims <= 5, "TMA tensors have 1 to 5 dimensions");
  const int32_t c[kDims] = {static_cast<int32_t>(coords)...};
  const uint32_t src = smem_u32(smem_src);
  const uint64_t m = detail::map_u64(map);
  if constexpr (kDims == 1) {
    asm volatile(
        "cp.reduce.async.bulk.tensor.1d.global.shared::cta.add.bulk_group [%0, {%2}], [%1];" ::"l"(
            m),
        "r"(src), "r"(c[0]) : "memory");
  } else if constexpr (kDims == 2) {
    asm volatile(
        "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.bulk_group [%0, {%2, %3}], [%1];" ::
            "l"(m),
        "r"(src), "r"(c[0]), "r"(c[1]) : "memory");
  } else if constexpr (kDims == 3) {
    asm volatile(
        "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.bulk_group [%0, {%2, %3, %4}], "
        "[%1];" ::"l"(m),
        "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
  } else if constexpr (kDims == 4) {
    asm volatile(
        "cp.reduce.async.bulk.tensor.4d.global.shared::cta.add.bulk_group [%0, {%2, %3, %4, "
        "%5}], [%1];" ::"l"(m),
        "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  } else {
    asm volatile(
        "cp.reduce.async.bulk.tensor.5d.global.shared::cta.add.bulk_group [%0, {%2, %3, %4, %5, "
        "%6}], [%1];" ::"l"(m),
        "r"(src), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
  }
}

// Warms L2 with a box (no shared memory, no completion to wait for).
template <class... Coords>
PTXB_DEVICE void tma_prefetch(const CUtensorMap* map, Coords... coords) {
  constexpr int kDims = sizeof...(Coords);
  static_assert(kDims >= 1 && kDims <= 5, "TMA tensors have 1 to 5 dimensions");
  const int32_t c[kDims] = {static_cast<int32_t>(coords)...};
  const uint64_t m = detail::map_u64(map);
  if constexpr (kDims == 1) {
    asm volatile("cp.async.bulk.prefetch.tensor.1d.L2.global [%0, {%1}];" ::"l"(m), "r"(c[0])
                 : "memory");
  } else if constexpr (kDims == 2) {
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global [%0, {%1, %2}];" ::"l"(m), "r"(c[0]),
                 "r"(c[1]) : "memory");
  } else if constexpr (kDims == 3) {
    asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global [%0, {%1, %2, %3}];" ::"l"(m),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]) : "memory");
  } else if constexpr (kDims == 4) {
    asm volatile("cp.async.bulk.prefetch.tensor.4d.L2.global [%0, {%1, %2, %3, %4}];" ::"l"(m),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]) : "memory");
  } else {
    asm volatile("cp.async.bulk.prefetch.tensor.5d.L2.global [%0, {%1, %2, %3, %4, %5}];" ::"l"(m),
                 "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(c[4]) : "memory");
  }
}

// Prefetches the 128-byte tensor map itself (first use otherwise stalls on its fetch). `map`
// is the generic address of a __grid_constant__ parameter or of global/const memory.
PTXB_DEVICE void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(detail::map_u64(map)) : "memory");
}

// Non-tensor bulk copy global -> shared, `bytes` a multiple of 16, both addresses 16-byte
// aligned; completes `bytes` transactions on `mbar` like a tensor load.
PTXB_DEVICE void bulk_copy_g2s(void* smem_dst, const void* global_src, uint32_t bytes,
                               uint64_t* mbar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
          "r"(smem_u32(smem_dst)),
      "l"(global_src), "r"(bytes), "r"(smem_u32(mbar)) : "memory");
}

// Bulk async-group completion for stores/reduces issued by this thread
// (PTX ISA "cp.async.bulk.commit_group", "cp.async.bulk.wait_group").
PTXB_DEVICE void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Waits until at most kPending groups are pending, counting a group done when the global writes
// are performed (use before dependent global reads).
template <int kPending>
PTXB_DEVICE void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(kPending) : "memory");
}
// Waits only until the shared-memory source reads finished: enough to reuse the smem tile.
template <int kPending>
PTXB_DEVICE void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
}

// Orders this thread's generic-proxy shared-memory accesses before later async-proxy accesses
// (TMA store source reads, wgmma operand reads) -- PTX ISA "membar/fence: fence.proxy.async".
PTXB_DEVICE void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

}  // namespace ptxb
