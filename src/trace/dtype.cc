#include "trace/dtype.h"

#include <array>
#include <utility>

namespace ptxb {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view cuda_type;
  std::size_t size_bytes;
};

constexpr std::array<DTypeInfo, 7> kDTypes = {{
    {DType::kBFloat16, "bfloat16", "__nv_bfloat16", 2},
    {DType::kFloat16, "float16", "__half", 2},
    {DType::kFloat32, "float32", "float", 4},
    {DType::kInt32, "int32", "int32_t", 4},
    {DType::kInt64, "int64", "int64_t", 8},
    {DType::kFloat8E4M3, "float8_e4m3fn", "__nv_fp8_e4m3", 1},
    {DType::kBool, "bool", "bool", 1},
}};

const DTypeInfo& info(DType dtype) {
  for (const auto& entry : kDTypes)
    if (entry.dtype == dtype) return entry;
  return kDTypes[0];  // unreachable: every enumerator is in the table
}

}  // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& entry : kDTypes)
    if (entry.name == name) return entry.dtype;
  return std::nullopt;
}

std::string_view dtype_name(DType dtype) {
  return info(dtype).name;
}
std::string_view dtype_cuda_type(DType dtype) {
  return info(dtype).cuda_type;
}
std::size_t dtype_size_bytes(DType dtype) {
  return info(dtype).size_bytes;
}

std::string dtype_name_list() {
  std::string out;
  for (const auto& entry : kDTypes) {
    if (!out.empty()) out += ", ";
    out += entry.name;
  }
  return out;
}

}  // namespace ptxb
