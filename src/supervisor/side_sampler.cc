// The timed calls of one side (supervisor/side_sampler.h) and the anti-caching refreshes of the
// candidate's verified calls (design.md §3.4, docs/integrity.md).
#include "supervisor/side_sampler.h"

#include "eval/integrity_reasons.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// Rewrites set `set`'s inputs in place before a verified call and poisons its outputs; returns
// the inputs' hash after the rewrite (the call must leave it unchanged).
Result<std::uint64_t> refresh_inputs(EvalContext& ctx, RefreshKind kind, int set, int trial) {
  const std::uint64_t fresh = ctx.secret_rng();
  PTXB_RETURN_IF_ERROR(kind == RefreshKind::kFull ? ctx.device.regenerate(set, fresh)
                                                  : ctx.device.perturb(set, fresh));
  PTXB_RETURN_IF_ERROR(ctx.device.poison(set, trial));
  return ctx.device.input_hash(set);
}

// Verifies a verified call's outputs and inputs and keeps its time apart (fresh_input_finding).
std::optional<Finding> check_refresh(EvalContext& ctx, SideTiming& out, RefreshKind kind, int set,
                                     int sample, int trial, std::uint64_t input_hash,
                                     const CallReply& reply) {
  auto checks = ctx.device.check(set, trial);
  if (!checks.ok()) return Finding{PtxbStatus::kInfraError, "compare", checks.error().message};
  out.refresh_checks.insert(out.refresh_checks.end(), checks->begin(), checks->end());
  out.fresh_ns.push_back(static_cast<double>(reply.device_ns));
  out.refreshes.push_back(
      RefreshRecord{sample, set, std::string(refresh_kind_name(kind)), reply.device_ns * 1e-6});
  if (auto f = first_failure(*checks)) {
    f->reason = std::string(reason::kStaleOutput);
    f->detail = fmt::format(
                    "after the inputs were rewritten in place ({}) before timed call {}, the "
                    "outputs were wrong (results cached across calls?): ",
                    kind == RefreshKind::kFull ? "all values" : "one block per input", sample + 1) +
                f->detail;
    if (f->status == PtxbStatus::kIncorrectNumerical) f->status = PtxbStatus::kRewardHack;
    return f;
  }
  auto after = ctx.device.input_hash(set);
  if (!after.ok()) return Finding{PtxbStatus::kInfraError, "input_hash", after.error().message};
  if (*after != input_hash)
    return Finding{PtxbStatus::kRewardHack, std::string(reason::kInputModified),
                   fmt::format("timed call {} modified its inputs", sample + 1)};
  return std::nullopt;
}

}  // namespace

bool SideSampler::call(bool warmup) {
  const int sample = static_cast<int>(samples.device_ns.size());
  const int set = call_index++ % ctx.num_sets;
  const int trial = secret_poison_trial(ctx);
  std::optional<RefreshKind> verify;
  if (is_candidate && !warmup) verify = draw_verified_call(ctx.verify_rng, kVerifiedCallFraction);
  std::uint64_t input_hash = 0;
  if (verify) {
    auto refreshed = refresh_inputs(ctx, *verify, set, trial);
    if (!refreshed.ok())
      return fail({PtxbStatus::kInfraError, "refresh", refreshed.error().message});
    input_hash = *refreshed;
  } else if (!warmup) {
    if (auto s = ctx.device.poison(set, trial); !s.ok())
      return fail({PtxbStatus::kInfraError, "poison", s.error().message});
  }
  CallBracket bracket;
  auto reply = side.session->call(CallRequest{static_cast<std::uint64_t>(set), true, false},
                                  call_limit, &bracket);
  if (!reply.ok()) return fail(call_failure(side, reply.error(), call_limit));
  if (auto f = reply_findings(*reply, is_candidate ? ctx.reply_checks : ctx.reference_reply_checks))
    return fail(*f);
  // Correctness passed before timing started, so a call that enqueued nothing did its work
  // somewhere the window does not see.
  if (is_candidate && !reply->has_window)
    return fail({PtxbStatus::kRewardHack, std::string(reason::kNoGpuWork),
                 fmt::format("timed call {} enqueued no GPU work on any stream (the results "
                             "were produced outside the call)",
                             sample + 1)});
  if (verify)
    if (auto f = check_refresh(ctx, out, *verify, set, sample, trial, input_hash, *reply))
      return fail(*f);
  if (warmup) return true;
  // The device time can never exceed the supervisor's own round trip around the call.
  if (static_cast<double>(reply->device_ns) >
      static_cast<double>(bracket.round_trip_ns) + ctx.policy.bracket_tolerance_ns)
    return fail({PtxbStatus::kRewardHack, std::string(reason::kDeviceTimeExceedsBracket),
                 fmt::format("reported device time {} ns exceeds the supervisor's round trip "
                             "{} ns",
                             reply->device_ns, bracket.round_trip_ns)});
  samples.add(*reply, bracket);
  out.kernels.add(*reply);
  if (!verify) out.repeat_ns.push_back(static_cast<double>(reply->device_ns));
  return true;
}

SideTiming time_side(EvalContext& ctx, RunnerSide& side, bool is_candidate,
                     milliseconds call_limit) {
  SideSampler s{ctx, side, is_candidate, call_limit};
  const auto start = EvalClock::now();
  for (int i = 0; i < ctx.policy.warmup_calls; ++i)
    if (!s.call(true)) return s.out;
  while (true) {
    s.seconds = std::chrono::duration<double>(EvalClock::now() - start).count();
    if (s.decision() != SamplingDecision::kContinue) break;
    if (!s.call(false)) return s.out;
  }
  s.finish();
  return s.out;
}

}  // namespace ptxb
