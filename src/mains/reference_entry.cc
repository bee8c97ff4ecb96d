// libptxbench_reference.so: the frontier-library references (references/reference.h) behind the
// same exported ABI as a compiled candidate (compile/trampoline.cc), so ptxbench-runner loads,
// binds, calls and times a reference exactly like a candidate (design.md §3.4: "the same code path
// times candidate and reference").
//
// The runner protocol has no reference-specific message: the supervisor selects the backend
// through the environment of the reference runner it spawns:
//   PTXBENCH_REFERENCE            "cublaslt_gemm" | "cudnn_sdpa_fwd[:causal]" |
//                                 "cudnn_sdpa_bwd[:causal]" | "flashinfer_gqa_<layout>[:causal]"
//                                 (any make_reference() name), then optionally
//                                 "@pin=MxNxK:H;..." (protocol/reference_selector.h: cuBLASLt's
//                                 heuristic candidate per shape, chosen by the supervisor)
//   PTXBENCH_REFERENCE_SIGNATURE  the task's `run` declaration (the runner builds params from it)
// The first call prepares the backend for the call's shape (plans, algorithm selection); that
// happens inside a warm-up call, never a timed one. A failure aborts the process with the
// message on stderr: the supervisor reports it as an INFRA_ERROR with the runner's log.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "protocol/reference_selector.h"
#include "references/cublaslt_gemm.h"
#include "references/reference.h"

namespace {

std::unique_ptr<ptxb::gpu::ReferenceBackend>& backend() {
  static std::unique_ptr<ptxb::gpu::ReferenceBackend> instance;
  return instance;
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "libptxbench_reference: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void ptxbench_invoke(void* const* params) {
  auto& instance = backend();
  if (!instance) {
    const char* selector = std::getenv("PTXBENCH_REFERENCE");
    if (selector == nullptr) die("PTXBENCH_REFERENCE is not set");
    auto parsed = ptxb::parse_reference_selector(selector);
    if (!parsed.ok()) die(parsed.error().message);
    auto made = ptxb::gpu::make_reference(parsed->backend, parsed->causal);
    if (!made.ok()) die(made.error().message);
    instance = std::move(made).value();
    if (!parsed->pins.empty()) {
      auto* gemm = dynamic_cast<ptxb::gpu::CublasLtGemm*>(instance.get());
      if (gemm == nullptr) die("pins given for " + parsed->backend + ", which is not cuBLASLt");
      for (const ptxb::GemmPin& pin : parsed->pins)
        gemm->pin(ptxb::gpu::GemmShape{pin.m, pin.n, pin.k}, pin.heuristic_index);
    }
  }
  // A lookup once prepared; GQA backends plan from the call's index arrays here (their plan
  // depends on the request lengths, not only on the axes).
  if (auto prepared = instance->prepare_call(params); !prepared.ok()) die(prepared.error().message);
  // Once: what this process chose (cuBLASLt autotunes per process), for the supervisor's record.
  static bool described = false;
  if (!described) {
    described = true;
    const std::string line = std::string(ptxb::kPreparedLinePrefix) + instance->describe().dump();
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  }
  if (auto invoked = instance->invoke(params); !invoked.ok()) die(invoked.error().message);
}

extern "C" __attribute__((visibility("default"))) const char* ptxbench_abi_signature() {
  static const std::string signature = [] {
    const char* value = std::getenv("PTXBENCH_REFERENCE_SIGNATURE");
    return std::string(value != nullptr ? value : "");
  }();
  return signature.c_str();
}
