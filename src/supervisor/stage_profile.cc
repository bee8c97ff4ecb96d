// The dynamic target-instruction check (design.md §3.6): Nsight Compute's source page of one
// timed-path call says which instruction families executed. The call is one of a second IPC
// runner's, driven like the timed runner (supervisor/profile_session.h) and chosen at random
// after the warm-up (supervisor/profile_plan.h); its kernels and GPU time must be the timed
// calls' (supervisor/profile_check.h), else REWARD_HACK profile_mismatch. Runs only after
// PASSED; ncu's own failures make the verdict "unknown", never the evaluation's status, except a
// sandbox stop.
#include "analysis/ncu_launches.h"
#include "analysis/ncu_source.h"
#include "core/strings.h"
#include "eval/integrity_reasons.h"
#include "supervisor/eval_stages.h"
#include "supervisor/profile_check.h"
#include "supervisor/profile_session.h"

namespace ptxb {
namespace {

// The last part of a failed run's output: where ncu and the runner say why.
std::string output_tail(const std::string& output) {
  const std::string trimmed = trim(output);
  return trimmed.size() <= 500 ? trimmed : trimmed.substr(trimmed.size() - 500);
}

// Replaces the recorded PASSED verdict: the workload was recorded by stage_integrity.
StageOutcome replace_verdict(EvalContext& ctx, const Finding& f) {
  WorkloadEval& recorded = ctx.result.workloads.back();
  recorded.findings.push_back(f);
  recorded.status = f.status;
  recorded.reason = f.reason;
  recorded.message = f.detail;
  return ctx.finish(f.status, f.reason, f.detail);
}

// The verdict from a complete run's pages; a mismatch between the profiled and the timed
// calls is returned as the finding that replaces the pass.
std::optional<Finding> judge_pages(EvalContext& ctx, const ProfilePlan& plan,
                                   const ProfileOutputParts& parts) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  auto kernels = parse_ncu_source_csv(parts.source, "ncu source page");
  if (!kernels.ok()) {
    check.reason = kernels.error().message;
    return std::nullopt;
  }
  auto launches = parse_ncu_launches_csv(parts.launches, "ncu raw page");
  if (!launches.ok()) {
    check.reason = launches.error().message;
    return std::nullopt;
  }
  ProfiledCallRecord& record = check.profiled_call.emplace(profiled_call_record(plan));
  // Like for like: ncu's kernel time against the in-process (CUPTI) median of the timed calls,
  // not the batch bound that may have replaced it (which also holds the gaps between kernels).
  const WorkloadEval& w = ctx.workload;
  const double timed_median_ms = w.integrity.batch_bound ? w.integrity.batch_bound->cupti_median_ms
                                                         : w.candidate_timing->median_ms;
  compare_profiled_call(*launches, ctx.candidate_timing.kernels, plan, timed_median_ms, record,
                        /*compare_shapes=*/!ctx.library_as_candidate);
  DynamicCheck dynamic = decide_dynamic(*kernels, ctx.compile.artifact.arch);
  check.dynamic = dynamic;
  if (!record.matches) {
    // What ran under the profiler is not what was timed: its instructions prove nothing.
    check.reason = "the profiled call is not a timed call: " + record.mismatch;
    return Finding{PtxbStatus::kRewardHack, std::string(reason::kProfileMismatch),
                   fmt::format("the call profiled by Nsight Compute (call {} of {}) does not "
                               "match the timed calls: {}",
                               record.call, record.calls, record.mismatch)};
  }
  check.verdict = dynamic.verdict;
  check.reason = dynamic.reason;
  return std::nullopt;
}

// Runs the plan and decides the verdict (check.verdict stays "unknown" on any failure).
StageOutcome profile_call(EvalContext& ctx, const ProfilePlan& plan) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  const auto start = EvalClock::now();
  ProfiledRun run = run_profiled_calls(ctx, plan);
  check.cost_ms = ms_since(start);
  ctx.stage_done("ncu", start);
  if (run.sandbox) {
    // The sandbox's verdict replaces the pass: a candidate that makes a forbidden call only
    // under the profiler is still caught (and a sandbox that failed is the harness's).
    check.reason = "the profiled run was stopped by the sandbox";
    return replace_verdict(ctx, *run.sandbox);
  }
  const ProfileOutputParts parts = profile_output_parts(run.output);
  if (parts.profile_exit && *parts.profile_exit != 0) {
    check.reason =
        fmt::format("ncu exited with status {}: {}", *parts.profile_exit, output_tail(run.output));
    return StageOutcome::kDone;
  }
  if (!run.failure.empty()) {
    check.reason = run.failure + ": " + output_tail(run.output);
    return StageOutcome::kDone;
  }
  if (auto mismatch = judge_pages(ctx, plan, parts)) return replace_verdict(ctx, *mismatch);
  return StageOutcome::kDone;
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
  check.verdict = kInstUnknown;
  if (ctx.job.ncu_path.empty()) {
    check.reason = "Nsight Compute (ncu) not found";
    return StageOutcome::kDone;
  }
  // The operating system's randomness, not the evaluation's seed (which is in the request and
  // fixed for replays): the choice exists only in ncu's command line (docs/integrity.md says
  // what a candidate can still observe, and why the comparison with the timed calls holds).
  auto plan = plan_profile(ctx.candidate_timing.kernels, ctx.policy.warmup_calls,
                           kProfileCandidateCalls, ctx.secret_rng());
  if (!plan.ok()) {
    check.reason = plan.error().message;
    return StageOutcome::kDone;
  }
  return profile_call(ctx, *plan);
}

}  // namespace ptxb
