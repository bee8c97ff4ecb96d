// C++ symbol names as the tools print them: mangled in ELF symbol tables, CUPTI records and
// Nsight Compute's raw pages, demangled in cuobjdump and compute-sanitizer output. Every name
// may be the candidate's: these only read it (abi::__cxa_demangle on a copy, bounded by the
// name) and fall back to the name itself.
#pragma once

#include <string>

namespace ptxb {

// The C++ demangled form of `name`, or `name` itself if it is not a mangled name.
std::string demangle_symbol(const std::string& name);

// The bare identifier of a (mangled or demangled) function name: no namespace, template
// arguments, parameters or return type ("dk_dv_kernel" for
// "_ZN41_GLOBAL__N__966ad472_9_kernel_cu_a73ee1b812dk_dv_kernelE14CUtensorMap_st...").
std::string kernel_identifier(const std::string& name);

}  // namespace ptxb
