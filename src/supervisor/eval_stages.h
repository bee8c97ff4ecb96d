// The stages of one evaluation, in the order Evaluator::run sequences them (design.md
// §3.3–§3.6). Each runs over the shared EvalContext and returns kDone once it decided the status.
// Each lives in the file named after it (src/supervisor/stage_*.cc).
#pragma once

#include "supervisor/eval_context.h"

namespace ptxb {

// stage_setup.cc: probe the GPU, stage the candidate's .so and the profilers' parameters,
// self-check the sandbox (before any candidate code runs).
StageOutcome stage_setup(EvalContext& ctx);
// stage_setup.cc: the workload's seeds, input sets, reference outputs and bind request.
StageOutcome stage_workload(EvalContext& ctx);
// How a runner is started under a tool (stage_profile.cc): the tool's command line between the
// sandbox launcher and the runner, the runner's extra arguments, the output kept, and the
// start-up limit (a profiler slows the start).
struct ToolWrap {
  std::vector<std::string> tool_argv;
  std::vector<std::string> runner_args;
  std::size_t log_cap_bytes = 1u << 20;
  std::chrono::milliseconds start_limit{0};
};

// stage_setup.cc: starts a runner for one side and brings it to a bound state; a problem is
// recorded in the returned side's `failure`. With `tool`, the runner runs under it (and its
// hello does not describe the evaluation's runner environment).
RunnerSide start_runner(EvalContext& ctx, RunnerRole role, const std::string& label,
                        const ToolWrap* tool = nullptr);

// stage_sanitizer.cc: the compute-sanitizer gate (--sanitize).
StageOutcome stage_sanitizer(EvalContext& ctx);
// stage_sanitizer.cc: a memory fault names no line by itself; one memcheck pass over the
// self-contained call locates it. Updates `finding` (and result.sanitizer) in place.
void locate_memory_error(EvalContext& ctx, Finding& finding);
// stage_debug.cc: with EvalOptions::debug, on RUNTIME_ERROR, MEMORY_ERROR or TIMEOUT: the
// sanitizer's fault, cuda-gdb over a core dump, the launch behind a sync error
// (result.debug); adds the line it points at to `finding`. Otherwise does nothing.
void debug_failure(EvalContext& ctx, Finding& finding);

// stage_reference.cc: times the library reference; sets the candidate's per-call limit.
StageOutcome stage_reference(EvalContext& ctx);

// stage_correctness.cc: starts the candidate runner; trials, write check, input check.
StageOutcome stage_correctness(EvalContext& ctx);

// side_sampler.cc: warm-up and samples on one side (candidate samples also run the
// anti-caching refreshes).
SideTiming time_side(EvalContext& ctx, RunnerSide& side, bool is_candidate,
                     std::chrono::milliseconds call_limit);
// stage_interleave.cc: reference and candidate in interleaved blocks, with the drift rules and
// retries; kContinue with ctx.candidate_timing and the workload's timings set.
StageOutcome interleaved_timing(EvalContext& ctx);
// stage_timing.cc: the candidate's timed samples.
StageOutcome stage_timing(EvalContext& ctx);
// stage_timing.cc: the fresh-input tripwire, the GPU-state guard, the runner's shutdown, the
// physical floor, and the PASSED verdict.
StageOutcome stage_integrity(EvalContext& ctx);

// stage_bound.cc: the batch bound's input sets to allocate for a task (0 without a reference).
int initial_batch_sets(const EvalContext& ctx, double physical_floor_ms);
// stage_bound.cc: the overhead O, K, the reference's U and its write phase, on the reference
// runner (after its timing); a failure there is the harness's.
std::optional<Finding> calibrate_bound(EvalContext& ctx, RunnerSide& reference,
                                       double reference_median_ms);
// stage_bound.cc: the candidate's verified batches, U, and the CUPTI median judged against it.
StageOutcome stage_bound(EvalContext& ctx);
// The energy phase (stage_energy.cc, eval/energy.h), with both runners still up after
// interleaved timing: each side's batches back to back for >= 1 s, NVML's energy counter around
// them, the idle power before subtracted. Informational: failures are recorded in the note.
EnergyRecord measure_energy(EvalContext& ctx);
// stage_bound.cc: the GPU-free half of a batch reply's checks (a CUDA error, leftovers), as for
// a call.
std::optional<Finding> batch_reply_finding(const BatchReply& reply,
                                           const ReplyCheckOptions& options);
// stage_paper.cc (--timing-protocol paper, eval/paper_timing.h): the recipe on the reference,
// then on the candidate; kDone when it decided the evaluation (a candidate failure, a harness
// error), else the record in workload.paper_timing.
StageOutcome paper_timing_stage(EvalContext& ctx);

// stage_also_reference.cc (EvalOptions::also_reference): after a PASSED verdict, the second
// reference's correctness and solo timing into workload.reference.also_reference; never
// changes the verdict, does nothing without the option.
StageOutcome stage_also_reference(EvalContext& ctx);

// stage_revalidation.cc: fresh trials when the speedup is high enough to deserve a second look.
StageOutcome stage_revalidation(EvalContext& ctx);

// stage_untimed.cc (operation sanitize, eval/eval_operation.h): the candidate's per-call limit
// without a reference timing (the policy's floor), and the PASSED verdict after correctness.
StageOutcome stage_untimed_limit(EvalContext& ctx);
StageOutcome stage_untimed_verdict(EvalContext& ctx);

// stage_profile.cc: the dynamic target-instruction check under Nsight Compute.
StageOutcome stage_profile(EvalContext& ctx);

}  // namespace ptxb
