#include "supervisor/profile_session.h"

#include <thread>

#include "core/strings.h"
#include "eval/integrity_reasons.h"
#include "supervisor/eval_stages.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// ncu's source page of a large kernel runs to megabytes (one line per SASS instruction, twice);
// the cap keeps a runaway report bounded.
constexpr std::size_t kProfileLogCap = 64u << 20;
// After the tool exits, the log thread may still be draining the pipe.
constexpr milliseconds kLogDrainWait{2000};

milliseconds remaining(EvalClock::time_point deadline) {
  const auto left = std::chrono::duration_cast<milliseconds>(deadline - EvalClock::now());
  return std::max(left, milliseconds(1));
}

// The log once the end marker (or the tool's non-zero exit marker) is in it, or after the wait.
std::string drained_log(RunnerSession& session) {
  const auto until = EvalClock::now() + kLogDrainWait;
  std::string log = session.log();
  while (!contains(log, kMarkEnd) && EvalClock::now() < until) {
    std::this_thread::sleep_for(milliseconds(10));
    log = session.log();
  }
  return log;
}

// The warm-up and the candidate calls, as the timing stage makes them. "" when all answered.
std::string make_calls(EvalContext& ctx, RunnerSession& session, const ProfilePlan& plan,
                       EvalClock::time_point deadline) {
  for (int i = 0; i < plan.total_calls(); ++i) {
    const auto set = static_cast<std::uint64_t>(i % ctx.num_sets);
    auto reply = session.call(CallRequest{set, true, false}, remaining(deadline), nullptr);
    if (!reply.ok())
      return fmt::format("call {} of {} under ncu failed: {}", i + 1, plan.total_calls(),
                         reply.error().message);
    if (reply->cuda_error)
      return fmt::format("call {} of {} under ncu: {} in {}", i + 1, plan.total_calls(),
                         reply->cuda_error->name, reply->cuda_error->where);
  }
  return "";
}

// The sandbox's verdict from the run's output and exit, if it stopped something.
std::optional<Finding> sandbox_stop(const RunnerExit& exit, const std::string& log) {
  if (exit.finished && !exit.killed_by_us)
    if (auto f = sandbox_setup_failure(exit.exit_code, log)) return f;
  return sandbox_finding_in_output(log);
}

}  // namespace

ProfiledRun run_profiled_calls(EvalContext& ctx, const ProfilePlan& plan) {
  ProfiledRun run;
  const auto deadline = EvalClock::now() + seconds_to_ms(ctx.options.ncu_timeout_seconds);
  ToolWrap wrap;
  wrap.tool_argv = ncu_call_wrapper(ctx.job.ncu_path, plan, ctx.reply_checks.cubin_functions);
  wrap.runner_args = {"--no-cupti"};
  wrap.log_cap_bytes = kProfileLogCap;
  wrap.start_limit = remaining(deadline);
  auto phase_start = EvalClock::now();
  const auto phase_done = [&](const char* name) {
    run.phases_ms[name] = ms_since(phase_start);
    phase_start = EvalClock::now();
  };
  RunnerSide side = start_runner(ctx, RunnerRole::kCandidate, "profiled runner", &wrap);
  phase_done("start");
  if (!side.session) {
    run.failure = "the profiled runner did not start: " + side.failure->detail;
    if (side.failure->reason == reason::kSandboxSetup) run.sandbox = side.failure;
    return run;
  }
  if (side.failure) {
    run.failure = "the profiled runner did not start: " + side.failure->detail;
  } else {
    run.failure = make_calls(ctx, *side.session, plan, deadline);
    phase_done("calls");
  }
  if (run.failure.empty()) {
    // ncu prints nothing until its target exits: shutdown, then its imports print the pages.
    if (Status s = side.session->shutdown(remaining(deadline)); !s.ok())
      run.failure = "the profiled run did not end cleanly: " + s.error().message;
  } else {
    side.session->kill();
  }
  const RunnerExit exit = side.session->wait(remaining(deadline));
  run.output = drained_log(*side.session);
  phase_done("report");
  run.sandbox = sandbox_stop(exit, run.output);
  if (run.failure.empty() && !contains(run.output, kMarkEnd))
    run.failure = "ncu's report is incomplete (" + exit.describe() + ")";
  return run;
}

}  // namespace ptxb
