// What the stages of one evaluation share (supervisor/eval_stages.h): the job, the task and its
// compile result, the back-ends, the result being built and the runner sessions.
//
// Every stage ends in one of two ways: kContinue (the next stage runs) or kDone (the result is
// final: a status was decided). Stages decide a status only through finish(), conclude() and
// fail_candidate(), so the rules of where a workload is recorded live in one place.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compile/compile_types.h"
#include "core/process.h"
#include "eval/eval_types.h"
#include "supervisor/eval_backend.h"
#include "supervisor/eval_sandbox.h"
#include "supervisor/integrity_checks.h"
#include "supervisor/profile_plan.h"
#include "tasks/task.h"

namespace ptxb {

using EvalClock = std::chrono::steady_clock;

enum class StageOutcome { kContinue, kDone };

// One side's (candidate or reference) runner process and what went wrong with it.
struct RunnerSide {
  std::unique_ptr<RunnerSession> session;
  std::optional<Finding> failure;
  std::string role;             // "candidate runner", "reference runner": for messages
  bool answered_hello = false;  // before that, only ptxbench-sandbox can have failed
  // Its process tree's cgroup ("" without one): frozen while the other side is timed.
  std::string cgroup_dir;
};

// What timing one side produced (side_sampler.cc time_side).
struct SideTiming {
  TimingStats stats;
  std::optional<Finding> failure;
  std::vector<OutputCheck> refresh_checks;
  std::vector<double> fresh_ns;   // device times of the calls right after an in-place rewrite
  std::vector<double> repeat_ns;  // device times of the other timed calls
  std::vector<RefreshRecord> refreshes;
  TimedKernels kernels;  // what the timed samples launched (the profile stage's comparison)
  std::vector<double> samples_ns;  // every timed sample's device time (the speedup's interval)
};

struct EvalContext {
  EvalContext(const SupervisorJob& job, const Task& task, const CompileResult& compile,
              EvalDevice& device, RunnerLauncher& launcher, ProcessRunner& tools,
              std::uint64_t secret)
      : job(job),
        task(task),
        compile(compile),
        options(job.request.options),
        policy(job.request.options.timing),
        device(device),
        launcher(launcher),
        tools(tools),
        schedule_secret(secret),
        secret_rng(secret),
        verify_rng(secret ^ 0x5ec7e7ca11ull) {}

  // ---- inputs ----
  const SupervisorJob& job;
  const Task& task;
  const CompileResult& compile;
  const EvalOptions& options;
  const TimingPolicy& policy;
  EvalDevice& device;
  RunnerLauncher& launcher;
  ProcessRunner& tools;

  // ---- the result being built ----
  EvalResult result;
  // The task's one workload; copied into result.workloads when it concludes (conclude()).
  WorkloadEval workload;

  // ---- set up by stage_setup.cc ----
  // The evaluation's staging directory: the candidate's .so and the profilers' params, where
  // the sandboxed uid can read them. Removed with the context.
  struct StagingDir {
    std::string path;
    StagingDir() = default;
    StagingDir(const StagingDir&) = delete;
    StagingDir& operator=(const StagingDir&) = delete;
    ~StagingDir();
  } staging;
  DeviceFacts facts;      // the probe before any evaluation work (the GPU-state guard's "before")
  std::string signature;  // the candidate's ABI signature
  // What reference runners load (protocol/reference_selector.h): the task's backend, and after
  // setup the supervisor's cuBLASLt pins when EvalOptions::pin_reference_algorithm is on.
  std::string reference_selector;
  std::string staged_so;  // the candidate's .so in the staging directory
  // A/A mode (test-only): the library sits in the candidate slot for the profilers too.
  bool library_as_candidate = false;
  std::vector<std::string> self_contained_argv;  // the runner's one-call mode, for profilers
  std::unique_ptr<EvalSandbox> sandbox;
  BindRequest bind;
  int num_sets = 2;  // correctness input sets: max(trials, 2)
  // The batch bound's input sets follow the correctness sets: [num_sets, num_sets + batch_sets).
  // Zero where there is no reference runner to calibrate on (plain_cuda tasks).
  int batch_sets = 0;
  ReplyCheckOptions reply_checks;            // for candidate calls
  ReplyCheckOptions reference_reply_checks;  // for reference calls: no module checks

  // ---- set by later stages ----
  // The candidate's per-call limit: the policy's floor, raised by the reference's median.
  std::chrono::milliseconds call_limit{0};
  RunnerSide candidate;
  // The reference runner, kept from its solo calibration (stage_reference.cc) to the end of
  // interleaved timing; no session when timing is sequential or there is no library reference.
  RunnerSide reference;
  SideTiming candidate_timing;  // its samples; fresh_ns grows with re-validation's trials
  std::vector<double> reference_samples_ns;       // the reference's timed samples
  std::uint32_t reference_solo_sm_clock_mhz = 0;  // NVML after its solo calibration (0: none)
  // The batch bound: its policy and what the reference runner calibrated (stage_bound.cc).
  BatchBoundPolicy bound_policy;
  std::optional<BatchBoundRecord> bound_calibration;
  // Drawn from the OS, never from the evaluation's seed: which timed calls are verified, the
  // poison patterns, the batches' fresh inputs and snapshot blocks. Recorded in the trace after
  // the evaluation (integrity.schedule_secret), when knowing it no longer helps a candidate.
  std::uint64_t schedule_secret = 0;
  std::mt19937_64 secret_rng;
  // Only for which timed calls are verified: a stream of its own, so the schedule depends on the
  // secret and the call count alone.
  std::mt19937_64 verify_rng;

  // Records how long a stage took, under `name`, in result.stage_ms.
  void stage_done(const std::string& name, EvalClock::time_point start);
  // Decides the evaluation's status (no workload recorded: a failure before the workload).
  StageOutcome finish(PtxbStatus status, std::string reason, std::string message);
  // Decides the workload's status, records the workload and finishes with the same status.
  StageOutcome conclude(PtxbStatus status, std::string reason, std::string message);
  StageOutcome conclude_finding(const Finding& finding);
  // The candidate's verdict: keeps its log, kills its runner, locates a memory fault.
  StageOutcome fail_candidate(const Finding& failure);
  // Keeps the candidate runner's log (capped) in workload.runner.
  void record_runner_log();

  // A profiler over the self-contained runner, in the sandbox (or not, with the unsafe flag).
  Result<ProcessResult> run_tool(std::vector<std::string> argv, double timeout_seconds,
                                 std::size_t output_cap);
};

// ---- helpers shared by the stages (eval_context.cc) ----

double ms_since(EvalClock::time_point start);
std::chrono::milliseconds seconds_to_ms(double seconds);
// The model sees runner output as logs only; keep the tail, where crashes print.
std::string cap_log(const std::string& log, std::size_t cap = 16u << 10);
// A profiler run that the sandbox ended: its set-up failed (INFRA_ERROR), or the runner inside
// made a call the filter stops (FORBIDDEN).
std::optional<Finding> sandbox_failure(const ProcessResult& ran);
// Turns a failed call (timeout, dead runner) into the candidate's status.
Finding call_failure(RunnerSide& side, const Error& error, std::chrono::milliseconds limit);
// A poison trial drawn from the secret: a fresh pattern each time (EvalDevice::poison).
int secret_poison_trial(EvalContext& ctx);
// The first output check that decides a status: a non-finite reference first, then a mismatch.
std::optional<Finding> first_failure(const std::vector<OutputCheck>& checks);

}  // namespace ptxb
