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
  const std::string& signature() const { return signature_; }
  const std::vector<ParamSlot>& layout() const { return layout_; }

 private:
  void* handle_ = nullptr;
  InvokeFunction invoke_ = nullptr;
  std::string signature_;
  std::vector<ParamSlot> layout_;
};

}  // namespace ptxb
