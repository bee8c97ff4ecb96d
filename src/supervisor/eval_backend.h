// The outside world of the evaluator, behind small interfaces so that every status path is
// unit-tested with fakes (tests/eval/evaluator_test.cc) and the real GPU code stays thin:
//   EvalDevice      the supervisor's own GPU work: buffers, inputs, references, comparison
//                   (trusted; real implementation: supervisor/device/eval_device.h)
//   RunnerSession   one spawned ptxbench-runner process (real: RunnerClient)
//   RunnerLauncher  spawns runner sessions for the candidate and for the reference library
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "env/gpu_probe.h"
#include "eval/device_facts.h"
#include "eval/eval_types.h"
#include "protocol/protocol.h"
#include "supervisor/runner_client.h"
#include "tasks/task.h"

namespace ptxb {

// Facts from the NVML/driver probe plus datasheet numbers NVML does not report: dense bf16
// tensor-core FLOP per clock per SM (sm_90: 4096 = 989.4 TFLOP/s / (132 SMs x 1830 MHz) for the
// H100 SXM datasheet; sm_100: 8192) and HBM bandwidth by product name (H200 4.8 TB/s, H100 SXM
// 3.35 TB/s, B200 8 TB/s). Unknown GPUs get 0, which disables that half of the floor.
DeviceFacts device_facts_from_probe(const GpuInfo& gpu);

// Poison trials from here on get a pattern drawn from the trial number (cuda/input_gen.h
// kVariedPoisonFrom, checked equal in eval_device.cc).
inline constexpr int kSecretPoisonTrialBase = 1024;

class EvalDevice {
 public:
  virtual ~EvalDevice() = default;

  virtual Result<DeviceFacts> facts() = 0;
  // Allocates one input/output set per seed for the task's workload, generates the inputs and
  // the reference outputs (kept private to this process). Backward tasks derive O and L with the
  // reference forward on the same Q, K, V.
  virtual Status setup(const Task& task, const std::vector<std::uint64_t>& set_seeds) = 0;
  // Fresh inputs (and reference outputs) for one set, in place (anti-caching, design.md §3.4).
  virtual Status regenerate(int set, std::uint64_t seed) = 0;
  // Rewrites one block of 1/256 of each generated input of the set in place (offset from the
  // seed) and recomputes the reference: a cache keyed by a sample of the values misses it.
  virtual Status perturb(int set, std::uint64_t seed) = 0;
  // IPC handles of every set's inputs and outputs, and the parameter list of each set.
  virtual Result<BindRequest> bind_request() = 0;
  // Fills the set's outputs with trial `trial`'s poison pattern. Trials from
  // kSecretPoisonTrialBase on draw the pattern's NaN payload from the trial number.
  virtual Status poison(int set, int trial) = 0;
  // Order-sensitive hash of the set's inputs (the "inputs unchanged" check).
  virtual Result<std::uint64_t> input_hash(int set) = 0;
  // The same over the set's outputs as the candidate left them (the cached-output check).
  virtual Result<std::uint64_t> output_hash(int set) = 0;
  // Compares every output of the set with its reference (trial's poison counted).
  virtual Result<std::vector<OutputCheck>> check(int set, int trial) = 0;
  // The check of a batch output (stage_bound.cc): whether the call computed its outputs, not
  // the correctness verdict, which the correctness calls gave. Differs from check() only where
  // the verdict needs a slow second reference (attention backward's exact gradients for a
  // near-miss): a near-miss output — every element finite, no poison left, at most 0.1 % off
  // the library — is accepted without it. Skipping 0.1 % of the work cannot move a time by the
  // bound's 5 % margin, and the exact gradients per fresh batch set cost 0.1-0.2 s each.
  virtual Result<std::vector<OutputCheck>> check_batch_output(int set, int trial) {
    return check(set, trial);
  }
  // Full-write check: observe the set's outputs after a call made on `trial`'s poison; after
  // two observations with different poisons, unwritten() reports elements equal to both.
  virtual Status observe_unwritten(int set, int trial) = 0;
  virtual Result<std::vector<std::pair<std::string, std::int64_t>>> unwritten(int set) = 0;
  // Backend name, library versions, engine/algorithm used for this workload.
  virtual ReferenceRecord reference_description() = 0;

  // The batch bound's snapshot (docs/integrity.md): prepare() picks, from `secret`, a sample of
  // blocks of every output of `sets` (before the bracket starts); take() copies them into
  // private memory and synchronizes (it ends the bracket); changed() copies them again and
  // counts the blocks that differ from the snapshot: outputs written after the runner replied.
  virtual Status snapshot_prepare(const std::vector<int>& sets, std::uint64_t secret) = 0;
  virtual Status snapshot_take() = 0;
  virtual Result<std::int64_t> snapshot_changed() = 0;
  // The GPU's total energy counter in millijoules (NVML, device-wide; eval/energy.h).
  virtual Result<std::uint64_t> energy_mj() {
    return make_error("energy", "this device has no energy counter");
  }
};

class RunnerSession {
 public:
  virtual ~RunnerSession() = default;
  virtual Result<HelloReply> hello(std::chrono::milliseconds timeout) = 0;
  virtual Result<LoadReply> load(const LoadRequest& request, std::chrono::milliseconds timeout) = 0;
  virtual Result<BindReply> bind(const BindRequest& request, std::chrono::milliseconds timeout) = 0;
  virtual Result<CallReply> call(const CallRequest& request, std::chrono::milliseconds timeout,
                                 CallBracket* bracket) = 0;
  virtual Result<BatchReply> batch(const BatchRequest& request,
                                   std::chrono::milliseconds timeout) = 0;
  virtual Status shutdown(std::chrono::milliseconds timeout) = 0;
  virtual void kill() = 0;
  virtual RunnerExit wait(std::chrono::milliseconds timeout) = 0;
  virtual std::string log() const = 0;
  // The runner's pid (-1 when not a local process, as in test fakes).
  virtual pid_t process_id() const { return -1; }
};

enum class RunnerRole { kCandidate, kReference };

class RunnerLauncher {
 public:
  virtual ~RunnerLauncher() = default;
  // kReference sessions load the reference library; `reference_selector` tells it which backend
  // ("cudnn_sdpa_fwd:causal") and `signature` which ABI to report. `sandbox_prefix` is the
  // ptxbench-sandbox command line the runner is started under (supervisor/eval_sandbox.h); empty
  // only with --unsafe-no-sandbox.
  virtual Result<std::unique_ptr<RunnerSession>> spawn(
      RunnerRole role, const std::string& reference_selector, const std::string& signature,
      const std::vector<std::string>& sandbox_prefix) = 0;
  // A runner started under a tool (the profile stage's ncu): `wrapper_argv` (the sandbox
  // prefix with the tool's command line) before the runner, `runner_args` after its channel
  // flag, and up to `log_cap_bytes` of output kept (the tool's report is in it). The default
  // refuses, which leaves the dynamic check "unknown".
  virtual Result<std::unique_ptr<RunnerSession>> spawn_wrapped(
      RunnerRole role, const std::string& reference_selector, const std::string& signature,
      const std::vector<std::string>& wrapper_argv, const std::vector<std::string>& runner_args,
      std::size_t log_cap_bytes);
};

// PTXBENCH_REFERENCE=selector and PTXBENCH_REFERENCE_SIGNATURE=signature: how a process that
// loads libptxbench_reference.so (a reference runner, or a profiler run in A/A mode) learns
// which backend and ABI to present.
std::vector<std::string> reference_variables(const std::string& selector,
                                             const std::string& signature);
// Our environment plus reference_variables().
std::vector<std::string> reference_environment(const std::string& selector,
                                               const std::string& signature);

// RunnerSession over a real RunnerClient.
class ClientRunnerSession final : public RunnerSession {
 public:
  explicit ClientRunnerSession(std::unique_ptr<RunnerClient> client) : client_(std::move(client)) {}
  Result<HelloReply> hello(std::chrono::milliseconds timeout) override {
    return client_->hello(timeout);
  }
  Result<LoadReply> load(const LoadRequest& request, std::chrono::milliseconds timeout) override {
    return client_->load(request, timeout);
  }
  Result<BindReply> bind(const BindRequest& request, std::chrono::milliseconds timeout) override {
    return client_->bind(request, timeout);
  }
  Result<CallReply> call(const CallRequest& request, std::chrono::milliseconds timeout,
                         CallBracket* bracket) override {
    return client_->call(request, timeout, bracket);
  }
  Result<BatchReply> batch(const BatchRequest& request,
                           std::chrono::milliseconds timeout) override {
    return client_->batch(request, timeout);
  }
  Status shutdown(std::chrono::milliseconds timeout) override { return client_->shutdown(timeout); }
  void kill() override { client_->kill(); }
  RunnerExit wait(std::chrono::milliseconds timeout) override { return client_->wait(timeout); }
  std::string log() const override { return client_->log(); }
  pid_t process_id() const override { return client_->pid(); }

 private:
  std::unique_ptr<RunnerClient> client_;
};

// Spawns build/ptxbench-runner; reference sessions get PTXBENCH_REFERENCE and
// PTXBENCH_REFERENCE_SIGNATURE in their environment (read by libptxbench_reference.so).
class ProcessRunnerLauncher final : public RunnerLauncher {
 public:
  explicit ProcessRunnerLauncher(std::string runner_path) : runner_path_(std::move(runner_path)) {}
  Result<std::unique_ptr<RunnerSession>> spawn(
      RunnerRole role, const std::string& reference_selector, const std::string& signature,
      const std::vector<std::string>& sandbox_prefix) override;
  Result<std::unique_ptr<RunnerSession>> spawn_wrapped(RunnerRole role,
                                                       const std::string& reference_selector,
                                                       const std::string& signature,
                                                       const std::vector<std::string>& wrapper_argv,
                                                       const std::vector<std::string>& runner_args,
                                                       std::size_t log_cap_bytes) override;

 private:
  std::string runner_path_;
};

}  // namespace ptxb
