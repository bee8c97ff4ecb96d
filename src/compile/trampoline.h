// The generated binding between the GPU runner and a candidate (design.md §3.2: "the harness
// generates the extern \"C\" trampoline; the model never writes binding code").
//
// ABI of the shared object (docs/compile.md):
//   extern "C" void ptxbench_invoke(void* const* params);
//       params[i] points to the storage of the i-th parameter of `run`, in signature order
//       (inputs, outputs, axes, then the cudaStream_t), like cuLaunchKernel's kernelParams.
//   extern "C" const char* ptxbench_abi_signature();   // RunSignature::declaration()
//   extern "C" int ptxbench_abi_parameter_count();
// The trampoline is its own translation unit and only *declares* `run` with C++ linkage, so a
// candidate whose `run` is missing or has another signature leaves the mangled reference
// undefined in the .so; the compile stage reports that as "kernel.cu must define `...`".
#pragma once

#include <string>
#include <vector>

#include <string>

#include "abi/signature.h"

namespace ptxb {

inline constexpr const char* kInvokeSymbol = "ptxbench_invoke";
inline constexpr const char* kAbiSignatureSymbol = "ptxbench_abi_signature";
inline constexpr const char* kAbiParameterCountSymbol = "ptxbench_abi_parameter_count";

// The C++ source of the trampoline for `signature`.
std::string generate_trampoline(const RunSignature& signature);

// True if `symbol` is the Itanium-mangled name of a free function `run` (any parameter list):
// "_Z3run" followed by the parameter encoding.
bool is_mangled_run_symbol(const std::string& symbol);

// What a candidate whose `run` has another signature is told: the `run` functions it defines
// (mangled names from kernel.so's symbol table), demangled, each with the parameters that
// differ from the expected one: "found run(float const*, ...): parameter 1 is float const*,
// expected __nv_bfloat16 const*". "" when `found` holds no `run`.
std::string describe_run_mismatch(const std::string& expected_mangled,
                                  const std::vector<std::string>& found_mangled);

}  // namespace ptxb
