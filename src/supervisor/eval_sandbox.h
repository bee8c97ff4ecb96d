// How the supervisor starts untrusted processes: inside ptxbench-sandbox (design.md §3.3,
// docs/integrity.md), or — only with --unsafe-no-sandbox, recorded in the trace — without it.
//
// One EvalSandbox per evaluation. It owns the evaluation's staging directory layout: the
// directory itself is world-readable (the sandboxed uid reads the staged kernel.so and
// params.json there; the compile cache under the caller's home usually is not), and each
// sandboxed process gets its own empty `scratch-N` below it, on which the launcher mounts a
// private tmpfs. Policies per process:
//   candidate runner   seccomp "runner", the cuBLAS/cuDNN/NVRTC/nvJitLink files hidden
//   reference runner   seccomp "runner", libraries visible, PTXBENCH_REFERENCE* set
//   profiler           ncu / compute-sanitizer over the self-contained runner: seccomp
//                      "profiler" (loopback IP for the tool ↔ target connection)
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/process.h"
#include "core/result.h"
#include "eval/eval_types.h"
#include "eval/integrity_reasons.h"
#include "sandbox/blocked_syscall.h"
#include "sandbox/process_cgroup.h"
#include "sandbox/sandbox_policy.h"

namespace ptxb {

// The verdict reasons the sandbox produces are in eval/integrity_reasons.h (kSandbox*).
static_assert(reason::kSandboxSeccomp == kSandboxSeccompReason);

class EvalSandbox {
 public:
  // `staging_dir`: the evaluation's own directory (made world-readable here).
  // `reference_selector`/`signature`: what a process that loads the reference library is told
  // (eval_backend.h reference_variables).
  EvalSandbox(const SupervisorJob& job, std::string staging_dir,
              const std::string& reference_selector, const std::string& signature);
  // Ends every process tree this sandbox started (end_process_trees).
  ~EvalSandbox();
  EvalSandbox(const EvalSandbox&) = delete;
  EvalSandbox& operator=(const EvalSandbox&) = delete;

  bool enabled() const { return enabled_; }

  // Before any candidate code runs: the launcher must exist, and `ptxbench-sandbox --report`
  // run under the candidate runner's policy must show every mechanism in effect. The error's
  // message is what the evaluation's INFRA_ERROR says.
  Status self_check(ProcessRunner& tools);

  // The launcher prefix for a runner session (empty when the sandbox is off).
  Result<std::vector<std::string>> runner_prefix(bool library_in_slot);
  // The prefix for a runner started under a tool (ncu in the profile stage): the profiler
  // policy (loopback IP between the tool and its target, the tools' CPU limit), the channel fd
  // kept, then `tool_argv`. Just `tool_argv` when the sandbox is off.
  Result<std::vector<std::string>> tool_runner_prefix(bool library_in_slot,
                                                      const std::vector<std::string>& tool_argv);
  // `spec` (a profiler over the self-contained runner) wrapped in the sandbox; unchanged when
  // the sandbox is off, except that `library_in_slot` adds the reference variables.
  // After setup: the selector with the supervisor's pins (EvalOptions::pin_reference_algorithm).
  void set_reference_selector(std::string selector) { reference_selector_ = std::move(selector); }
  Result<ProcessSpec> wrap_tool(ProcessSpec spec, bool library_in_slot);
  // The debug stage's self-contained runner (it writes a CUDA core dump): the profiler policy with
  // the variables `env_for(scratch)` added, files capped at `file_size_bytes`, and a scratch
  // folder on disk rather than a tmpfs, so that the dump and the driver's pipe can be reached
  // from outside the sandbox. Its path is returned in `scratch_dir` (a folder of the staging
  // directory; without the sandbox too, where the variables are added to our environment).
  using ScratchEnv = std::function<std::vector<std::string>(const std::string& scratch_dir)>;
  Result<ProcessSpec> wrap_debug_run(ProcessSpec spec, const ScratchEnv& env_for,
                                     std::uint64_t file_size_bytes, std::string& scratch_dir);

  // cgroup.procs of the process tree the latest runner_prefix() set up; "" when the trees are
  // not in cgroups of their own (sandbox off, or the process-group fallback).
  std::string latest_group_procs() const;
  // Its directory ("" likewise).
  std::string latest_group_dir() const;

  // Kills whatever is left of every sandboxed process tree started so far and removes their
  // cgroups (sandbox/process_cgroup.h); returns how many processes were still there — after the
  // runners' shutdown, each one outlived its runner. No-op under the process-group fallback
  // (environment.sandbox.teardown says which mechanism is active).
  Result<std::size_t> end_process_trees();

  // environment.sandbox of the result: enabled, launcher, policies, self-check report.
  Json describe() const { return description_; }

 private:
  Result<SandboxPolicy> policy(bool library_in_slot, SeccompProfile profile);

  bool enabled_ = false;
  std::string launcher_;
  std::string staging_dir_;
  std::string reference_selector_;
  std::string signature_;
  std::vector<std::string> hidden_files_;
  int scratch_count_ = 0;
  CgroupSupport cgroup_support_;
  std::vector<ProcessCgroup> cgroups_;  // one per sandboxed process tree, removed at the end
  Json description_ = Json::object();
};

// The finding for a process that a sandbox mechanism ended, from how it ended and what it
// printed: SIGSYS → FORBIDDEN sandbox_seccomp:<call>; SIGXCPU → RUNTIME_ERROR
// sandbox_cpu_limit; SIGXFSZ → RUNTIME_ERROR sandbox_file_size_limit. nullopt otherwise.
std::optional<Finding> sandbox_finding(int term_signal, const std::string& log);

// A launcher that exited kSandboxExitSetupFailed with its one line in `output`: INFRA_ERROR
// sandbox_setup (nothing untrusted ran). nullopt otherwise.
std::optional<Finding> sandbox_setup_failure(int exit_code, const std::string& output);

// A profiler's output (ncu and compute-sanitizer do not die with their target: they print its
// end): the runner's blocked-call line → FORBIDDEN sandbox_seccomp:<call>.
std::optional<Finding> sandbox_finding_in_output(const std::string& output);

}  // namespace ptxb
