// The candidate's correctness: its runner's start-up, the trials on distinct input sets, the
// write check (two calls under different poison patterns) and the input-unchanged check.
#include "eval/integrity_reasons.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

// The correctness calls, (set, trial) each. Trials on sets 0..T-1 (each its own seed; with one
// trial, one call on set 1 too, so the plan always holds an A/B/A sequence of distinct inputs),
// then the write check: two more calls on set 0 under the two poison patterns. An element equal
// to the poison after both was not written by either call, even if an earlier call wrote it (a
// kernel that relies on the previous call's values staying in the buffer).
struct CorrectnessPlan {
  std::vector<std::pair<int, int>> calls;
  std::size_t first_write_check = 0;  // index of the first write-check call
};

CorrectnessPlan correctness_plan(int trials, int num_sets) {
  CorrectnessPlan plan;
  for (int t = 0; t < trials; ++t) plan.calls.emplace_back(t % num_sets, t);
  if (trials == 1) plan.calls.emplace_back(1, 1);
  // Poison patterns alternate with the trial index's parity (cuda/input_gen.h): two consecutive
  // unused indices give the two different patterns.
  const int first_write_trial = static_cast<int>(plan.calls.size());
  plan.calls.emplace_back(0, first_write_trial);
  plan.calls.emplace_back(0, first_write_trial + 1);
  plan.first_write_check = plan.calls.size() - 2;
  return plan;
}

// What one correctness call produced; `done` is set when it decided the status.
struct CallOutcome {
  std::optional<StageOutcome> done;
  std::vector<OutputCheck> checks;
  bool has_window = false;
};

// One correctness call: poison the outputs, call, check the inputs are unchanged, compare, and
// check the outputs are not a cached copy of another set's.
CallOutcome correctness_call(EvalContext& ctx, int set, int trial, bool write_check,
                             std::vector<std::pair<int, std::uint64_t>>& output_hashes) {
  CallOutcome out;
  auto infra = [&](const char* reason, const Error& e) {
    out.done = ctx.conclude(PtxbStatus::kInfraError, reason, e.message);
    return out;
  };
  auto candidate_fails = [&](const Finding& f) {
    out.done = ctx.fail_candidate(f);
    return out;
  };
  if (auto s = ctx.device.poison(set, trial); !s.ok()) return infra("poison", s.error());
  auto before = ctx.device.input_hash(set);
  if (!before.ok()) return infra("input_hash", before.error());
  auto reply = ctx.candidate.session->call(
      CallRequest{static_cast<std::uint64_t>(set), true, false}, ctx.call_limit, nullptr);
  if (!reply.ok())
    return candidate_fails(call_failure(ctx.candidate, reply.error(), ctx.call_limit));
  if (auto f = reply_findings(*reply, ctx.reply_checks)) return candidate_fails(*f);
  out.has_window = reply->has_window;
  auto after = ctx.device.input_hash(set);
  if (!after.ok()) return infra("input_hash", after.error());
  if (*after != *before)
    return candidate_fails(Finding{PtxbStatus::kRewardHack, std::string(reason::kInputModified),
                                   "the kernel wrote to an input tensor (inputs must stay "
                                   "unchanged; use scratch memory of your own)"});
  auto checks = ctx.device.check(set, trial);
  if (!checks.ok()) return infra("compare", checks.error());
  WorkloadEval& w = ctx.workload;
  if (!write_check) w.checks.insert(w.checks.end(), checks->begin(), checks->end());
  // Before the comparison's verdict: a stale cache also fails the comparison, and the more
  // specific reason is the one a reader needs.
  auto hash = ctx.device.output_hash(set);
  if (!hash.ok()) return infra("output_hash", hash.error());
  if (auto f = cached_output_finding(output_hashes, set, *hash)) return candidate_fails(*f);
  output_hashes.emplace_back(set, *hash);
  if (write_check)
    if (auto s = ctx.device.observe_unwritten(set, trial); !s.ok())
      return infra("unwritten", s.error());
  out.checks = std::move(checks).value();
  return out;
}

// After the last call: elements that kept the poison through both write-check calls, then a
// failure deferred until the write check had its say.
std::optional<StageOutcome> write_check_verdict(EvalContext& ctx,
                                                const std::optional<Finding>& pending_failure) {
  auto unwritten = ctx.device.unwritten(0);
  if (!unwritten.ok())
    return ctx.conclude(PtxbStatus::kInfraError, "unwritten", unwritten.error().message);
  ctx.workload.unwritten = *unwritten;
  for (const auto& [name, count] : *unwritten)
    if (count > 0)
      return ctx.fail_candidate(
          Finding{PtxbStatus::kRewardHack, std::string(reason::kUnwrittenOutput),
                  fmt::format("output {}: {} elements were never written (they kept the poison "
                              "pattern in two consecutive calls with different patterns)",
                              name, count)});
  if (pending_failure) return ctx.fail_candidate(*pending_failure);
  return std::nullopt;
}

}  // namespace

StageOutcome stage_correctness(EvalContext& ctx) {
  const auto start = EvalClock::now();
  ctx.candidate = start_runner(ctx, RunnerRole::kCandidate, "candidate runner");
  if (ctx.candidate.failure) {
    ctx.record_runner_log();
    return ctx.conclude_finding(*ctx.candidate.failure);
  }
  const CorrectnessPlan plan = correctness_plan(ctx.workload.trials, ctx.num_sets);
  // A failure with elements still holding the poison may be an unwritten region: confirm with
  // the write check before reporting it as a plain mismatch.
  std::optional<Finding> pending_failure;
  std::vector<std::pair<int, std::uint64_t>> output_hashes;  // (set, hash) per call
  for (std::size_t i = 0; i < plan.calls.size(); ++i) {
    const auto [set, trial] = plan.calls[i];
    const bool write_check = i >= plan.first_write_check;
    const bool last = i + 1 == plan.calls.size();
    CallOutcome call = correctness_call(ctx, set, trial, write_check, output_hashes);
    if (call.done) return *call.done;
    if (last)
      if (auto done = write_check_verdict(ctx, pending_failure)) return *done;
    if (auto f = first_failure(call.checks)) {
      bool poison_seen = false;
      for (const auto& c : call.checks) poison_seen = poison_seen || c.num_equal_poison > 0;
      // The last call of the plan decided above (unwritten, or the pending failure).
      const bool defer =
          (poison_seen || pending_failure) && f->status != PtxbStatus::kInvalidReference && !last;
      if (!defer) return ctx.fail_candidate(*f);
      if (!pending_failure) pending_failure = f;
      if (!write_check) i = plan.first_write_check - 1;  // the loop's ++i lands on the write check
      continue;
    }
    // Right outputs from a call that enqueued no GPU work: produced outside the window.
    if (!call.has_window)
      return ctx.fail_candidate(
          Finding{PtxbStatus::kRewardHack, std::string(reason::kNoGpuWork),
                  fmt::format("the call on input set {} enqueued no GPU work on any stream, yet "
                              "its outputs are right: they were produced outside the call",
                              set)});
  }
  ctx.stage_done("correctness", start);
  return StageOutcome::kContinue;
}

}  // namespace ptxb
