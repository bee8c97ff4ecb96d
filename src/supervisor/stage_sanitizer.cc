// compute-sanitizer: the --sanitize gate before any timed GPU stage, and the one memcheck pass
// that locates a memory fault found later.
#include "analysis/sanitizer_report.h"
#include "supervisor/eval_stages.h"

namespace ptxb {

StageOutcome stage_sanitizer(EvalContext& ctx) {
  const EvalOptions& options = ctx.options;
  if (!options.sanitize) return StageOutcome::kContinue;
  const auto start = EvalClock::now();
  if (ctx.job.sanitizer_path.empty())
    return ctx.finish(PtxbStatus::kInfraError, "sanitizer_unavailable",
                      "--sanitize was asked for but compute-sanitizer was not found");
  auto ran = ctx.run_tool(
      sanitizer_argv(ctx.job.sanitizer_path, options.sanitizer_tool, ctx.self_contained_argv),
      options.sanitizer_timeout_seconds, 1u << 20);
  ctx.stage_done("sanitizer", start);
  if (!ran.ok())
    return ctx.finish(PtxbStatus::kInfraError, "sanitizer_failed", ran.error().message);
  if (auto f = sandbox_failure(*ran)) return ctx.finish(f->status, f->reason, f->detail);
  if (ran->timed_out)
    return ctx.finish(PtxbStatus::kTimeout, "sanitizer_timeout",
                      fmt::format("the call did not finish under compute-sanitizer within {:.0f} s",
                                  options.sanitizer_timeout_seconds));
  auto report = parse_sanitizer_output(ran->stdout_text + ran->stderr_text, options.sanitizer_tool);
  if (!report.ok())
    return ctx.finish(PtxbStatus::kInfraError, "sanitizer_output", report.error().message);
  ctx.result.sanitizer = SanitizerRecord{*report, report->summary(5)};
  if (report->error_count > 0)
    return ctx.finish(PtxbStatus::kMemoryError, "sanitizer_" + options.sanitizer_tool,
                      report->summary(5));
  return StageOutcome::kContinue;
}

void locate_memory_error(EvalContext& ctx, Finding& f) {
  // With the gate on, the sanitizer already ran (and found nothing on the self-contained call).
  if (ctx.options.sanitize || ctx.job.sanitizer_path.empty()) return;
  const auto start = EvalClock::now();
  auto ran =
      ctx.run_tool(sanitizer_argv(ctx.job.sanitizer_path, "memcheck", ctx.self_contained_argv),
                   ctx.options.sanitizer_timeout_seconds, 1u << 20);
  if (ran.ok())
    if (auto sandboxed = sandbox_failure(*ran)) f = *sandboxed;
  // The line number comes from kernel.cu:LINE in memcheck's report, thanks to -lineinfo.
  if (ran.ok() && !ran->timed_out && f.status == PtxbStatus::kMemoryError) {
    auto report = parse_sanitizer_output(ran->stdout_text + ran->stderr_text, "memcheck");
    if (report.ok() && report->error_count > 0) {
      ctx.result.sanitizer = SanitizerRecord{*report, report->summary(3)};
      f.detail += "\ncompute-sanitizer memcheck on one call: " + report->summary(3);
    }
  }
  ctx.stage_done("locate_memory_error", start);
}

}  // namespace ptxb
