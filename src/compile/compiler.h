// compile_solution: the first stage of every evaluation, and the whole of it without a GPU.
//
//   validate source (size, UTF-8 text)  ->  cache lookup  ->  nvcc -c kernel.cu (ptxas -v, kept
//   preprocessed files and PTX)  ->  header allow-list  ->  nvcc -shared kernel.o trampoline.cpp
//   ->  undefined-symbol allow-list + `run` check  ->  cuobjdump -xelf / -sass of the .so  ->
//   ptxas report, SASS families and static verdict, PTX family counts  ->  publish to the cache.
//
// Candidate code is only compiled and read, never loaded or executed here (no dlopen: static
// constructors would run in the trusted process).
#pragma once

#include "compile/compile_types.h"
#include "compile/toolchain.h"
#include "core/result.h"

namespace ptxb {

// -gencode value for an architecture: "sm_90a" -> "arch=compute_90a,code=sm_90a". Fails for an
// architecture PTXBench does not target.
Result<std::string> gencode_for_arch(const std::string& arch);

// The candidate's compile command (cwd = build dir) and the link command, exactly as run.
std::vector<std::string> nvcc_compile_command(const ToolchainInfo& toolchain,
                                              const CompileRequest& request,
                                              const std::string& gencode);
std::vector<std::string> nvcc_link_command(const ToolchainInfo& toolchain,
                                           const std::string& gencode);

// Parses nvcc/EDG ("kernel.cu(12): error: ...") and host compiler ("kernel.cu:12:5: error: ...")
// diagnostics out of a compile log.
std::vector<SourceDiagnostic> parse_source_diagnostics(std::string_view log);

// Errors (Result error) are infrastructure failures: missing tools, unwritable cache, a tool
// that crashed. A bad candidate is a successful call with status COMPILE_ERROR or FORBIDDEN.
Result<CompileResult> compile_solution(const CompileRequest& request, const Toolchain& toolchain);

// The service's half of the compile split (docs/service.md "Compile split"): a kernel.so (and
// its PTX) built by a client. Nothing the client said about it is used: the binary must come from
// this machine's CUDA release; the undefined-symbol allow-list and the `run` contract, the cubin
// extraction and the SASS analysis run here on the uploaded bytes, exactly as after a compile
// (same code). The header allow-list is a check of the preprocessed source and cannot be re-run
// without compiling: for a binary, the symbol allow-list is what keeps libraries out. The result
// is cached like a compile (key: the bytes, the source, the signature, the tools).
struct PrebuiltBinary {
  std::string shared_object;  // kernel.so bytes
  std::string ptx;            // kernel.ptx text (the static analysis reads its .entry lines)
  std::string nvcc_version;   // of the toolchain that built it, "13.0.88"
};
Result<CompileResult> analyse_prebuilt(const CompileRequest& request, const PrebuiltBinary& binary,
                                       const Toolchain& toolchain);

}  // namespace ptxb
