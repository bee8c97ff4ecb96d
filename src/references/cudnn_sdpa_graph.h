// One cuDNN SDPA operation graph (forward with stats, or backward), built through the cuDNN
// frontend's C++ graph API (header-only, PyPI nvidia-cudnn-frontend 1.32; design.md §6).
//
// This header deliberately includes neither the frontend nor ptxb::Json: the frontend bundles
// its own nlohmann::json (3.11.3, vs the system's 3.11.2 behind ptxb::Json), so the frontend
// lives in exactly one translation unit (cudnn_sdpa_graph.cc) behind this small interface.
//
// Graph (both directions): bf16 I/O, fp32 intermediates and compute; Q, K, V, O, dO, dQ, dK, dV
// are [B, H, S, D] with strides {H·S·D, S·D, D, 1}; Stats is the fp32 natural-log logsumexp
// of each score row, [B, H, S, 1] with strides {H·S, S, 1, 1} (byte-identical to the task's
// contiguous LSE[B, H, S]); attention scale `scale` (1/√D for the tasks); no dropout, no bias;
// causal = the frontend's diagonal band with TOP_LEFT alignment and right bound 0 (key j is
// visible to query i iff j ≤ i), which is what set_causal_mask(true) does in 1.32.
// Build sequence, once per shape: validate → build_operation_graph → create_execution_plans
// ({HeurMode_t::A}) → check_support → build_plans(HEURISTICS_CHOICE: the first plan in
// heuristic order that builds). The chosen plan's name is recorded.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <cudnn.h>

#include "core/result.h"

namespace ptxb::gpu {

enum class SdpaDirection { kForward, kBackward };

// Device pointers for one execution. Forward reads q, k, v and writes o, stats; backward reads
// q, k, v, o, d_o, stats and writes d_q, d_k, d_v. Unused members are ignored.
struct SdpaTensors {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  void* stats = nullptr;
  const void* d_o = nullptr;
  void* d_q = nullptr;
  void* d_k = nullptr;
  void* d_v = nullptr;
};

class SdpaGraph {
 public:
  ~SdpaGraph();
  SdpaGraph(const SdpaGraph&) = delete;
  SdpaGraph& operator=(const SdpaGraph&) = delete;

  // Builds the graph and its execution plan for one shape. `handle` must be a live cuDNN handle
  // on the current device.
  static Result<std::unique_ptr<SdpaGraph>> build(cudnnHandle_t handle, SdpaDirection direction,
                                                  std::int64_t batch, std::int64_t heads,
                                                  std::int64_t seq_len, std::int64_t head_dim,
                                                  bool causal, float scale);

  // Enqueues the plan on the stream that is set on `handle` (cudnnSetStream). `workspace` must
  // hold workspace_bytes() bytes (may be null when that is 0).
  Status execute(cudnnHandle_t handle, const SdpaTensors& tensors, void* workspace) const;

  std::int64_t workspace_bytes() const;
  // cuDNN's name of the chosen engine configuration (e.g. "eng0_k2=...").
  const std::string& plan_name() const;
  // Number of execution plans the heuristic proposed (the chosen one is the first that built).
  std::int64_t candidate_plan_count() const;

 private:
  struct Impl;
  explicit SdpaGraph(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// cudnnGetVersion() of the loaded library and CUDNN_VERSION of the headers we compiled with.
struct CudnnVersions {
  std::size_t loaded = 0;
  std::size_t headers = 0;
  std::string loaded_path;  // file the cuDNN symbols came from (dladdr), or "unknown"
  int frontend_major = 0, frontend_minor = 0, frontend_patch = 0;
};
CudnnVersions cudnn_versions();

// Errors unless the loaded libcudnn has the headers' major.minor version. The message names
// both versions and the loaded file and tells the user to put the matching libcudnn first on
// LD_LIBRARY_PATH. (Patch releases within a minor version share the ABI and are accepted.)
Status check_cudnn_version();

}  // namespace ptxb::gpu
