#include "trace/safetensors.h"

#include <fstream>
#include <optional>

#include "core/json_io.h"

namespace ptxb {
namespace {

// A header is a small JSON object; anything larger than this is not a workload index file.
constexpr std::uint64_t kMaxHeaderBytes = std::uint64_t{100} << 20;

}  // namespace

std::int64_t SafetensorsTensor::elements() const {
  std::int64_t count = 1;
  for (std::int64_t d : shape) count *= d;
  return count;
}

std::optional<DType> safetensors_dtype(std::string_view name) {
  if (name == "BF16") return DType::kBFloat16;
  if (name == "F16") return DType::kFloat16;
  if (name == "F32") return DType::kFloat32;
  if (name == "I32") return DType::kInt32;
  if (name == "I64") return DType::kInt64;
  if (name == "F8_E4M3") return DType::kFloat8E4M3;
  if (name == "BOOL") return DType::kBool;
  return std::nullopt;
}

Result<SafetensorsTensor> read_safetensors_tensor(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return make_error("io", "{}: cannot open", path);
  const auto file_bytes = static_cast<std::uint64_t>(in.tellg());
  in.seekg(0);
  unsigned char length[8] = {};
  in.read(reinterpret_cast<char*>(length), 8);
  std::uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = header_bytes << 8 | length[i];  // little-endian
  if (!in || header_bytes > kMaxHeaderBytes || 8 + header_bytes > file_bytes)
    return make_error("parse", "{}: not a safetensors file (header length {})", path, header_bytes);
  std::string header(header_bytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_bytes));
  const Json json = Json::parse(header, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return make_error("parse", "{}: the header is not a JSON object", path);
  const auto entry = json.find(key);
  if (entry == json.end() || !entry->is_object())
    return make_error("parse", "{}: no tensor '{}'", path, key);
  const Json& dtype = (*entry)["dtype"];
  const Json& shape = (*entry)["shape"];
  const Json& offsets = (*entry)["data_offsets"];
  if (!dtype.is_string() || !shape.is_array() || !offsets.is_array() || offsets.size() != 2 ||
      !offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
    return make_error("parse", "{}: tensor '{}' lacks dtype, shape or data_offsets", path, key);
  SafetensorsTensor tensor;
  const auto parsed = safetensors_dtype(dtype.get<std::string>());
  if (!parsed)
    return make_error("parse", "{}: tensor '{}' has unsupported dtype {}", path, key,
                      dtype.get<std::string>());
  tensor.dtype = *parsed;
  for (const Json& d : shape) {
    if (!d.is_number_unsigned()) return make_error("parse", "{}: '{}' has a bad shape", path, key);
    tensor.shape.push_back(d.get<std::int64_t>());
  }
  const auto begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
  const auto expected =
      static_cast<std::uint64_t>(tensor.elements()) * dtype_size_bytes(tensor.dtype);
  if (end < begin || end - begin != expected || 8 + header_bytes + end > file_bytes)
    return make_error("parse", "{}: tensor '{}' data_offsets [{}, {}) do not hold {} bytes", path,
                      key, begin, end, expected);
  tensor.bytes.resize(expected);
  in.seekg(static_cast<std::streamoff>(8 + header_bytes + begin));
  in.read(tensor.bytes.data(), static_cast<std::streamsize>(expected));
  if (!in) return make_error("io", "{}: tensor '{}' is truncated", path, key);
  return tensor;
}

}  // namespace ptxb
