// Loading a candidate's shared object (the compile stage's trampoline ABI, docs/compile.md):
//   extern "C" void ptxbench_invoke(void* const* params);
//   extern "C" const char* ptxbench_abi_signature();   // RunSignature::declaration()
// dlopen(RTLD_NOW | RTLD_LOCAL): every undefined symbol is resolved up front (a missing one is a
// load error, not a crash mid-call) and the candidate's symbols never interpose on the runner's.
// Static initialisers of the candidate run inside dlopen, so the caller wraps load() in a
// CandidatePhase (module_watch.h).
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "protocol/param_layout.h"

namespace ptxb {

using InvokeFunction = void (*)(void* const* params);

class CandidateLibrary {
 public:
  CandidateLibrary() = default;
  ~CandidateLibrary();  // deliberately does not dlclose (see .cc)
  CandidateLibrary(const CandidateLibrary&) = delete;
  CandidateLibrary& operator=(const CandidateLibrary&) = delete;

  // Opens `so_path`, resolves the ABI symbols and, when `expected_signature` is non-empty,
  // requires ptxbench_abi_signature() to equal it exactly.
  Status load(const std::string& so_path, const std::string& expected_signature);

  bool loaded() const { return invoke_ != nullptr; }
  InvokeFunction invoke() const { return invoke_; }
  // The candidate's CUDA runtime's last error (and clears it), 0 when it has none. The runner
  // links cudart statically and the candidate the shared libcudart (-cudart shared): two runtime
  // instances, each with its own per-thread last error, so a launch the candidate's runtime
  // refused (too many threads, too much dynamic shared memory) is only visible through its own
  // cudaGetLastError. Diagnostic only: it names the error of a call in which no kernel ran.
  int take_last_error() const { return last_error_ != nullptr ? last_error_() : 0; }
  const std::string& signature() const { return signature_; }
  const std::vector<ParamSlot>& layout() const { return layout_; }

 private:
  void* handle_ = nullptr;
  InvokeFunction invoke_ = nullptr;
  int (*last_error_)() = nullptr;  // cudaGetLastError of the candidate's runtime, if it has one
  std::string signature_;
  std::vector<ParamSlot> layout_;
};

}  // namespace ptxb
