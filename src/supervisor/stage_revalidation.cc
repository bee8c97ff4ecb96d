// Re-validation of high speedups (docs/integrity.md): a speedup above the policy's threshold
// gets extra trials on freshly generated inputs, checked and timed like the first ones. A cache
// keyed on the input sets, or outputs computed once, fails here.
#include "eval/integrity_reasons.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

// What one fresh trial produced; `done` is set when it decided the status.
struct TrialOutcome {
  std::optional<StageOutcome> done;
  double device_ns = 0;
};

// Fresh trial `t`: regenerate a set's inputs, poison its outputs, call, check inputs and outputs.
TrialOutcome fresh_trial(EvalContext& ctx, int t, double speedup,
                         const RevalidationRecord& revalidation) {
  TrialOutcome out;
  auto infra = [&](const char* reason, const Error& e) {
    out.done = ctx.conclude(PtxbStatus::kInfraError, reason, e.message);
    return out;
  };
  auto candidate_fails = [&](const Finding& f) {
    out.done = ctx.fail_candidate(f);
    return out;
  };
  // Sets and trial indices away from those correctness and timing used.
  const int set = t % ctx.num_sets;
  const int trial = 20 + t;
  const std::uint64_t fresh =
      derive_set_seed(ctx.options.seed ^ 0x7e7a11d, ctx.task.name, 2000 + t);
  if (auto s = ctx.device.regenerate(set, fresh); !s.ok()) return infra("regenerate", s.error());
  if (auto s = ctx.device.poison(set, trial); !s.ok()) return infra("poison", s.error());
  auto before = ctx.device.input_hash(set);
  if (!before.ok()) return infra("input_hash", before.error());
  CallBracket bracket;
  auto reply = ctx.candidate.session->call(
      CallRequest{static_cast<std::uint64_t>(set), true, false}, ctx.call_limit, &bracket);
  if (!reply.ok())
    return candidate_fails(call_failure(ctx.candidate, reply.error(), ctx.call_limit));
  if (auto f = reply_findings(*reply, ctx.reply_checks)) return candidate_fails(*f);
  auto after = ctx.device.input_hash(set);
  if (!after.ok()) return infra("input_hash", after.error());
  if (*after != *before)
    return candidate_fails(Finding{PtxbStatus::kRewardHack, std::string(reason::kInputModified),
                                   "re-validation: the kernel wrote to an input tensor"});
  auto checks = ctx.device.check(set, trial);
  if (!checks.ok()) return infra("compare", checks.error());
  WorkloadEval& w = ctx.workload;
  w.checks.insert(w.checks.end(), checks->begin(), checks->end());
  if (auto f = first_failure(*checks)) {
    // Right on the first inputs, wrong on fresh ones: the outputs were not computed from them.
    if (f->status == PtxbStatus::kIncorrectNumerical) {
      f->status = PtxbStatus::kRewardHack;
      f->reason = std::string(reason::kStaleOutput);
    }
    f->detail =
        fmt::format("re-validation of a {:.2f}x speedup, fresh trial {}: ", speedup, t + 1) +
        f->detail;
    w.integrity.revalidation = revalidation;
    return candidate_fails(*f);
  }
  if (!reply->has_window)
    return candidate_fails(Finding{PtxbStatus::kRewardHack, std::string(reason::kNoGpuWork),
                                   "re-validation: a call enqueued no GPU work"});
  out.device_ns = static_cast<double>(reply->device_ns);
  return out;
}

}  // namespace

StageOutcome stage_revalidation(EvalContext& ctx) {
  WorkloadEval& w = ctx.workload;
  const TimingPolicy& policy = ctx.policy;
  if (!w.reference_timing || w.candidate_timing->median_ms <= 0) return StageOutcome::kContinue;
  const double speedup = w.reference_timing->median_ms / w.candidate_timing->median_ms;
  if (speedup <= policy.revalidation_speedup) return StageOutcome::kContinue;
  const auto start = EvalClock::now();
  // Flagged whatever the outcome: a consumer sees that this speedup needed a second look.
  w.flags.push_back("revalidated_high_speedup");
  RevalidationRecord revalidation{speedup, policy.revalidation_speedup, policy.revalidation_trials,
                                  std::nullopt, std::nullopt};
  std::vector<double> trial_ms;
  for (int t = 0; t < policy.revalidation_trials; ++t) {
    TrialOutcome trial = fresh_trial(ctx, t, speedup, revalidation);
    if (trial.done) return *trial.done;
    // Their times join the fresh-input tripwire's (stage_timing.cc stage_integrity).
    ctx.candidate_timing.fresh_ns.push_back(trial.device_ns);
    trial_ms.push_back(trial.device_ns * 1e-6);
  }
  revalidation.device_ms = trial_ms;
  w.integrity.revalidation = revalidation;
  ctx.stage_done("revalidation", start);
  return StageOutcome::kContinue;
}

}  // namespace ptxb
