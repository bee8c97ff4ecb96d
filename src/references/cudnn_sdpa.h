// cuDNN SDPA references (forward with LSE, backward), causal or not, behind the
// ReferenceBackend interface. The graph itself is in cudnn_sdpa_graph.h; this layer owns the
// cuDNN handle, checks that the loaded libcudnn matches the headers, caches one built graph
// and workspace per shape, and binds the task ABI's pointers to the graph's tensors.
//
// Engine choice: heuristic mode A, first plan that builds (HEURISTICS_CHOICE) — the frontend's
// standard build path (Graph::build in its samples), i.e. cuDNN's own first choice for the
// shape, which is what framework users of cuDNN SDPA get; describe() records the plan name so a
// trace says which engine ran. If a measured latency is far from the design.md §4 frontier
// numbers, autotuning over BuildPlanPolicy_t::ALL is the knob to try (see docs/references.md).
#pragma once

#include <map>
#include <memory>

#include <cudnn.h>

#include "cuda/device_buffer.h"
#include "references/cudnn_sdpa_graph.h"
#include "references/reference.h"

namespace ptxb::gpu {

// Owns one cuDNN handle and the per-shape graphs of one direction and mask.
class CudnnSdpaPlans {
 public:
  CudnnSdpaPlans(SdpaDirection direction, bool causal) : direction_(direction), causal_(causal) {}
  ~CudnnSdpaPlans();
  CudnnSdpaPlans(const CudnnSdpaPlans&) = delete;
  CudnnSdpaPlans& operator=(const CudnnSdpaPlans&) = delete;

  Status prepare(const AttentionShape& shape, cudaStream_t stream);
  Status execute(const AttentionShape& shape, const SdpaTensors& tensors, cudaStream_t stream,
                 const std::string& backend);
  Json describe(const std::string& backend) const;

 private:
  struct Entry {
    std::unique_ptr<SdpaGraph> graph;
    DeviceBuffer workspace;
  };
  SdpaDirection direction_;
  bool causal_;
  cudnnHandle_t handle_ = nullptr;
  std::map<AttentionShape, Entry> entries_;
};

class CudnnSdpaForward final : public AttentionForwardReference {
 public:
  explicit CudnnSdpaForward(bool causal)
      : causal_(causal), plans_(SdpaDirection::kForward, causal) {}
  std::string name() const override { return "cudnn_sdpa_fwd"; }
  bool causal() const override { return causal_; }
  Status prepare_shape(const AttentionShape& shape, cudaStream_t stream) override;
  Status run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
             __nv_bfloat16* O, float* LSE, std::int64_t B, std::int64_t H, std::int64_t D,
             std::int64_t S, cudaStream_t stream) override;
  Json describe() const override;

 private:
  bool causal_;
  CudnnSdpaPlans plans_;
};

class CudnnSdpaBackward final : public AttentionBackwardReference {
 public:
  explicit CudnnSdpaBackward(bool causal)
      : causal_(causal), plans_(SdpaDirection::kBackward, causal) {}
  std::string name() const override { return "cudnn_sdpa_bwd"; }
  bool causal() const override { return causal_; }
  Status prepare_shape(const AttentionShape& shape, cudaStream_t stream) override;
  Status run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
             const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* LSE, __nv_bfloat16* dQ,
             __nv_bfloat16* dK, __nv_bfloat16* dV, std::int64_t B, std::int64_t H, std::int64_t D,
             std::int64_t S, cudaStream_t stream) override;
  Json describe() const override;

 private:
  bool causal_;
  CudnnSdpaPlans plans_;
};

// {"name": "cuDNN", "version": 91900, "version_string": "9.19.0", "header_version", "path",
//  "frontend_version"} — for the environment section of a trace.
Json cudnn_library_info();

}  // namespace ptxb::gpu
