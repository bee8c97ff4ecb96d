#include "runner/candidate_library.h"

#include <dlfcn.h>

#include <cstring>

namespace ptxb {
namespace {

// Longest ABI declaration we accept from the candidate's ptxbench_abi_signature(); the real ones
// are a few hundred bytes. Bounded so a corrupt pointer cannot make us copy megabytes.
constexpr std::size_t kMaxSignatureBytes = 4096;

}  // namespace

CandidateLibrary::~CandidateLibrary() {
  // No dlclose: the candidate may have started threads or registered CUDA callbacks that still
  // point into its code; unmapping it would turn a leak into a crash. The runner process ends
  // soon after anyway.
}

Status CandidateLibrary::load(const std::string& so_path, const std::string& expected_signature) {
  if (handle_ != nullptr) return make_error("load", "a candidate is already loaded in this runner");
  ::dlerror();
  void* handle = ::dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return make_error("load", "dlopen({}): {}", so_path, why != nullptr ? why : "unknown error");
  }
  handle_ = handle;
  auto* invoke = reinterpret_cast<InvokeFunction>(::dlsym(handle, "ptxbench_invoke"));
  using SignatureFunction = const char* (*)();
  auto* signature_fn =
      reinterpret_cast<SignatureFunction>(::dlsym(handle, "ptxbench_abi_signature"));
  if (invoke == nullptr || signature_fn == nullptr) {
    return make_error("load", "{}: missing {} (not built by the PTXBench compile stage?)", so_path,
                      invoke == nullptr ? "ptxbench_invoke" : "ptxbench_abi_signature");
  }
  const char* signature = signature_fn();
  if (signature == nullptr)
    return make_error("load", "{}: ptxbench_abi_signature() returned null", so_path);
  signature_.assign(signature, ::strnlen(signature, kMaxSignatureBytes));
  if (!expected_signature.empty() && signature_ != expected_signature) {
    return make_error("abi_mismatch", "{}: ABI signature '{}' differs from the expected '{}'",
                      so_path, signature_, expected_signature);
  }
  auto layout = parse_param_layout(signature_);
  if (!layout.ok()) return layout.error().with_context(so_path);
  layout_ = std::move(layout).value();
  invoke_ = invoke;
  // Looked up through the candidate's handle: its own dependency tree, so the runtime it links.
  // cudaError_t is an enum with int as its underlying type.
  last_error_ = reinterpret_cast<int (*)()>(::dlsym(handle, "cudaGetLastError"));
  return ok_status();
}

}  // namespace ptxb
