// The supervisor's GPU side of an evaluation (supervisor/eval_backend.h EvalDevice), on the real
// GPU.
//
// Owns every tensor of every input set (exported to the runner by CUDA IPC), the reference
// outputs (never exported: they exist only in this trusted process, design.md §3.3), the
// comparison and the full-write trackers. All work runs on one private stream and is
// synchronized before a method returns, so no supervisor GPU work overlaps a timed call.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "abi/signature.h"
#include "cuda/device_buffer.h"
#include "env/nvml_energy.h"
#include "references/reference.h"
#include "supervisor/device/compare.h"
#include "supervisor/device/output_snapshot.h"
#include "supervisor/eval_backend.h"

namespace ptxb::gpu {

class GpuEvalDevice final : public EvalDevice {
 public:
  static Result<std::unique_ptr<GpuEvalDevice>> create();
  ~GpuEvalDevice() override;

  Result<DeviceFacts> facts() override;
  Status setup(const Task& task, const std::vector<std::uint64_t>& set_seeds) override;
  Status regenerate(int set, std::uint64_t seed) override;
  Status perturb(int set, std::uint64_t seed) override;
  Result<BindRequest> bind_request() override;
  Status poison(int set, int trial) override;
  Result<std::uint64_t> input_hash(int set) override;
  Result<std::uint64_t> output_hash(int set) override;
  Result<std::vector<OutputCheck>> check(int set, int trial) override;
  Result<std::vector<OutputCheck>> check_batch_output(int set, int trial) override;
  Result<std::uint64_t> energy_mj() override;
  Status observe_unwritten(int set, int trial) override;
  Result<std::vector<std::pair<std::string, std::int64_t>>> unwritten(int set) override;
  ReferenceRecord reference_description() override;
  Status snapshot_prepare(const std::vector<int>& sets, std::uint64_t secret) override;
  Status snapshot_take() override;
  Result<std::int64_t> snapshot_changed() override;

 private:
  GpuEvalDevice() = default;
  // check() with the exact-gradient fallback for near-misses, check_batch_output() without.
  Result<std::vector<OutputCheck>> check_outputs(int set, int trial, bool exact_fallback);

  struct Tensor {
    std::string name;
    DType dtype = DType::kBFloat16;
    std::int64_t elements = 0;
    bool is_output = false;
    bool derived = false;  // backward tasks: O and L come from the reference forward
    // A workload constant read from a safetensors file (the GQA index arrays): written once at
    // setup, never regenerated or perturbed (random request boundaries are no workload).
    bool fixed = false;
    DeviceBuffer buffer;
    DeviceBuffer reference;  // outputs only: the reference's answer for this set's inputs
    DeviceBuffer cross;      // outputs only, attention backward: exact-math fp32 gradients
    std::optional<UnwrittenTracker> unwritten;
  };
  struct Set {
    std::uint64_t seed = 0;
    std::vector<Tensor> tensors;  // signature order (inputs, then outputs)
    bool cross_ready = false;     // `cross` buffers hold this set's exact gradients
  };

  Status generate(Set& set);
  // The derived inputs (backward O, L) and the reference outputs of a set whose generated
  // inputs are in place; synchronized.
  Status derive_and_reference(Set& set);
  // Order-sensitive hash of the set's inputs or of its outputs.
  Result<std::uint64_t> tensors_hash(Set& set, bool outputs);
  // Attention backward: the plain fp32 gradients of `set` into the outputs' `cross` buffers
  // (computed on the first near-miss of a set, then kept until the set is regenerated).
  Status compute_cross(Set& set);
  Tensor* find(Set& set, const std::string& name);
  // params[] for a reference invoke() on `set`, with `use_reference_outputs` choosing the
  // private reference buffers or the exported ones as outputs.
  std::vector<void*> reference_params(Set& set, bool use_reference_outputs,
                                      std::vector<void*>& storage);
  Result<Set*> get(int set);
  // Loads the task's scalar values and safetensors inputs (once per setup).
  Status load_workload_constants(const Task& task);

  // The tensor and by-value scalar parameters in signature order: a tensor of each Set
  // (`tensor` >= 0, its index in Set::tensors) or a scalar's storage bytes, the same in every set.
  struct Slot {
    int tensor = -1;
    std::string scalar;
  };

  cudaStream_t stream_ = nullptr;
  const Task* task_ = nullptr;
  RunSignature signature_;
  std::vector<std::int64_t> axes_;  // signature order
  std::vector<Slot> slots_;
  std::map<std::string, std::vector<char>> fixed_inputs_;  // safetensors inputs' bytes, by name
  std::vector<Set> sets_;
  std::unique_ptr<ReferenceBackend> reference_;
  std::unique_ptr<ReferenceBackend> forward_;  // backward tasks only
  bool causal_ = false;
  OutputSnapshot snapshot_;
  std::optional<NvmlEnergy> energy_;  // opened on first use
};

}  // namespace ptxb::gpu
