// The solution ABI's `run` signature, derived mechanically from a definition (design.md §3.2):
// every input in order (`const T*`, or `T` by value for a scalar), every output in order (`T*`),
// every axis in definition order as `int64_t`, then `cudaStream_t stream`.
//
// Name clashes are resolved deterministically so that the signature is always valid C++:
// an axis that shares its name with a tensor (or with `stream`) becomes `<axis>_size`, and a
// name that is a C++ keyword gets a trailing underscore. The prompt shows the result, so the
// model sees exactly the names the harness uses.
#pragma once

#include <string>
#include <vector>

#include "trace/definition.h"

namespace ptxb {

struct AbiParameter {
  enum class Kind { kInput, kOutput, kAxis, kStream };
  Kind kind;
  std::string type;         // "const __nv_bfloat16*", "float*", "int64_t", "cudaStream_t"
  std::string name;         // C++ parameter name after disambiguation
  std::string source_name;  // tensor or axis name in the definition ("" for the stream)
  bool scalar = false;      // input passed by value
};

struct RunSignature {
  std::vector<AbiParameter> parameters;

  // "void run(const __nv_bfloat16* A, ..., cudaStream_t stream)"
  std::string declaration() const;
  // Comma-separated parameter list without the function name.
  std::string parameter_list() const;
};

RunSignature make_run_signature(const Definition& definition);

// True for C++20 keywords and alternative tokens (used for disambiguation and validation).
bool is_cpp_keyword(const std::string& word);

}  // namespace ptxb
