// The --params-json file of the runner's self-contained mode (docs/runner.md "Self-contained
// mode"): the runner allocates its own inputs for exactly one call, for Nsight Compute and
// compute-sanitizer (design.md §3.3 last bullet). No IPC, no reference, no verdict.
//
//   {"signature": "void run(...)",          // optional: checked like `load`
//    "seed": 42,                            // host PRNG seed for "normal" tensors
//    "warmup_calls": 0,                     // unprofiled calls first (optional)
//    "params": [                            // every run parameter except the stream, in order
//      {"name": "A", "tensor": {"dtype": "bfloat16", "elements": 41943040, "init": "normal"}},
//      {"name": "C", "tensor": {"dtype": "bfloat16", "elements": 58720256, "init": "zeros"}},
//      {"name": "kv_indptr", "tensor": {"dtype": "int32", "elements": 5, "init": "data",
//                                       "data_hex": "00000000..."}},  // exact bytes
//      {"name": "M", "i64": 8192}]}          // by-value: i64 | i32 | f32 | bool | raw_hex
//
// Plain C++ (parsing and host-side value generation) so it is unit-tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "protocol/protocol.h"

namespace ptxb {

// Not "TensorSpec": that name is the definition's tensor (trace/definition.h), and two different
// types of one name in namespace ptxb break the one-definition rule (a Release build crashed in
// the wrong destructor).
struct SelfContainedTensor {
  std::string dtype;  // FlashInfer-Trace dtype name: bfloat16, float16, float32, int32, int64, ...
  std::uint64_t elements = 0;
  // "normal": N(0,1) (float dtypes only); "zeros"; "data": exactly the bytes of "data_hex"
  // (a workload constant such as the GQA tasks' index arrays, which random values would break).
  std::string init;
  std::string data;  // init "data": elements x element size bytes, decoded from data_hex
};

struct SelfContainedParam {
  std::string name;
  std::optional<SelfContainedTensor> tensor;  // set: a device buffer; else `scalar`
  ParamValue scalar;
};

struct SelfContainedSpec {
  std::string signature;  // empty: not checked
  std::uint64_t seed = 0;
  // Calls made before the profiled one (outside cudaProfilerStart/Stop): a library reference
  // builds its plans on its first call, which must not be what the profiler measures.
  std::uint64_t warmup_calls = 0;
  std::vector<SelfContainedParam> params;
};

// Per-tensor cap: the largest paper workload tensor is 192 MiB; 16 GiB rejects typos (an
// element count in bytes, an extra digit) before they reach cudaMalloc.
inline constexpr std::uint64_t kMaxSelfContainedTensorBytes = 16ull << 30;

Result<SelfContainedSpec> self_contained_spec_from_json(const Json& json);

// Bytes per element of a dtype, 0 if unknown.
std::size_t dtype_element_bytes(const std::string& dtype);

// The host bytes of parameter `index`'s tensor: deterministic per (seed, index), little-endian.
Result<std::string> generate_tensor_bytes(const SelfContainedTensor& tensor, std::uint64_t seed,
                                          std::size_t index);

// Round-to-nearest-even conversions used for the bf16/f16 values above.
std::uint16_t float_to_bf16_bits(float value);
std::uint16_t float_to_f16_bits(float value);

}  // namespace ptxb
