// The batch bound (docs/integrity.md "The batch bound", eval/batch_bound.h): calibrated on the
// reference runner, measured on the candidate runner, and the rule that ties the CUPTI median
// to it. Every time here is the supervisor's own clock; every output is verified here.
#include "core/strings.h"
#include "eval/integrity_reasons.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

struct BatchRun {
  double bracket_ms = 0;
  double write_ms = 0;  // the write phase before the bracket (fresh inputs, poisoned outputs)
  std::optional<Finding> failure;
};

std::vector<int> batch_set_indices(const EvalContext& ctx, int calls) {
  std::vector<int> sets;
  for (int i = 0; i < calls; ++i) sets.push_back(ctx.num_sets + i);
  return sets;
}

Finding infra(const std::string& step, const Error& e) {
  return Finding{PtxbStatus::kInfraError, step, e.message};
}

// Fresh inputs (and their reference outputs) and poisoned outputs for every set of a batch;
// returns how long the supervisor's own GPU work took.
Result<double> write_phase(EvalContext& ctx, const std::vector<int>& sets,
                           std::vector<int>& trials) {
  const auto start = EvalClock::now();
  for (int set : sets) {
    PTXB_RETURN_IF_ERROR(ctx.device.regenerate(set, ctx.secret_rng()));
    trials.push_back(secret_poison_trial(ctx));
    PTXB_RETURN_IF_ERROR(ctx.device.poison(set, trials.back()));
  }
  return ms_since(start);
}

// After the bracket: every output right, every input unchanged, no sampled block written late.
std::optional<Finding> verify_batch(EvalContext& ctx, const std::vector<int>& sets,
                                    const std::vector<int>& trials,
                                    const std::vector<std::uint64_t>& input_hashes) {
  for (std::size_t i = 0; i < sets.size(); ++i) {
    auto checks = ctx.device.check_batch_output(sets[i], trials[i]);
    if (!checks.ok()) return infra("compare", checks.error());
    if (auto f = first_failure(*checks)) {
      f->status = PtxbStatus::kRewardHack;
      f->reason = std::string(reason::kBatchOutput);
      f->detail = fmt::format(
                      "call {} of {} of a batch (calls back to back, one reply) left a "
                      "wrong output: ",
                      i + 1, sets.size()) +
                  f->detail;
      return f;
    }
    auto hash = ctx.device.input_hash(sets[i]);
    if (!hash.ok()) return infra("input_hash", hash.error());
    if (*hash != input_hashes[i])
      return Finding{PtxbStatus::kRewardHack, std::string(reason::kInputModified),
                     fmt::format("call {} of a batch modified its inputs", i + 1)};
  }
  auto late = ctx.device.snapshot_changed();
  if (!late.ok()) return infra("snapshot", late.error());
  if (*late > 0)
    return Finding{PtxbStatus::kRewardHack, std::string(reason::kLateOutput),
                   fmt::format("{} sampled output blocks changed after the runner replied to a "
                               "batch: the reply came before the work was done",
                               *late)};
  return std::nullopt;
}

// One batch of `sets` (none: an empty batch, which measures the overhead). The bracket runs
// from just before the request to the completed snapshot of the outputs.
// The reference's batches are not verified: it is trusted, and only its bracket is wanted.
BatchRun run_batch(EvalContext& ctx, RunnerSide& side, const std::vector<int>& sets, bool empty,
                   const ReplyCheckOptions& checks, milliseconds limit) {
  const bool verify = !empty && &side == &ctx.candidate;
  BatchRun run;
  std::vector<int> trials;
  std::vector<std::uint64_t> hashes;
  if (!empty) {
    auto written = write_phase(ctx, sets, trials);
    if (!written.ok()) return BatchRun{0, 0, infra("batch_inputs", written.error())};
    run.write_ms = *written;
  }
  if (verify) {
    for (int set : sets) {
      auto hash = ctx.device.input_hash(set);
      if (!hash.ok()) return BatchRun{0, 0, infra("input_hash", hash.error())};
      hashes.push_back(*hash);
    }
  }
  if (Status s = ctx.device.snapshot_prepare(sets, ctx.secret_rng()); !s.ok())
    return BatchRun{0, 0, infra("snapshot", s.error())};
  BatchRequest request;
  if (!empty)
    for (int set : sets) request.sets.push_back(static_cast<std::uint64_t>(set));
  const auto t0 = EvalClock::now();
  auto reply = side.session->batch(request, limit);
  const Status taken = reply.ok() ? ctx.device.snapshot_take() : ok_status();
  run.bracket_ms = ms_since(t0);
  if (!reply.ok()) return BatchRun{0, 0, call_failure(side, reply.error(), limit)};
  if (!taken.ok()) return BatchRun{0, 0, infra("snapshot", taken.error())};
  if ((run.failure = batch_reply_finding(*reply, checks))) return run;
  if (verify) run.failure = verify_batch(ctx, sets, trials, hashes);
  return run;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : percentile_sorted(values, 0.5);
}

}  // namespace

std::optional<Finding> batch_reply_finding(const BatchReply& reply,
                                           const ReplyCheckOptions& options) {
  CallReply as_call;
  as_call.cuda_error = reply.cuda_error;
  as_call.leftover_threads = reply.leftover_threads;
  as_call.leftover_processes = reply.leftover_processes;
  return reply_findings(as_call, options);
}

int initial_batch_sets(const EvalContext& ctx, double physical_floor_ms) {
  if (!is_library_reference(ctx.task.reference_backend)) return 0;
  // The floor is below the real time, so this K is at least the one the calibration will want.
  return batch_calls(ctx.bound_policy.overhead_estimate_ms, physical_floor_ms, ctx.bound_policy);
}

std::optional<Finding> calibrate_bound(EvalContext& ctx, RunnerSide& reference,
                                       double reference_median_ms) {
  if (ctx.batch_sets == 0) return std::nullopt;
  const BatchBoundPolicy& policy = ctx.bound_policy;
  const milliseconds limit = seconds_to_ms(60.0);
  BatchBoundRecord calibration;
  calibration.margin = policy.margin;
  const std::vector<int> all = batch_set_indices(ctx, ctx.batch_sets);
  std::vector<double> overheads;
  for (int i = 0; i < policy.overhead_samples; ++i) {
    BatchRun run = run_batch(ctx, reference, all, true, ctx.reference_reply_checks, limit);
    if (run.failure) return run.failure;
    overheads.push_back(run.bracket_ms);
  }
  calibration.overhead_ms = median_of(overheads);
  calibration.calls =
      std::min(ctx.batch_sets, batch_calls(calibration.overhead_ms, reference_median_ms, policy));
  const std::vector<int> sets = batch_set_indices(ctx, calibration.calls);
  for (int i = 0; i < policy.reference_batches; ++i) {
    BatchRun run = run_batch(ctx, reference, sets, false, ctx.reference_reply_checks, limit);
    if (run.failure) return run.failure;
    const double u = bound_per_call_ms(run.bracket_ms, calibration.overhead_ms, calibration.calls);
    calibration.reference_u_ms = std::min(calibration.reference_u_ms.value_or(u), u);
    calibration.write_calibration_ms = std::max(calibration.write_calibration_ms, run.write_ms);
  }
  calibration.reference_cupti_median_ms = reference_median_ms;
  ctx.bound_calibration = calibration;
  return std::nullopt;
}

StageOutcome stage_bound(EvalContext& ctx) {
  if (!ctx.bound_calibration) return StageOutcome::kContinue;
  const auto start = EvalClock::now();
  const BatchBoundPolicy& policy = ctx.bound_policy;
  BatchBoundRecord record = *ctx.bound_calibration;
  const std::vector<int> sets = batch_set_indices(ctx, record.calls);
  // A slow write phase means GPU work besides the supervisor's only when nobody else is on the
  // GPU: with other evaluations sharing it (agent runs with several GPU slots), their work slows
  // it too, and the candidate would be blamed for it. Expected now: the supervisor and the
  // candidate's runner (the reference runner has exited).
  if (auto facts = ctx.device.facts(); facts.ok() && facts->compute_processes > 2) {
    record.write_check = false;
    record.write_check_off =
        fmt::format("{} compute processes on the GPU (2 expected)", facts->compute_processes);
  }
  while (static_cast<int>(record.u_ms_samples.size()) < policy.candidate_batches) {
    BatchRun run = run_batch(ctx, ctx.candidate, sets, false, ctx.reply_checks, ctx.call_limit);
    if (run.failure) return ctx.fail_candidate(*run.failure);
    if (record.write_check && write_phase_void(run.write_ms, record.write_calibration_ms, policy)) {
      if (++record.void_batches >= policy.max_void_batches)
        return ctx.fail_candidate(Finding{
            PtxbStatus::kRewardHack, std::string(reason::kBatchVoid),
            fmt::format("the supervisor's input writes before {} batches took up to {:.2f} ms "
                        "against {:.2f} ms calibrated: GPU work was running between calls",
                        record.void_batches, run.write_ms, record.write_calibration_ms)});
      continue;
    }
    record.u_ms_samples.push_back(
        bound_per_call_ms(run.bracket_ms, record.overhead_ms, record.calls));
  }
  record.u_ms = *std::min_element(record.u_ms_samples.begin(), record.u_ms_samples.end());
  WorkloadEval& w = ctx.workload;
  record.cupti_median_ms = w.candidate_timing->median_ms;
  record.cost_ms = ms_since(start);
  record.bound_ms =
      scaled_bound_ms(record.u_ms, record.reference_u_ms, record.reference_cupti_median_ms);
  BoundJudgement judged = judge_against_bound(record.cupti_median_ms, record.bound_ms, policy);
  // With other processes on the GPU, U also holds their work: it still rejects a forgery far
  // below it, but it does not replace a time (the trace is marked noisy anyway).
  if (judged == BoundJudgement::kBound && !record.write_check) judged = BoundJudgement::kCupti;
  if (record.reference_cupti_median_ms && record.bound_ms > 0)
    record.honest_speedup = *record.reference_cupti_median_ms / record.bound_ms;
  record.time_used = judged == BoundJudgement::kBound ? "bound" : "cupti";
  w.integrity.batch_bound = record;
  ctx.stage_done("batch_bound", start);
  if (judged == BoundJudgement::kForged)
    return ctx.fail_candidate(Finding{
        PtxbStatus::kRewardHack, std::string(reason::kBelowBatchBound),
        fmt::format("the in-process median {:.4f} ms is below half of {:.4f} ms, the bound from "
                    "the per-call time {:.4f} ms the supervisor measured around {} verified "
                    "calls back to back: the reported times are not the real ones",
                    record.cupti_median_ms, record.bound_ms, record.u_ms, record.calls)});
  // The time used from here on (speedup, floor): the bound where the CUPTI median is below
  // (1 - m) of it.
  if (judged == BoundJudgement::kBound) w.candidate_timing->median_ms = record.bound_ms;
  return StageOutcome::kContinue;
}

}  // namespace ptxb
