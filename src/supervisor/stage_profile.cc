// The dynamic target-instruction check (design.md §3.6): Nsight Compute's source page of one
// timed-path call says which instruction families executed. The call is one of a second IPC
// runner's, driven like the timed runner (supervisor/profile_session.h) and chosen at random
// after the warm-up (supervisor/profile_plan.h); its kernels and GPU time must be the timed
// calls' (supervisor/profile_check.h), else REWARD_HACK profile_mismatch. Runs only after
// PASSED; ncu's own failures make the verdict "unknown", never the evaluation's status, except a
// sandbox stop.
#include <algorithm>
#include <filesystem>

#include "analysis/ncu_hints.h"
#include "analysis/ncu_launches.h"
#include "analysis/ncu_pc_source.h"
#include "analysis/ncu_source.h"
#include "analysis/ncu_work.h"
#include "core/fs.h"
#include "core/strings.h"
#include "eval/integrity_reasons.h"
#include "sass/sass_analysis.h"
#include "sass/sass_listing.h"
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

// Why the profile gave no verdict: the target-instruction check's reason when it was being
// decided, else (a static-absent kernel profiled for its work only) the work-done note.
void note_failure(EvalContext& ctx, const ProfilePlan& plan, std::string why) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  if (plan.source_counters)
    check.reason = std::move(why);
  else
    check.work_done_note = "not measured: " + why;
}

// `eval --save-profile`: the pages as ncu printed them. A folder that cannot be written is
// noted in the check's reason, never the verdict.
void save_pages(EvalContext& ctx, const ProfileOutputParts& parts) {
  const std::string& dir = ctx.job.profile_save_dir;
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  Status s = write_file_atomic(dir + "/ncu_source.csv", parts.source);
  if (s.ok()) s = write_file_atomic(dir + "/ncu_raw.csv", parts.launches);
  if (!s.ok())
    ctx.result.target_instructions.reason += "(--save-profile: " + s.error().message + ") ";
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

// The work-done check of the profiled (and matched) call; a finding when work was skipped.
std::optional<Finding> judge_work(EvalContext& ctx, const std::vector<NcuLaunch>& launches) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  auto measured = work_from_launches(launches);
  if (!measured.ok()) {
    check.work_done_note = measured.error().message;
    return std::nullopt;
  }
  auto judged = judge_work_done(ctx.task.flops, ctx.task.min_bytes, *measured);
  if (!judged.ok()) {
    check.work_done_note = judged.error().message;
    return std::nullopt;
  }
  check.work_done = *judged;
  if (!judged->insufficient) return std::nullopt;
  return Finding{PtxbStatus::kRewardHack, std::string(reason::kInsufficientWork), judged->detail};
}

// The verdict from a complete run's pages; a mismatch between the profiled and the timed
// calls is returned as the finding that replaces the pass.
std::optional<Finding> judge_pages(EvalContext& ctx, const ProfilePlan& plan,
                                   const ProfileOutputParts& parts, const SassListing& listing) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  auto launches = parse_ncu_launches_csv(parts.launches, "ncu raw page");
  if (!launches.ok()) {
    note_failure(ctx, plan, launches.error().message);
    return std::nullopt;
  }
  Result<std::vector<NcuKernelSource>> kernels = std::vector<NcuKernelSource>{};
  if (plan.source_counters)
    kernels = plan.source_from_raw ? source_from_pc_counts(*launches, listing)
                                   : parse_ncu_source_csv(parts.source, "ncu source page");
  if (!kernels.ok()) {
    check.reason = kernels.error().message;
    return std::nullopt;
  }
  // Advice for the feedback (eval/feedback.h), never part of a verdict.
  if (plan.hint_metrics) check.hint_metrics = hint_metrics_of(*launches);
  ProfiledCallRecord& record = check.profiled_call.emplace(profiled_call_record(plan));
  // Like for like: ncu's kernel time against the in-process (CUPTI) median of the timed calls,
  // not the batch bound that may have replaced it (which also holds the gaps between kernels);
  // a focused plan's kernels against those kernels' own CUPTI time.
  const WorkloadEval& w = ctx.workload;
  const double timed_median_ms = w.integrity.batch_bound ? w.integrity.batch_bound->cupti_median_ms
                                                         : w.candidate_timing->median_ms;
  if (plan.functions.empty())
    compare_profiled_call(*launches, ctx.candidate_timing.kernels, plan, timed_median_ms, record,
                          /*compare_shapes=*/!ctx.library_as_candidate);
  else
    compare_focused_call(*launches, ctx.candidate_timing.kernels, plan, timed_median_ms, record);
  if (plan.source_counters) check.dynamic = decide_dynamic(*kernels, ctx.compile.artifact.arch);
  if (!record.matches) {
    // What ran under the profiler is not what was timed: its instructions prove nothing.
    note_failure(ctx, plan, "the profiled call is not a timed call: " + record.mismatch);
    return Finding{PtxbStatus::kRewardHack, std::string(reason::kProfileMismatch),
                   fmt::format("the call profiled by Nsight Compute (call {} of {}) does not "
                               "match the timed calls: {}",
                               record.call, record.calls, record.mismatch)};
  }
  if (check.dynamic) {
    check.verdict = check.dynamic->verdict;
    check.reason = check.dynamic->reason;
  }
  return judge_work(ctx, *launches);
}

// Runs the plan and decides the verdict (check.verdict stays "unknown" on any failure).
// nullopt: a focused plan's kernels did less work than the threshold, so the kernels it left
// out decide, and the caller profiles the call whole.
std::optional<StageOutcome> profile_call(EvalContext& ctx, const ProfilePlan& plan,
                                         const SassListing& listing) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  const auto start = EvalClock::now();
  ProfiledRun run = run_profiled_calls(ctx, plan);
  check.cost_ms += ms_since(start);
  check.phases_ms = run.phases_ms;
  if (run.sandbox) {
    // The sandbox's verdict replaces the pass: a candidate that makes a forbidden call only
    // under the profiler is still caught (and a sandbox that failed is the harness's).
    note_failure(ctx, plan, "the profiled run was stopped by the sandbox");
    return replace_verdict(ctx, *run.sandbox);
  }
  const ProfileOutputParts parts = profile_output_parts(run.output);
  save_pages(ctx, parts);
  check.phases_ms.insert(parts.phases_ms.begin(), parts.phases_ms.end());
  if (parts.profile_exit && *parts.profile_exit != 0) {
    note_failure(
        ctx, plan,
        fmt::format("ncu exited with status {}: {}", *parts.profile_exit, output_tail(run.output)));
    return StageOutcome::kDone;
  }
  if (!run.failure.empty()) {
    note_failure(ctx, plan, run.failure + ": " + output_tail(run.output));
    return StageOutcome::kDone;
  }
  const std::optional<Finding> finding = judge_pages(ctx, plan, parts, listing);
  if (!finding) return StageOutcome::kDone;
  if (!plan.functions.empty() && finding->reason == reason::kInsufficientWork) return std::nullopt;
  return replace_verdict(ctx, *finding);
}

// Whether a function of the cubin calls another (a CALL instruction): the callee's instructions
// then run inside a kernel that does not hold them, at addresses outside its own.
bool has_calls(const SassSummary& sass) {
  return std::any_of(sass.kernels.begin(), sass.kernels.end(),
                     [](const SassKernel& k) { return k.opcode_histogram.count("CALL") > 0; });
}

// The cubin functions whose SASS holds a family that qualifies for the target architecture;
// empty with calls (has_calls).
std::vector<std::string> target_functions(const SassSummary& sass) {
  if (has_calls(sass)) return {};
  const std::vector<std::string> qualifying = qualifying_families(sass.target_arch);
  std::vector<std::string> names;
  for (const SassKernel& kernel : sass.kernels) {
    for (const std::string& family : qualifying)
      if (kernel.family_counts.count(family) > 0) {
        names.push_back(kernel.name);
        break;
      }
  }
  return names;
}

// Profiles only the call's target kernels when that is possible and enough (focus_plan), else
// the whole call. The verdicts are the whole call's: the left-out kernels hold no target
// family, and work only adds up, so when the target kernels alone did the problem's work the
// others cannot change the work verdict; when they did not, the call is profiled whole.
StageOutcome profile_focused_or_whole(EvalContext& ctx, const ProfilePlan& plan,
                                      const SassListing& listing) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  std::optional<ProfilePlan> focused;
  // The profiler hints read every kernel (the longest launch may be a helper).
  if (plan.source_counters && !plan.hint_metrics && !ctx.library_as_candidate &&
      !ctx.options.ncu_source_page)
    focused = focus_plan(plan, ctx.candidate_timing.kernels, target_functions(ctx.compile.sass));
  if (focused) {
    const TargetInstructionCheck before = check;
    if (std::optional<StageOutcome> outcome = profile_call(ctx, *focused, listing)) return *outcome;
    const double focused_ms = check.cost_ms;
    const std::string short_work = check.work_done ? check.work_done->detail : "";
    check = before;
    check.cost_ms = focused_ms;
    check.focus_note = "the target kernels alone did too little work (" + short_work +
                       "): the call was profiled again, every kernel";
  }
  return profile_call(ctx, plan, listing).value_or(StageOutcome::kDone);
}

// The compile stage's cuobjdump listing of the artifact (kernel.sass) for the target
// architecture, which the per-address counters are mapped onto.
Result<SassListing> artifact_listing(const EvalContext& ctx) {
  const CompileArtifact& artifact = ctx.compile.artifact;
  if (artifact.directory.empty() || artifact.sass_file.empty())
    return make_error("profile", "the artifact has no SASS listing");
  if (has_calls(ctx.compile.sass))
    return make_error("profile", "a function calls another (CALL): callees run at other addresses");
  const std::string path = artifact.path_of(artifact.sass_file);
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, 256u << 20));
  return parse_sass_listing(text, artifact.arch, path);
}

}  // namespace

StageOutcome stage_profile(EvalContext& ctx) {
  TargetInstructionCheck& check = ctx.result.target_instructions;
  // Without a target family in the SASS the verdict is decided; the profiled call still counts
  // the work done (cheap counters only, no source page).
  const bool source_counters = ctx.compile.sass.target_present || ctx.library_as_candidate;
  if (!ctx.options.ncu) {
    check.verdict = source_counters ? kInstNotRun : kInstStaticAbsent;
    if (source_counters) check.reason = "disabled (--no-ncu)";
    check.work_done_note = "not measured (--no-ncu)";
    return StageOutcome::kDone;
  }
  check.verdict = source_counters ? kInstUnknown : kInstStaticAbsent;
  if (ctx.job.ncu_path.empty()) {
    if (source_counters) check.reason = "Nsight Compute (ncu) not found";
    check.work_done_note = "not measured: Nsight Compute (ncu) not found";
    return StageOutcome::kDone;
  }
  // The operating system's randomness, not the evaluation's seed (which is in the request and
  // fixed for replays): the choice exists only in ncu's command line (docs/integrity.md says
  // what a candidate can still observe, and why the comparison with the timed calls holds).
  auto plan = plan_profile(ctx.candidate_timing.kernels, ctx.policy.warmup_calls,
                           kProfileCandidateCalls, ctx.secret_rng());
  if (!plan.ok()) {
    if (source_counters) check.reason = plan.error().message;
    check.work_done_note = "not measured: " + plan.error().message;
    return StageOutcome::kDone;
  }
  plan->source_counters = source_counters;
  plan->hint_metrics = ctx.options.profiler_hints;
  // Which page the per-instruction counts come from, and why, in the result (never silent).
  SassListing listing;
  if (source_counters && ctx.options.ncu_source_page) {
    check.counts_from = "source_page (--ncu-source-page)";
  } else if (source_counters) {
    Result<SassListing> read = artifact_listing(ctx);
    if (read.ok()) listing = std::move(read).value();
    check.counts_from =
        read.ok() ? "raw_page" : "source_page (no listing: " + read.error().message + ")";
  }
  plan->source_from_raw = !listing.empty();
  const auto start = EvalClock::now();
  const StageOutcome outcome = profile_focused_or_whole(ctx, *plan, listing);
  ctx.stage_done("ncu", start);  // both runs when a focused one fell short
  // A passed kernel whose work could not be counted (the profiled run failed, say because the
  // kernel behaves differently under a profiler) is marked: a static-absent kernel has no
  // "unknown" target verdict to show it otherwise.
  WorkloadEval& recorded = ctx.result.workloads.back();
  if (recorded.status == PtxbStatus::kPassed && !check.work_done)
    recorded.flags.push_back("work_unmeasured");
  return outcome;
}

}  // namespace ptxb
