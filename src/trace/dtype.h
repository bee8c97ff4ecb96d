// Tensor element types of the FlashInfer-Trace schema and their CUDA C++ spellings (design.md
// §3.2).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ptxb {

enum class DType { kBFloat16, kFloat16, kFloat32, kInt32, kInt64, kFloat8E4M3, kBool };

// Schema name ("bfloat16", "float8_e4m3fn", ...) <-> enum.
std::optional<DType> parse_dtype(std::string_view name);
std::string_view dtype_name(DType dtype);
// "bfloat16, float16, float32, int32, int64, float8_e4m3fn, bool" (for error messages).
std::string dtype_name_list();

// CUDA C++ element type used in the solution ABI: __nv_bfloat16, __half, float, int32_t,
// int64_t, __nv_fp8_e4m3, bool.
std::string_view dtype_cuda_type(DType dtype);
std::size_t dtype_size_bytes(DType dtype);

}  // namespace ptxb
