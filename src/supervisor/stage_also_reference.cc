// The optional second reference (EvalOptions::also_reference, eval/also_reference.h), after the
// candidate PASSED: its own reference runner, correctness calls against the task reference's
// outputs, then the sampling code that calibrates the primary reference (time_side), alone on
// the GPU (the candidate runner has shut down). The primary protocol is untouched: this stage
// runs after the verdict, and only when asked. Whatever happens here is recorded in
// workload.reference.also_reference and never changes the candidate's verdict.
#include "core/clock.h"
#include "eval/also_reference.h"
#include "protocol/reference_selector.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// What libptxbench_reference.so prints before it aborts (mains/reference_entry.cc).
constexpr std::string_view kLibraryPrefix = "libptxbench_reference: ";

// The library's last own message in its runner's log, other than the "prepared" line: why it
// refused (e.g. "flashinfer_mha_prefill: FlashInfer 0.6.14 has no SM90 prefill kernel for
// head_dim 96 ..."); "" when it printed none.
std::string library_message(const std::string& log) {
  std::string said;
  for (std::size_t at = log.find(kLibraryPrefix); at != std::string::npos;
       at = log.find(kLibraryPrefix, at + 1)) {
    if (at != 0 && log[at - 1] != '\n') continue;
    const std::size_t end = log.find('\n', at);
    const std::string line = log.substr(at, end == std::string::npos ? end : end - at);
    if (!line.starts_with(kPreparedLinePrefix)) said = line.substr(kLibraryPrefix.size());
  }
  return said;
}

// A runner started with `selector` in place of the task's own; the sandbox and the context get
// the primary selector back before anything else starts a runner.
RunnerSide start_with_selector(EvalContext& ctx, const std::string& selector) {
  const std::string primary = ctx.reference_selector;
  ctx.reference_selector = selector;
  ctx.sandbox->set_reference_selector(selector);
  RunnerSide side = start_runner(ctx, RunnerRole::kReference, "second reference runner");
  ctx.reference_selector = primary;
  ctx.sandbox->set_reference_selector(primary);
  return side;
}

// A failed start-up or call: "unavailable" when the library said why before its first call
// finished (it refused the task), "failed" otherwise.
void record_failure(AlsoReferenceRecord& rec, const RunnerSide& side, const Finding& failure,
                    bool before_first_call_finished) {
  const std::string said = side.session ? library_message(side.session->log()) : "";
  rec.status = !said.empty() && before_first_call_finished ? "unavailable" : "failed";
  rec.why = said.empty() ? failure.reason + ": " + failure.detail : said;
  if (side.session && said.empty()) rec.why += "\n" + cap_log(side.session->log(), 4096);
}

// One call per correctness input set, on a fresh poison pattern, compared with the task
// reference's outputs (the task tolerance, as for the candidate). A call failure is returned;
// the comparisons go to rec.checks.
std::optional<Finding> check_outputs(EvalContext& ctx, RunnerSide& side, AlsoReferenceRecord& rec,
                                     bool& first_call_finished) {
  const milliseconds limit = seconds_to_ms(60.0);  // as the primary reference's calls
  for (int set = 0; set < ctx.num_sets; ++set) {
    const int trial = secret_poison_trial(ctx);
    if (auto s = ctx.device.poison(set, trial); !s.ok())
      return Finding{PtxbStatus::kInfraError, "poison", s.error().message};
    auto reply = side.session->call(CallRequest{static_cast<std::uint64_t>(set), true, false},
                                    limit, nullptr);
    if (!reply.ok()) return call_failure(side, reply.error(), limit);
    first_call_finished = true;
    if (auto f = reply_findings(*reply, ctx.reference_reply_checks)) return f;
    auto checks = ctx.device.check(set, trial);
    if (!checks.ok()) return Finding{PtxbStatus::kInfraError, "compare", checks.error().message};
    rec.checks.insert(rec.checks.end(), checks->begin(), checks->end());
  }
  return std::nullopt;
}

// Times a runner whose outputs were right; fills rec.timing, the plan and the speedup.
void time_also_reference(EvalContext& ctx, RunnerSide& side, AlsoReferenceRecord& rec,
                         const WorkloadEval& recorded) {
  SideTiming timing = time_side(ctx, side, false, seconds_to_ms(60.0));
  if (timing.failure) {
    record_failure(rec, side, *timing.failure, false);
    return;
  }
  rec.status = "measured";
  rec.timing = timing.stats;
  rec.measured_at = iso_utc_now();
  rec.method =
      "CUPTI activity window of each call in a ptxbench-runner process, L2 flushed before every "
      "sample, same policy and buffers as the candidate; timed alone after the candidate's "
      "timing (the primary reference's solo calibration code), in this evaluation";
  rec.backend_description = prepared_description_in_log(side.session->log());
  if (recorded.candidate_timing && recorded.candidate_timing->median_ms > 0)
    rec.speedup = timing.stats.median_ms / recorded.candidate_timing->median_ms;
}

}  // namespace

StageOutcome stage_also_reference(EvalContext& ctx) {
  if (ctx.options.also_reference.empty() || ctx.result.workloads.empty())
    return StageOutcome::kContinue;
  WorkloadEval& recorded = ctx.result.workloads.back();  // recorded by stage_integrity
  if (recorded.status != PtxbStatus::kPassed) return StageOutcome::kContinue;
  const auto start = EvalClock::now();
  AlsoReferenceRecord rec;
  rec.name = ctx.options.also_reference;
  auto selector = also_reference_selector(rec.name, ctx.task);
  auto parsed = selector.ok() ? parse_reference_selector(*selector)
                              : Result<ReferenceSelector>(selector.error());
  RunnerSide side;
  if (!parsed.ok()) {
    // The pipeline refused such requests before compiling; a job built elsewhere may not have.
    rec.status = "failed";
    rec.why = parsed.error().message;
  } else {
    rec.selector = *selector;
    rec.backend = parsed->backend;
    side = start_with_selector(ctx, rec.selector);
    bool first_call_finished = false;
    if (side.failure) {
      record_failure(rec, side, *side.failure, true);
    } else if (auto f = check_outputs(ctx, side, rec, first_call_finished)) {
      record_failure(rec, side, *f, !first_call_finished);
    } else if (auto wrong = first_failure(rec.checks)) {
      // Wrong outputs are reported as such and never timed.
      rec.status = "incorrect";
      rec.why = wrong->detail;
      recorded.flags.push_back("also_reference_incorrect");
    } else {
      time_also_reference(ctx, side, rec, recorded);
    }
  }
  if (side.session) {
    (void)side.session->shutdown(milliseconds(10000));
    (void)side.session->wait(milliseconds(5000));
  }
  recorded.reference.also_reference = rec;
  ctx.stage_done("also_reference", start);
  return StageOutcome::kContinue;
}

}  // namespace ptxb
