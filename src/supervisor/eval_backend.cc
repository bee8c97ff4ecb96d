#include "supervisor/eval_backend.h"

#include <algorithm>

#include "core/process.h"
#include "core/strings.h"

namespace ptxb {

DeviceFacts device_facts_from_probe(const GpuInfo& gpu) {
  DeviceFacts f;
  f.name = gpu.name;
  f.sm_count = gpu.sm_count;
  f.max_sm_clock_mhz = gpu.sm_clock_max_mhz;
  f.l2_bytes = gpu.l2_cache_bytes;
  f.compute_processes = static_cast<int>(gpu.compute_processes);
  f.clock_event_reasons = gpu.clock_event_reason_names;
  f.sm_clock_mhz = gpu.sm_clock_mhz;
  if (gpu.compute_capability_major == 9) f.bf16_dense_flop_per_clock_per_sm = 4096;
  if (gpu.compute_capability_major == 10) f.bf16_dense_flop_per_clock_per_sm = 8192;
  if (contains(gpu.name, "H200"))
    f.memory_bytes_per_second = 4.8e12;
  else if (contains(gpu.name, "H100") && contains(gpu.name, "PCIe"))
    f.memory_bytes_per_second = 2.0e12;
  else if (contains(gpu.name, "H100"))
    f.memory_bytes_per_second = 3.35e12;
  else if (contains(gpu.name, "B200"))
    f.memory_bytes_per_second = 8.0e12;
  return f;
}

std::vector<std::string> reference_variables(const std::string& selector,
                                             const std::string& signature) {
  return {"PTXBENCH_REFERENCE=" + selector, "PTXBENCH_REFERENCE_SIGNATURE=" + signature};
}

std::vector<std::string> reference_environment(const std::string& selector,
                                               const std::string& signature) {
  std::vector<std::string> env;
  for (const auto& entry : current_environment())
    if (!starts_with(entry, "PTXBENCH_REFERENCE")) env.push_back(entry);
  for (auto& entry : reference_variables(selector, signature)) env.push_back(std::move(entry));
  return env;
}

Result<std::unique_ptr<RunnerSession>> RunnerLauncher::spawn_wrapped(
    RunnerRole, const std::string&, const std::string&, const std::vector<std::string>&,
    const std::vector<std::string>&, std::size_t) {
  return make_error("runner_spawn", "this launcher cannot start a runner under a tool");
}

Result<std::unique_ptr<RunnerSession>> ProcessRunnerLauncher::spawn(
    RunnerRole role, const std::string& reference_selector, const std::string& signature,
    const std::vector<std::string>& sandbox_prefix) {
  return spawn_wrapped(role, reference_selector, signature, sandbox_prefix, {}, 1u << 20);
}

Result<std::unique_ptr<RunnerSession>> ProcessRunnerLauncher::spawn_wrapped(
    RunnerRole role, const std::string& reference_selector, const std::string& signature,
    const std::vector<std::string>& wrapper_argv, const std::vector<std::string>& runner_args,
    std::size_t log_cap_bytes) {
  RunnerLaunchSpec spec;
  spec.extra_args = runner_args;
  spec.log_cap_bytes = log_cap_bytes;
  spec.runner_path = runner_path_;
  spec.wrapper_argv = wrapper_argv;
  // The reference library reads its backend and ABI from the environment: the runner's
  // protocol stays the same for candidates and references.
  if (role == RunnerRole::kReference)
    spec.env = reference_environment(reference_selector, signature);
  PTXB_ASSIGN_OR_RETURN(std::unique_ptr<RunnerClient> client, RunnerClient::spawn(spec));
  return std::unique_ptr<RunnerSession>(new ClientRunnerSession(std::move(client)));
}

}  // namespace ptxb
