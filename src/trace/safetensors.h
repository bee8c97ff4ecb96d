// Reads one tensor of a safetensors file, the format FlashInfer-Trace workloads use for
// non-random inputs (`{"type": "safetensors", "path", "tensor_key"}`; the GQA tasks' index
// arrays). Layout: an 8-byte little-endian header length N, N bytes of JSON mapping each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end)} (offsets into the bytes after the
// header), then the data, row-major and little-endian.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "trace/dtype.h"

namespace ptxb {

struct SafetensorsTensor {
  DType dtype = DType::kInt32;
  std::vector<std::int64_t> shape;
  std::vector<char> bytes;  // exactly elements x dtype_size_bytes(dtype)
  std::int64_t elements() const;
};

// Every problem names the file and the key: missing file or key, a truncated file, an unknown
// dtype, data offsets outside the file or not matching shape x dtype size.
Result<SafetensorsTensor> read_safetensors_tensor(const std::string& path, const std::string& key);

// Safetensors dtype names ("BF16", "F32", "I32", ...) <-> ours; nullopt when we have none.
std::optional<DType> safetensors_dtype(std::string_view name);

}  // namespace ptxb
