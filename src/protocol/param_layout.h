// The storage layout of `run`'s parameters, read back from the ABI declaration the candidate's
// ptxbench_abi_signature() returns (RunSignature::declaration(), design.md §3.2), and the check
// that an input set supplies a value of the right shape for each of them.
//
// The runner builds `void* params[]` for ptxbench_invoke from this layout: params[i] points to
// storage holding the i-th argument (a device pointer, or a by-value scalar's bytes), the last
// to the runner's cudaStream_t. A size mismatch here would make the trampoline read past a slot,
// so every by-value type must have a known size.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/result.h"
#include "protocol/protocol.h"

namespace ptxb {

struct ParamSlot {
  std::string type;  // "const __nv_bfloat16*", "int64_t", "cudaStream_t"
  std::string name;
  bool is_pointer = false;
  bool is_stream = false;
  std::size_t value_bytes = 0;  // by-value size; 8 for pointers and the stream
};

// Parses "void run(T0 n0, T1 n1, ..., cudaStream_t stream)". The last parameter must be the
// stream; every other must be a pointer or a known by-value type (int64_t, int32_t, float,
// __nv_bfloat16, __half, __nv_fp8_e4m3, bool).
Result<std::vector<ParamSlot>> parse_param_layout(const std::string& declaration);

// Size of a by-value ABI type, 0 if unknown.
std::size_t abi_value_bytes(const std::string& type);

// A set supplies every parameter except the trailing stream, pointers as buffers and by-value
// parameters as storage of exactly value_bytes.
Status check_set_against_layout(const std::vector<ParamSlot>& layout,
                                const std::vector<ParamValue>& set);

}  // namespace ptxb
