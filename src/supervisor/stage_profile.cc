// The dynamic target-instruction check (design.md §3.6): Nsight Compute's source page of one
// self-contained call says which instruction families executed. Runs only after PASSED; its own
// failures make the verdict "unknown", never the evaluation's status, except a sandbox stop.
#include "analysis/ncu_source.h"
#include "core/strings.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

// The verdict of a finished ncu run (not stopped by the sandbox).
void judge_ncu_run(EvalContext& ctx, const Result<ProcessResult>& ran) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  check.verdict = kInstUnknown;
  if (!ran.ok()) {
    check.reason = "ncu failed to start: " + ran.error().message;
    return;
  }
  if (ran->timed_out || ran->exit_code != 0) {
    check.reason =
        fmt::format("ncu {}: {}", ran->describe(), trim(ran->stderr_text).substr(0, 500));
    return;
  }
  auto kernels = parse_ncu_source_csv(ran->stdout_text, "ncu source page");
  if (!kernels.ok()) {
    check.reason = kernels.error().message;
    return;
  }
  DynamicCheck dynamic = decide_dynamic(*kernels, ctx.compile.artifact.arch);
  check.verdict = dynamic.verdict;
  check.reason = dynamic.reason;
  check.dynamic = std::move(dynamic);
}

}  // namespace

StageOutcome stage_profile(EvalContext& ctx) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  if (!ctx.compile.sass.target_present && !ctx.library_as_candidate) {
    check.verdict = kInstStaticAbsent;
    return StageOutcome::kDone;
  }
  if (!ctx.options.ncu) {
    check.verdict = kInstNotRun;
    check.reason = "disabled (--no-ncu)";
    return StageOutcome::kDone;
  }
  if (ctx.job.ncu_path.empty()) {
    check.verdict = kInstUnknown;
    check.reason = "Nsight Compute (ncu) not found";
    return StageOutcome::kDone;
  }
  const auto start = EvalClock::now();
  auto ran = ctx.run_tool(ncu_source_argv(ctx.job.ncu_path, ctx.self_contained_argv),
                          ctx.options.ncu_timeout_seconds, 64u << 20);
  check.cost_ms = ms_since(start);
  ctx.stage_done("ncu", start);
  if (ran.ok())
    if (auto f = sandbox_failure(*ran)) {
      // The sandbox's verdict replaces the pass: a candidate that makes a forbidden call only
      // under the profiler is still caught (and a sandbox that failed is the harness's).
      check.verdict = kInstUnknown;
      check.reason = "the profiled call was stopped by the sandbox";
      WorkloadEval& recorded = ctx.result.workloads.back();
      recorded.findings.push_back(*f);
      recorded.status = f->status;
      recorded.reason = f->reason;
      recorded.message = f->detail;
      return ctx.finish(f->status, f->reason, f->detail);
    }
  judge_ncu_run(ctx, ran);
  return StageOutcome::kDone;
}

}  // namespace ptxb
