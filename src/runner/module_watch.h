// CUPTI resource callbacks: every CUDA module loaded in the runner is hashed (design.md §3.3: "any
// module that is not the analysed cubin is FORBIDDEN runtime_module" — the verdict is the
// supervisor's; the runner reports hashes).
//
// How the runner's own modules are told apart: by *who loads them*, not by hash. The runner has
// no kernels of its own (its L2 flush is a cudaMemsetAsync), but the driver or runtime may load
// internal modules during the runner's set-up. A module is origin "runner" when it is loaded on
// the runner's main thread while no candidate code is on the stack; it is origin "candidate"
// when loaded during the candidate's dlopen, during a call (from ptxbench_invoke up to its
// return), or from any other thread (only candidate code creates threads). Candidate modules
// are compared with the expected SHA-256 list of the `load` request.
//
// Uses the one CUPTI subscriber a process may have (cuptiSubscribe), so it is a singleton.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/result.h"
#include "protocol/protocol.h"

namespace ptxb {

class ModuleWatch {
 public:
  static ModuleWatch& instance();

  // Subscribes and enables CUPTI_CBID_RESOURCE_MODULE_LOADED. Call on the runner's main thread.
  Status start();
  // Hashes of the cubins a candidate may load; empty switches the check off (references).
  void set_expected(std::vector<std::string> sha256_hex);
  // True while candidate code runs on the main thread (dlopen, ptxbench_invoke).
  void set_candidate_phase(bool in_candidate) { in_candidate_.store(in_candidate); }

  // Modules loaded since the previous take (origin and expectation filled in).
  std::vector<ModuleInfo> take_new();
  // Every module seen so far.
  std::vector<ModuleInfo> all() const;

  static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                                   const void* data);

 private:
  ModuleWatch() = default;
  void record(std::uint32_t module_id, const char* cubin, std::size_t bytes);

  mutable std::mutex mutex_;
  std::vector<ModuleInfo> modules_;
  std::size_t taken_ = 0;
  std::vector<std::string> expected_;
  std::atomic<bool> in_candidate_{false};
  std::thread::id main_thread_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
};

// RAII: marks the main thread as running candidate code.
class CandidatePhase {
 public:
  CandidatePhase() { ModuleWatch::instance().set_candidate_phase(true); }
  ~CandidatePhase() { ModuleWatch::instance().set_candidate_phase(false); }
  CandidatePhase(const CandidatePhase&) = delete;
  CandidatePhase& operator=(const CandidatePhase&) = delete;
};

}  // namespace ptxb
