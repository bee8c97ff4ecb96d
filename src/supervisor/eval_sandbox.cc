#include "supervisor/eval_sandbox.h"

#include <signal.h>
#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/fs.h"
#include "core/install_layout.h"
#include "core/strings.h"
#include "sandbox/blocked_syscall.h"
#include "sandbox/sandbox_report.h"
#include "supervisor/eval_backend.h"

namespace ptxb {
namespace {

// RLIMIT_CPU of a profiler's sandbox. It counts every thread of the process: the sanitizer's
// and ncu's helper threads spin while the target runs, so a 300 s wall limit can mean more CPU
// than a runner uses.
constexpr std::uint64_t kToolCpuSeconds = 1800;

// Where cuBLAS/cuDNN/NVRTC/nvJitLink can be found by a dlopen without a path or with the
// usual ones: the dynamic loader's search path and the CUDA toolkit. (A copy elsewhere, say in
// a Python environment the loader does not search, stays visible; the static symbol check and
// the runtime module check (FORBIDDEN runtime_module) still stand between it and a verdict.)
std::vector<std::string> library_dirs() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("LD_LIBRARY_PATH"))
    for (const auto& dir : split(path, ':')) dirs.push_back(dir);
  const std::string cuda = cuda_root();
  for (const std::string& dir :
       {cuda + "/lib64", cuda + "/targets/x86_64-linux/lib", std::string("/usr/local/cuda/lib64"),
        std::string("/usr/lib/x86_64-linux-gnu"), std::string("/lib/x86_64-linux-gnu"),
        std::string("/usr/lib64"), std::string("/usr/local/lib")})
    dirs.push_back(dir);
  return dirs;
}

}  // namespace

EvalSandbox::EvalSandbox(const SupervisorJob& job, std::string staging_dir,
                         const std::string& reference_selector, const std::string& signature)
    : enabled_(!job.request.options.unsafe_no_sandbox),
      launcher_(job.sandbox_path),
      staging_dir_(std::move(staging_dir)),
      reference_selector_(reference_selector),
      signature_(signature) {
  description_ = Json{{"enabled", enabled_}};
  if (!enabled_) {
    description_["why"] =
        "--unsafe-no-sandbox: untrusted code ran with the supervisor's "
        "privileges, environment and network";
    return;
  }
  // The sandboxed uid must reach the staged files; nothing in here is secret.
  ::chmod(staging_dir_.c_str(), 0755);
  hidden_files_ = forbidden_library_files(library_dirs());
  description_["launcher"] = launcher_;
  description_["hidden_files"] = hidden_files_;
  auto self_cgroup = real_cgroup_fs().read("/proc/self/cgroup");
  cgroup_support_ = probe_cgroup_support(real_cgroup_fs(), kCgroupMount,
                                         self_cgroup.ok() ? *self_cgroup : std::string());
  description_["teardown"] = cgroup_support_.describe();
}

EvalSandbox::~EvalSandbox() {
  auto ended = end_process_trees();
  if (!ended.ok())
    std::fprintf(stderr, "ptxbench: sandbox teardown: %s\n", ended.error().message.c_str());
}

Result<std::size_t> EvalSandbox::end_process_trees() {
  // A group whose kill or removal fails stays listed, so the destructor tries it again.
  std::size_t survivors = 0;
  std::vector<ProcessCgroup> left;
  Status first_error = ok_status();
  for (auto& group : cgroups_) {
    auto killed = group.kill_all(std::chrono::milliseconds(10'000));
    Status removed = killed.ok() ? group.remove() : Status(killed.error());
    if (killed.ok()) survivors += *killed;
    if (!removed.ok()) {
      left.push_back(group);
      if (first_error.ok()) first_error = removed;
    }
  }
  cgroups_ = std::move(left);
  PTXB_RETURN_IF_ERROR(first_error);
  return survivors;
}

std::string EvalSandbox::latest_group_dir() const {
  if (!enabled_ || cgroups_.empty()) return "";
  return cgroups_.back().path();
}

std::string EvalSandbox::latest_group_procs() const {
  const std::string dir = latest_group_dir();
  return dir.empty() ? dir : dir + "/cgroup.procs";
}

Result<SandboxPolicy> EvalSandbox::policy(bool library_in_slot, SeccompProfile profile) {
  SandboxPolicy p;
  p.scratch_dir = fmt::format("{}/scratch-{}", staging_dir_, scratch_count_++);
  PTXB_RETURN_IF_ERROR(make_directories(p.scratch_dir));
  ::chmod(p.scratch_dir.c_str(), 0755);
  p.seccomp = profile;
  if (cgroup_support_.usable) {
    // One group per process tree, named after the supervisor and the scratch number.
    PTXB_ASSIGN_OR_RETURN(
        ProcessCgroup group,
        ProcessCgroup::create(real_cgroup_fs(), cgroup_support_,
                              fmt::format("ptxbench-{}-{}", ::getpid(), scratch_count_ - 1),
                              p.max_processes));
    p.cgroup_dir = group.path();
    cgroups_.push_back(std::move(group));
  }
  if (library_in_slot) {
    p.set_env = reference_variables(reference_selector_, signature_);
  } else {
    p.hidden_files = hidden_files_;
  }
  return p;
}

Status EvalSandbox::self_check(ProcessRunner& tools) {
  if (!enabled_) return ok_status();
  if (launcher_.empty() || !find_executable(launcher_))
    return make_error(std::string(reason::kSandboxUnavailable),
                      "the sandbox launcher ptxbench-sandbox was not found{}; build it, or pass "
                      "--unsafe-no-sandbox to run untrusted code without a sandbox",
                      launcher_.empty() ? "" : " at " + launcher_);
  PTXB_ASSIGN_OR_RETURN(SandboxPolicy policy, policy(false, SeccompProfile::kRunner));
  ProcessSpec spec;
  spec.argv = sandbox_command(launcher_, policy, {launcher_, "--report", policy.scratch_dir});
  spec.timeout = std::chrono::milliseconds(30'000);
  auto ran = tools.run(spec);
  if (!ran.ok())
    return make_error(std::string(reason::kSandboxSetup), "ptxbench-sandbox: {}",
                      ran.error().message);
  if (!ran->succeeded()) {
    std::string why = trim(ran->stderr_text);
    if (why.empty()) why = ran->describe();
    return make_error(std::string(reason::kSandboxSetup),
                      "the sandbox could not be set up ({}): {}", ran->describe(),
                      why.substr(0, 1000));
  }
  Json report;
  try {
    report = Json::parse(ran->stdout_text);
  } catch (const std::exception& e) {
    return make_error(std::string(reason::kSandboxSetup),
                      "ptxbench-sandbox --report printed no JSON: {}", e.what());
  }
  description_["policy"] = policy.to_json();
  description_["report"] = report;
  if (auto checked = check_sandbox_report(report, namespace_ids(), policy.network_namespace,
                                          policy.ipc_namespace);
      !checked.ok())
    return Error{checked.error().message, std::string(reason::kSandboxSetup)};
  return ok_status();
}

Result<std::vector<std::string>> EvalSandbox::runner_prefix(bool library_in_slot) {
  if (!enabled_) return std::vector<std::string>{};
  PTXB_ASSIGN_OR_RETURN(SandboxPolicy p, policy(library_in_slot, SeccompProfile::kRunner));
  p.keep_fds = {0, 1, 2, 3};  // fd 3: the runner's channel (supervisor/runner_client.h)
  p.pinned_fd = 3;            // ... which candidate code may not replace with a relay
  return sandbox_command(launcher_, p, {});
}

Result<std::vector<std::string>> EvalSandbox::tool_runner_prefix(
    bool library_in_slot, const std::vector<std::string>& tool_argv) {
  if (!enabled_) return tool_argv;
  PTXB_ASSIGN_OR_RETURN(SandboxPolicy p, policy(library_in_slot, SeccompProfile::kProfiler));
  p.keep_fds = {0, 1, 2, 3};  // fd 3: the runner's channel, through the tool to the runner
  p.cpu_seconds = kToolCpuSeconds;
  return sandbox_command(launcher_, p, tool_argv);
}

Result<ProcessSpec> EvalSandbox::wrap_tool(ProcessSpec spec, bool library_in_slot) {
  if (!enabled_) {
    if (library_in_slot) spec.env = reference_environment(reference_selector_, signature_);
    return spec;
  }
  PTXB_ASSIGN_OR_RETURN(SandboxPolicy p, policy(library_in_slot, SeccompProfile::kProfiler));
  p.cpu_seconds = kToolCpuSeconds;
  spec.argv = sandbox_command(launcher_, p, spec.argv);
  return spec;
}

Result<ProcessSpec> EvalSandbox::wrap_debug_run(ProcessSpec spec, const ScratchEnv& env_for,
                                                std::uint64_t file_size_bytes,
                                                std::string& scratch_dir) {
  if (!enabled_) {
    scratch_dir = fmt::format("{}/scratch-{}", staging_dir_, scratch_count_++);
    PTXB_RETURN_IF_ERROR(make_directories(scratch_dir));
    std::vector<std::string> env = current_environment();
    for (std::string& entry : env_for(scratch_dir)) env.push_back(std::move(entry));
    spec.env = std::move(env);
    return spec;
  }
  // The profiler profile, as for compute-sanitizer over the same self-contained call: the
  // driver's core-dump writer, which runs in the candidate's process, opens a socket of a
  // family the runner profile traps (seen on the H200: SIGSYS on `socket` before any dump was
  // written). The namespace still has loopback only, and no runner channel is pinned here.
  PTXB_ASSIGN_OR_RETURN(SandboxPolicy p, policy(false, SeccompProfile::kProfiler));
  p.scratch_tmpfs = false;
  p.file_size_bytes = file_size_bytes;
  for (std::string& entry : env_for(p.scratch_dir)) p.set_env.push_back(std::move(entry));
  // Without a tmpfs the folder itself must be the sandbox uid's to write in (as root; as
  // another user the uid inside is our own).
  if (::geteuid() == 0 && ::chown(p.scratch_dir.c_str(), p.uid, p.gid) != 0)
    return make_error("io", "chown {}: {}", p.scratch_dir, std::strerror(errno));
  scratch_dir = p.scratch_dir;
  spec.argv = sandbox_command(launcher_, p, spec.argv);
  return spec;
}

std::optional<Finding> sandbox_finding(int term_signal, const std::string& log) {
  switch (term_signal) {
    case SIGSYS: {
      const std::string reason = sandbox_seccomp_reason(log);
      const auto colon = reason.find(':');
      const std::string call = colon == std::string::npos
                                   ? "a system call (its name was not reported)"
                                   : "the system call " + reason.substr(colon + 1);
      return Finding{PtxbStatus::kForbidden, reason,
                     fmt::format("the sandbox's seccomp filter stopped {}, which untrusted code "
                                 "may not make; the process was killed",
                                 call)};
    }
    case SIGXCPU:
      return Finding{PtxbStatus::kRuntimeError, std::string(reason::kSandboxCpuLimit),
                     "the process used up the sandbox's CPU-time limit (RLIMIT_CPU)"};
    case SIGXFSZ:
      return Finding{PtxbStatus::kRuntimeError, std::string(reason::kSandboxFileSizeLimit),
                     "the process wrote a file beyond the sandbox's size limit (RLIMIT_FSIZE)"};
    default:
      return std::nullopt;
  }
}

std::optional<Finding> sandbox_setup_failure(int exit_code, const std::string& output) {
  if (exit_code != kSandboxExitSetupFailed) return std::nullopt;
  const auto at = output.find(kSandboxSetupErrorPrefix);
  if (at == std::string::npos) return std::nullopt;
  const auto end = output.find('\n', at);
  return Finding{PtxbStatus::kInfraError, std::string(reason::kSandboxSetup),
                 output.substr(at, end == std::string::npos ? std::string::npos : end - at)};
}

std::optional<Finding> sandbox_finding_in_output(const std::string& output) {
  if (!blocked_syscall_in_log(output)) return std::nullopt;
  return sandbox_finding(SIGSYS, output);
}

}  // namespace ptxb
