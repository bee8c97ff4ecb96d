// The debug stage (docs/eval.md "Debug stage"): when the candidate ends in RUNTIME_ERROR,
// MEMORY_ERROR or TIMEOUT and EvalOptions::debug is on, explain where, within one time budget:
//   1. compute-sanitizer memcheck over the self-contained call: the most precise fault (kind,
//      block/thread, address, kernel.cu:line); not on a hang, which it would only wait out;
//   2. the self-contained call again with CUDA core dumps on (supervisor/core_dump.h): the driver
//      writes one on a GPU exception, or on a hang when HangTrigger writes to its pipe;
//   3. cuda-gdb in batch mode over that dump: the faulting kernel, PC and frames;
//   4. for an error that surfaced at a synchronization, the launch that caused it.
// Every tool runs in the sandbox, like the profilers. A missing tool or a step without result is
// a note in the record, never a change of the verdict (except a sandbox stop, as elsewhere).
#include <algorithm>
#include <cstdio>

#include "analysis/debug_report.h"
#include "analysis/source_context.h"
#include "core/strings.h"
#include "supervisor/core_dump.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// The raw outputs kept in the record: enough for a golden of one finding or one backtrace.
constexpr std::size_t kRawOutputCap = 16u << 10;
// The core dump's file-size cap in its scratch folder (RLIMIT_FSIZE): without global, shared and
// local memory a dump is registers, ELF images and grid state, a few MB on the H200.
constexpr std::uint64_t kCoreDumpCapBytes = 256ull << 20;
// Left for cuda-gdb after the dump: it loads the ELF images and prints in 1-3 s.
constexpr milliseconds kCudaGdbReserve{5000};
// How long the driver may take to write a hang's dump once triggered (it stops every warp of a
// full grid first).
constexpr milliseconds kHangDumpWait{15000};

struct DebugRun {
  EvalContext& ctx;
  Finding& finding;
  DebugRecord record;
  EvalClock::time_point deadline;

  milliseconds left() const {
    return std::max(milliseconds(0),
                    std::chrono::duration_cast<milliseconds>(deadline - EvalClock::now()));
  }
  void note(std::string text) { record.notes.push_back(std::move(text)); }
};

double debug_seconds(milliseconds ms) {
  return ms.count() / 1000.0;
}

void run_sanitizer(DebugRun& run) {
  EvalContext& ctx = run.ctx;
  if (ctx.job.sanitizer_path.empty()) return run.note("compute-sanitizer: not found; skipped");
  if (run.finding.status == PtxbStatus::kTimeout)
    return run.note("compute-sanitizer: not run on a hang (it would wait as long as the call)");
  // The sanitizer slows kernels 10-100x: at most 45 % of the budget, the rest is the dump's.
  const milliseconds limit = std::min(seconds_to_ms(ctx.options.sanitizer_timeout_seconds),
                                      milliseconds(run.left().count() * 45 / 100));
  auto ran =
      ctx.run_tool(sanitizer_argv(ctx.job.sanitizer_path, "memcheck", ctx.self_contained_argv),
                   debug_seconds(limit), 1u << 20);
  if (!ran.ok()) return run.note("compute-sanitizer: " + ran.error().message);
  if (auto sandboxed = sandbox_failure(*ran)) {
    run.finding = *sandboxed;
    return run.note("compute-sanitizer: stopped by the sandbox: " + sandboxed->detail);
  }
  const std::string output = ran->stdout_text + ran->stderr_text;
  run.record.sanitizer_output = cap_log(output, kRawOutputCap);
  if (ran->timed_out) {
    // A fault in every thread of a large grid is reported thread by thread for minutes; what
    // memcheck printed before the limit still locates it.
    auto cut = parse_sanitizer_output(output, "memcheck", SanitizerEnd::kMayBeCut);
    if (cut.ok()) run.record.fault = most_precise_fault(*cut);
    return run.note(fmt::format(
        "compute-sanitizer: stopped after {:.0f} s{}", debug_seconds(limit),
        run.record.fault ? fmt::format(", {} findings printed by then; the fault is the most "
                                       "precise of them",
                                       cut->findings.size())
                         : " with no finding printed"));
  }
  auto report = parse_sanitizer_output(output, "memcheck");
  if (!report.ok()) return run.note("compute-sanitizer: " + report.error().message);
  run.record.fault = most_precise_fault(*report);
  if (!run.record.fault) run.note("compute-sanitizer: memcheck found no error on one call");
}

// The self-contained call with core dumps on; the dump's path, or "" with a note saying why.
std::string take_core_dump(DebugRun& run, bool hang) {
  EvalContext& ctx = run.ctx;
  const milliseconds for_run = run.left() - kCudaGdbReserve;
  if (for_run < milliseconds(2000)) {
    run.note("core dump: skipped, the debug budget is spent");
    return "";
  }
  ProcessSpec spec;
  spec.argv = ctx.self_contained_argv;
  spec.output_cap_bytes = 64u << 10;
  std::string scratch;
  auto wrapped = ctx.sandbox->wrap_debug_run(
      spec, [hang](const std::string& dir) { return core_dump_environment(dir, hang); },
      kCoreDumpCapBytes, scratch);
  if (!wrapped.ok()) {
    run.note("core dump: " + wrapped.error().message);
    return "";
  }
  // A hang is triggered a little after the per-call limit would have ended the call (start-up
  // and input set-up come first), within a third of what is left.
  const milliseconds trigger_after =
      std::min(std::max(ctx.call_limit + milliseconds(2000), milliseconds(2000)), for_run / 3);
  std::optional<HangTrigger> trigger;
  if (hang) {
    trigger.emplace(scratch, trigger_after, kHangDumpWait);
    wrapped->on_start = [&trigger](pid_t group) { trigger->started(group); };
  }
  wrapped->timeout = for_run;
  auto ran = ctx.tools.run(*wrapped);
  if (trigger) trigger->stop();
  if (!ran.ok()) {
    run.note("core dump: the self-contained call did not start: " + ran.error().message);
    return "";
  }
  auto dump = find_core_dump(scratch);
  if (!dump) {
    std::string why = hang && trigger && !trigger->failure().empty()
                          ? trigger->failure()
                          : "the self-contained call " + ran->describe();
    // The driver's dump writer runs in the candidate's process, under its seccomp filter: name
    // the call the filter refused, so the policy can be judged (the verdict stays as it was).
    if (auto sandboxed = sandbox_failure(*ran)) why += "; " + sandboxed->detail;
    run.note("core dump: none was written (" + why + ")");
    return "";
  }
  run.record.core_dump = CoreDumpRecord{hang ? "hang" : "exception", dump->bytes, std::nullopt};
  return dump->path;
}

void read_core_dump(DebugRun& run, const std::string& dump_path) {
  EvalContext& ctx = run.ctx;
  const milliseconds limit = std::max(run.left(), milliseconds(3000));
  auto ran =
      ctx.run_tool(cuda_gdb_argv(ctx.job.cuda_gdb_path, dump_path), debug_seconds(limit), 1u << 20);
  std::remove(dump_path.c_str());  // no longer needed; the staging folder goes later anyway
  if (!ran.ok()) return run.note("cuda-gdb: " + ran.error().message);
  const std::string output = ran->stdout_text + ran->stderr_text;
  run.record.cuda_gdb_output = cap_log(output, kRawOutputCap);
  if (ran->timed_out)
    return run.note(fmt::format("cuda-gdb: no result within {:.0f} s", debug_seconds(limit)));
  auto report = parse_cuda_gdb_output(output);
  if (!report.ok()) return run.note("cuda-gdb: " + report.error().message);
  run.record.core_dump->cuda_gdb = std::move(report).value();
}

void run_core_dump(DebugRun& run) {
  if (run.ctx.job.cuda_gdb_path.empty()) return run.note("cuda-gdb: not found; no core dump taken");
  const std::string dump = take_core_dump(run, run.finding.status == PtxbStatus::kTimeout);
  if (!dump.empty()) read_core_dump(run, dump);
}

// The kernel a tool named, as its launch would spell it.
std::string faulting_kernel(const DebugRecord& record) {
  if (record.fault && !record.fault->kernel.empty()) return record.fault->kernel;
  if (record.core_dump && record.core_dump->cuda_gdb)
    if (const DebugFrame* frame = record.core_dump->cuda_gdb->kernel_frame())
      return frame->function;
  return "";
}

// An asynchronous error is reported by the next synchronizing call (the runner's
// cudaStreamSynchronize, or the candidate's own); a launch-configuration error by the launch's
// cudaGetLastError, which the candidate rarely calls. Either way the launch is the lead. A hang
// that neither the dump nor cuda-gdb located (on the H200 both failed on user-triggered dumps,
// bench/results/debug_stage.md) still has one: the launch of the kernel that did not finish.
void infer_launch(DebugRun& run) {
  const bool hang = run.finding.status == PtxbStatus::kTimeout;
  const bool at_sync = !hang && (contains(run.finding.detail, "ynchroniz") ||
                                 (run.record.fault && run.record.fault->api_error));
  const bool located = choose_location(run.record, run.ctx.job.request.source_name).has_value();
  if (!at_sync && located) return;
  const std::string& source = run.ctx.job.request.source;
  std::string kernel = faulting_kernel(run.record);
  std::optional<int> line = infer_launch_line(source, 0, kernel);
  if (!line && !kernel.empty()) {
    kernel.clear();  // named, but launched through a wrapper or a macro: the nearest launch
    line = infer_launch_line(source, 0);
  }
  if (line) run.record.launch = LaunchSite{kernel, *line, hang};
}

bool debuggable(const Finding& finding) {
  return finding.status == PtxbStatus::kRuntimeError ||
         finding.status == PtxbStatus::kMemoryError || finding.status == PtxbStatus::kTimeout;
}

}  // namespace

void debug_failure(EvalContext& ctx, Finding& finding) {
  if (!ctx.options.debug || !debuggable(finding)) return;
  // The sandbox ended the runner: its verdict needs no debugger, and re-running would only hit
  // the same wall.
  if (starts_with(finding.reason, "sandbox_")) return;
  const auto start = EvalClock::now();
  DebugRun run{ctx, finding, {}, start + seconds_to_ms(ctx.options.debug_budget_seconds)};
  run_sanitizer(run);
  if (debuggable(run.finding)) run_core_dump(run);
  infer_launch(run);
  const std::string& name = ctx.job.request.source_name;
  run.record.points_at = choose_location(run.record, name);
  run.record.elapsed_ms = ms_since(start);
  run.record.summary = render_debug_summary(run.record, ctx.job.request.source, name);
  if (run.record.points_at)
    finding.detail +=
        fmt::format("\nthe debug stage points at {}:{} ({})", run.record.points_at->file,
                    run.record.points_at->line, run.record.points_at->source);
  ctx.result.debug = std::move(run.record);
  ctx.stage_done("debug", start);
}

}  // namespace ptxb
