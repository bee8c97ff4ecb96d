#include "supervisor/evaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "abi/signature.h"
#include "analysis/ncu_source.h"
#include "analysis/sanitizer_report.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/strings.h"
#include "core/version.h"
#include "eval/integrity_reasons.h"
#include "supervisor/eval_sandbox.h"
#include "supervisor/integrity_checks.h"

namespace ptxb {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

milliseconds seconds_to_ms(double seconds) {
  return milliseconds(static_cast<std::int64_t>(std::ceil(seconds * 1000.0)));
}

// The model sees runner output as logs only; keep the tail, where crashes print.
std::string cap_log(const std::string& log, std::size_t cap = 16u << 10) {
  if (log.size() <= cap) return log;
  return fmt::format("[{} earlier bytes dropped]\n", log.size() - cap) +
         log.substr(log.size() - cap);
}

// One side's (candidate or reference) runner process and what went wrong with it.
struct Side {
  std::unique_ptr<RunnerSession> session;
  std::optional<Finding> failure;
  std::string role;
  bool answered_hello = false;  // before that, only ptxbench-sandbox can have failed
};

// A profiler run that the sandbox ended: its set-up failed (INFRA_ERROR), or the runner inside
// made a call the filter stops (FORBIDDEN).
std::optional<Finding> sandbox_failure(const ProcessResult& ran) {
  const std::string output = ran.stdout_text + ran.stderr_text;
  if (auto f = sandbox_setup_failure(ran.exit_code, output)) return f;
  return sandbox_finding_in_output(output);
}

// Turns a failed call (timeout, dead runner) into the candidate's status.
Finding call_failure(Side& side, const Error& error, milliseconds limit) {
  if (error.code == "timeout") {
    side.session->kill();
    side.session->wait(milliseconds(5000));
    return Finding{PtxbStatus::kTimeout, std::string(reason::kCallTimeout),
                   fmt::format("the call did not finish within the per-call limit of {:.1f} s; the "
                               "runner's process group was killed",
                               limit.count() / 1000.0)};
  }
  RunnerExit exit = side.session->wait(milliseconds(5000));
  if (exit.finished && !exit.killed_by_us) {
    if (!side.answered_hello)
      if (auto f = sandbox_setup_failure(exit.exit_code, side.session->log())) return *f;
    if (auto f = sandbox_finding(exit.term_signal, side.session->log())) return *f;
  }
  if (error.code == "eof" || error.code == "frame_truncated" || exit.finished) {
    return Finding{
        PtxbStatus::kRuntimeError,
        std::string(exit.term_signal != 0 ? reason::kRunnerCrashed : reason::kRunnerExited),
        fmt::format("the {} process ended during the call: {}", side.role, exit.describe())};
  }
  return Finding{PtxbStatus::kRuntimeError, std::string(reason::kCallFailed), error.message};
}

std::optional<Finding> first_failure(const std::vector<OutputCheck>& checks) {
  for (const auto& c : checks) {
    if (c.num_nonfinite_reference > 0)
      return Finding{PtxbStatus::kInvalidReference, std::string(reason::kNonfiniteReference),
                     fmt::format("the reference output {} holds {} NaN/Inf values", c.output,
                                 c.num_nonfinite_reference)};
  }
  for (const auto& c : checks) {
    if (c.passed()) continue;
    const bool nonfinite = c.num_nonfinite_candidate > 0;
    std::string detail = fmt::format(
        "output {} (trial {}): {} of {} elements fail |x-ref| > atol and > rtol*|ref|; max abs "
        "error {:.4g}, max rel error {:.4g}, matched {:.4f}",
        c.output, c.trial, c.num_failing, c.num_elements, c.max_abs_error, c.max_rel_error,
        c.matched_ratio);
    if (c.first_failing_index >= 0)
      detail +=
          fmt::format("; first at flat index {}: got {:.6g}, expected {:.6g}",
                      c.first_failing_index, c.first_failing_candidate, c.first_failing_reference);
    if (nonfinite) detail += fmt::format("; {} NaN/Inf values", c.num_nonfinite_candidate);
    return Finding{PtxbStatus::kIncorrectNumerical,
                   std::string(nonfinite ? reason::kNonfiniteOutput : reason::kMismatch), detail};
  }
  return std::nullopt;
}

struct SideTiming {
  TimingStats stats;
  std::optional<Finding> failure;
  std::vector<OutputCheck> refresh_checks;
  std::vector<double> fresh_ns;   // device times of the calls right after an in-place rewrite
  std::vector<double> repeat_ns;  // device times of the other timed calls
  Json refreshes = Json::array();
};

// The cubin's kernels as cuobjdump named them, for the foreign-kernel check.
std::vector<std::string> cubin_functions(const CompileResult& compile) {
  std::vector<std::string> names;
  for (const auto& kernel : compile.sass.kernels) names.push_back(kernel.name);
  return names;
}

}  // namespace

bool is_backward_task(const Task& task) {
  return task.reference_backend == "cudnn_sdpa_bwd" || contains(task.cost_model, "bwd");
}

std::string reference_selector(const Task& task) {
  return task.reference_backend + (ends_with(task.cost_model, "_causal") ? ":causal" : "");
}

Json self_contained_params(const Task& task, const std::string& signature, std::uint64_t seed) {
  const RunSignature run = make_run_signature(task.definition);
  const auto axes = task.axis_values();
  Json params = Json::array();
  for (const auto& p : run.parameters) {
    if (p.kind == AbiParameter::Kind::kStream) continue;
    if (p.kind == AbiParameter::Kind::kAxis) {
      params.push_back(Json{{"name", p.name}, {"i64", axes.at(p.source_name)}});
      continue;
    }
    const TensorSpec* tensor = task.definition.find_tensor(p.source_name);
    std::uint64_t elements = 1;
    if (tensor && tensor->shape)
      for (const auto& axis : *tensor->shape) elements *= static_cast<std::uint64_t>(axes.at(axis));
    params.push_back(Json{{"name", p.name},
                          {"tensor",
                           {{"dtype", tensor ? std::string(dtype_name(tensor->dtype)) : "float32"},
                            {"elements", elements},
                            {"init", p.kind == AbiParameter::Kind::kInput ? "normal" : "zeros"}}}});
  }
  return Json{{"signature", signature}, {"seed", seed}, {"params", params}};
}

EvalResult Evaluator::run(const SupervisorJob& job, const Task& task,
                          const CompileResult& compile) {
  const EvalOptions& options = job.request.options;
  EvalResult result;
  result.task = task.name;
  result.arch = compile.artifact.arch;
  result.options = options;
  result.harness_version = harness_version();
  result.timestamp = iso_utc_now();
  for (const auto& [family, count] : compile.sass.family_totals)
    result.target_instructions.static_counts[family] = count;
  auto stage = [&](const std::string& name, Clock::time_point start) {
    result.stage_ms.emplace_back(name, ms_since(start));
  };
  auto finish = [&](PtxbStatus status, std::string reason, std::string message) {
    result.status = status;
    result.reason = std::move(reason);
    result.message = std::move(message);
    return result;
  };

  auto start = Clock::now();
  auto facts = device_.facts();
  if (!facts.ok()) return finish(PtxbStatus::kInfraError, "gpu_unavailable", facts.error().message);
  result.environment = facts->to_json();
  result.environment["gpu_name"] = facts->name;
  stage("gpu_probe", start);

  const std::string so_path = compile.artifact.path_of(compile.artifact.shared_object);
  const std::string signature = compile.artifact.abi_signature;
  // The evaluation's staging directory: the candidate's .so and the profilers' params, where
  // the sandboxed uid can read them, and one scratch directory per sandboxed process.
  // Under /var/tmp, not /tmp: the sandbox mounts a private tmpfs over /tmp (Nsight Compute and
  // compute-sanitizer keep lock and temporary files there), which would hide the staged files.
  auto scratch = make_temp_directory("ptxb-eval", is_directory("/var/tmp") ? "/var/tmp" : "");
  if (!scratch.ok()) return finish(PtxbStatus::kInfraError, "scratch", scratch.error().message);
  struct RemoveOnExit {
    std::string dir;
    ~RemoveOnExit() { remove_tree(dir); }
  } remove_staging{*scratch};
  const std::string params_path = *scratch + "/params.json";
  const std::string staged_so = *scratch + "/" + compile.artifact.shared_object;
  {
    auto so_bytes = read_file(so_path, 1u << 30);
    if (!so_bytes.ok()) return finish(PtxbStatus::kInfraError, "scratch", so_bytes.error().message);
    if (auto copied = write_file_atomic(staged_so, *so_bytes); !copied.ok())
      return finish(PtxbStatus::kInfraError, "scratch", copied.error().message);
  }
  // A/A mode (test-only): the library sits in the candidate slot for the profilers too, after
  // one unprofiled warm-up call that builds its plans.
  const bool library_as_candidate = options.reference_as_candidate;
  Json self_contained = self_contained_params(task, signature, options.seed);
  if (library_as_candidate) self_contained["warmup_calls"] = 1;
  if (auto written = write_file_atomic(params_path, self_contained.dump()); !written.ok())
    return finish(PtxbStatus::kInfraError, "scratch", written.error().message);
  const std::vector<std::string> self_contained_argv = {
      job.runner_path, "--self-contained",
      "--so",          library_as_candidate ? job.reference_library_path : staged_so,
      "--params-json", params_path};

  // ---- sandbox self-check (before any candidate code runs) ----
  start = Clock::now();
  EvalSandbox sandbox(job, *scratch, reference_selector(task), signature);
  const Status sandbox_ready = sandbox.self_check(tools_);
  result.environment["sandbox"] = sandbox.describe();
  stage("sandbox_check", start);
  if (!sandbox_ready.ok())
    return finish(PtxbStatus::kInfraError, sandbox_ready.error().code,
                  sandbox_ready.error().message);
  // A profiler over the self-contained runner, in the sandbox (or not, with the unsafe flag).
  auto run_tool = [&](std::vector<std::string> argv, double timeout_seconds,
                      std::size_t output_cap) -> Result<ProcessResult> {
    ProcessSpec spec;
    spec.argv = std::move(argv);
    spec.timeout = seconds_to_ms(timeout_seconds);
    spec.output_cap_bytes = output_cap;
    PTXB_ASSIGN_OR_RETURN(spec, sandbox.wrap_tool(std::move(spec), library_as_candidate));
    return tools_.run(spec);
  };

  // ---- sanitizer gate ----
  if (options.sanitize) {
    start = Clock::now();
    if (job.sanitizer_path.empty())
      return finish(PtxbStatus::kInfraError, "sanitizer_unavailable",
                    "--sanitize was asked for but compute-sanitizer was not found");
    auto ran =
        run_tool(sanitizer_argv(job.sanitizer_path, options.sanitizer_tool, self_contained_argv),
                 options.sanitizer_timeout_seconds, 1u << 20);
    stage("sanitizer", start);
    if (!ran.ok()) return finish(PtxbStatus::kInfraError, "sanitizer_failed", ran.error().message);
    if (auto f = sandbox_failure(*ran)) return finish(f->status, f->reason, f->detail);
    if (ran->timed_out)
      return finish(PtxbStatus::kTimeout, "sanitizer_timeout",
                    fmt::format("the call did not finish under compute-sanitizer within {:.0f} s",
                                options.sanitizer_timeout_seconds));
    auto report =
        parse_sanitizer_output(ran->stdout_text + ran->stderr_text, options.sanitizer_tool);
    if (!report.ok())
      return finish(PtxbStatus::kInfraError, "sanitizer_output", report.error().message);
    result.sanitizer = report->to_json();
    result.sanitizer["summary"] = report->summary(5);
    if (report->error_count > 0)
      return finish(PtxbStatus::kMemoryError, "sanitizer_" + options.sanitizer_tool,
                    report->summary(5));
  }

  // ---- workload ----
  WorkloadEval w;
  w.workload = task.workload_name();
  w.workload_uuid = task.workload.uuid;
  w.seed = options.seed;
  w.trials = options.trials > 0 ? options.trials : (is_backward_task(task) ? 1 : 3);
  const int num_sets = std::max(w.trials, 2);
  for (int s = 0; s < num_sets; ++s)
    w.set_seeds.push_back(derive_set_seed(options.seed, task.name, s));
  w.physical_floor_ms = facts->physical_floor_ms(task.flops, task.min_bytes);
  const TimingPolicy& policy = options.timing;
  auto conclude = [&](PtxbStatus status, std::string reason, std::string message) {
    w.status = status;
    w.reason = std::move(reason);
    w.message = std::move(message);
    result.workloads.push_back(w);
    return finish(w.status, w.reason, w.message);
  };
  auto conclude_finding = [&](const Finding& f) {
    w.findings.push_back(f);
    return conclude(f.status, f.reason, f.detail);
  };

  start = Clock::now();
  if (auto set_up = device_.setup(task, w.set_seeds); !set_up.ok())
    return conclude(PtxbStatus::kInfraError, "setup", set_up.error().message);
  auto bind = device_.bind_request();
  if (!bind.ok()) return conclude(PtxbStatus::kInfraError, "setup", bind.error().message);
  w.reference = device_.reference_description();
  stage("inputs_and_reference", start);

  // Starts a runner for one side and brings it to a bound state.
  auto start_side = [&](RunnerRole role, const std::string& label) -> Side {
    Side side;
    side.role = label;
    const milliseconds limit = seconds_to_ms(options.runner_start_timeout_seconds);
    const bool library_in_slot = role == RunnerRole::kReference || options.reference_as_candidate;
    auto prefix = sandbox.runner_prefix(library_in_slot);
    if (!prefix.ok()) {
      side.failure = Finding{PtxbStatus::kInfraError, std::string(reason::kSandboxSetup),
                             prefix.error().message};
      return side;
    }
    auto spawned =
        launcher_.spawn(library_in_slot ? RunnerRole::kReference : RunnerRole::kCandidate,
                        reference_selector(task), signature, *prefix);
    if (!spawned.ok()) {
      side.failure = Finding{PtxbStatus::kInfraError, "runner_spawn", spawned.error().message};
      return side;
    }
    side.session = std::move(spawned).value();
    auto fail = [&](const Error& e, const std::string& step) {
      if (e.code == "timeout" || e.code == "eof" || e.code == "frame_truncated") {
        Finding f = call_failure(side, e, limit);
        f.detail = step + ": " + f.detail;
        // A runner that dies while loading the candidate ran the candidate's static
        // initialisers: that is the candidate's runtime error, not ours.
        if (role == RunnerRole::kReference) f.status = PtxbStatus::kInfraError;
        side.failure = f;
      } else {
        side.failure =
            Finding{role == RunnerRole::kCandidate && step == "load" ? PtxbStatus::kRuntimeError
                                                                     : PtxbStatus::kInfraError,
                    step + "_failed", e.message};
      }
    };
    auto hello = side.session->hello(limit);
    if (!hello.ok()) {
      fail(hello.error(), "hello");
      return side;
    }
    side.answered_hello = true;
    result.environment["runner"] = Json{{"device_name", hello->device_name},
                                        {"cuda_runtime_version", hello->cuda_runtime_version},
                                        {"cuda_driver_version", hello->cuda_driver_version},
                                        {"cupti_version", hello->cupti_version},
                                        {"l2_bytes", hello->l2_bytes},
                                        {"l2_flush_bytes", hello->l2_flush_bytes}};
    LoadRequest load;
    const bool candidate_code = role == RunnerRole::kCandidate && !options.reference_as_candidate;
    load.so_path = candidate_code ? staged_so : job.reference_library_path;
    load.expected_signature = signature;
    if (candidate_code)
      for (const auto& cubin : compile.artifact.cubin_files) {
        auto it = compile.artifact.sha256.find(cubin);
        if (it != compile.artifact.sha256.end()) load.expected_module_sha256.push_back(it->second);
      }
    auto loaded = side.session->load(load, limit);
    if (!loaded.ok()) {
      fail(loaded.error(), "load");
      return side;
    }
    auto bound = side.session->bind(*bind, limit);
    if (!bound.ok()) {
      fail(bound.error(), "bind");
      return side;
    }
    return side;
  };

  ReplyCheckOptions reply_checks;
  reply_checks.check_modules = !options.reference_as_candidate;
  reply_checks.check_leftovers = !options.reference_as_candidate;
  reply_checks.cubin_functions = cubin_functions(compile);
  ReplyCheckOptions reference_reply_checks;
  reference_reply_checks.check_modules = false;
  reference_reply_checks.check_leftovers = false;

  // Warm-up + samples on one side. Candidate samples also run the anti-caching refresh.
  auto time_side = [&](Side& side, bool is_candidate, milliseconds call_limit) -> SideTiming {
    SideTiming out;
    const auto side_start = Clock::now();
    std::vector<double> device_ns, overhead_ns;
    std::optional<std::uint32_t> clock_min, clock_max;
    // Anti-caching (design.md §3.4): before three samples spread over the first min_samples, the
    // set's inputs are rewritten in place (fully, or one block per input) and that call's
    // outputs are verified and its time kept apart (fresh_input_finding).
    const std::vector<RefreshPoint> refresh_at = refresh_schedule(options.seed, policy.min_samples);
    int call_index = 0;
    const int total_warmup = policy.warmup_calls;
    for (int i = 0;; ++i) {
      const bool warmup = i < total_warmup;
      const int sample = i - total_warmup;
      if (!warmup) {
        const double elapsed = std::chrono::duration<double>(Clock::now() - side_start).count();
        if (next_sampling_step(device_ns, elapsed, policy) != SamplingDecision::kContinue) break;
      }
      const int set = call_index++ % num_sets;
      auto point = std::find_if(refresh_at.begin(), refresh_at.end(),
                                [&](const RefreshPoint& p) { return p.sample == sample; });
      const bool refresh = is_candidate && !warmup && point != refresh_at.end();
      const int refresh_trial = 10 + static_cast<int>(out.refreshes.size());
      if (refresh) {
        const std::uint64_t fresh =
            derive_set_seed(options.seed ^ 0x5eed, task.name, 1000 + sample);
        Status rewritten = point->kind == RefreshKind::kFull ? device_.regenerate(set, fresh)
                                                             : device_.perturb(set, fresh);
        if (!rewritten.ok()) {
          out.failure = Finding{PtxbStatus::kInfraError, "regenerate", rewritten.error().message};
          return out;
        }
        if (auto s = device_.poison(set, refresh_trial); !s.ok()) {
          out.failure = Finding{PtxbStatus::kInfraError, "poison", s.error().message};
          return out;
        }
      }
      CallBracket bracket;
      auto reply = side.session->call(CallRequest{static_cast<std::uint64_t>(set), true, false},
                                      call_limit, &bracket);
      if (!reply.ok()) {
        out.failure = call_failure(side, reply.error(), call_limit);
        return out;
      }
      if (auto f = reply_findings(*reply, is_candidate ? reply_checks : reference_reply_checks)) {
        out.failure = f;
        return out;
      }
      // Correctness passed before timing started, so a call that enqueued nothing did its work
      // somewhere the window does not see.
      if (is_candidate && !reply->has_window) {
        out.failure = Finding{PtxbStatus::kRewardHack, std::string(reason::kNoGpuWork),
                              fmt::format("timed call {} enqueued no GPU work on any stream "
                                          "(the results were produced outside the call)",
                                          i + 1)};
        return out;
      }
      if (refresh) {
        auto checks = device_.check(set, refresh_trial);
        if (!checks.ok()) {
          out.failure = Finding{PtxbStatus::kInfraError, "compare", checks.error().message};
          return out;
        }
        out.refresh_checks.insert(out.refresh_checks.end(), checks->begin(), checks->end());
        out.fresh_ns.push_back(static_cast<double>(reply->device_ns));
        out.refreshes.push_back(Json{{"sample", sample},
                                     {"set", set},
                                     {"kind", refresh_kind_name(point->kind)},
                                     {"device_ms", reply->device_ns * 1e-6}});
        if (auto f = first_failure(*checks)) {
          f->reason = std::string(reason::kStaleOutput);
          f->detail =
              fmt::format(
                  "after the inputs were rewritten in place ({}) between timed "
                  "calls, the outputs were wrong (results cached across calls?): ",
                  point->kind == RefreshKind::kFull ? "all values" : "one block per input") +
              f->detail;
          if (f->status == PtxbStatus::kIncorrectNumerical) f->status = PtxbStatus::kRewardHack;
          out.failure = f;
          return out;
        }
      }
      if (warmup) continue;
      // The device time can never exceed the supervisor's own round trip around the call.
      if (static_cast<double>(reply->device_ns) >
          static_cast<double>(bracket.round_trip_ns) + policy.bracket_tolerance_ns) {
        out.failure =
            Finding{PtxbStatus::kRewardHack, std::string(reason::kDeviceTimeExceedsBracket),
                    fmt::format("reported device time {} ns exceeds the supervisor's "
                                "round trip {} ns",
                                reply->device_ns, bracket.round_trip_ns)};
        return out;
      }
      device_ns.push_back(static_cast<double>(reply->device_ns));
      if (!refresh) out.repeat_ns.push_back(static_cast<double>(reply->device_ns));
      overhead_ns.push_back(static_cast<double>(bracket.round_trip_ns) -
                            static_cast<double>(reply->device_ns));
      if (reply->sm_clock_mhz) {
        clock_min = std::min(clock_min.value_or(*reply->sm_clock_mhz), *reply->sm_clock_mhz);
        clock_max = std::max(clock_max.value_or(*reply->sm_clock_mhz), *reply->sm_clock_mhz);
      }
    }
    out.stats = summarize_samples(device_ns, policy);
    std::sort(overhead_ns.begin(), overhead_ns.end());
    out.stats.host_overhead_ms = percentile_sorted(overhead_ns, 0.5) * 1e-6;
    out.stats.sm_clock_mhz_min = clock_min;
    out.stats.sm_clock_mhz_max = clock_max;
    return out;
  };

  // ---- reference timing (first: it sets the candidate's per-call limit) ----
  milliseconds call_limit = seconds_to_ms(policy.call_limit_floor_seconds);
  if (task.reference_backend != "plain_cuda") {
    start = Clock::now();
    Side reference = start_side(RunnerRole::kReference, "reference runner");
    if (reference.failure) return conclude_finding(*reference.failure);
    SideTiming timing = time_side(reference, false, seconds_to_ms(60.0));
    if (timing.failure) {
      Finding f = *timing.failure;
      f.status = PtxbStatus::kInfraError;
      f.detail = "reference: " + f.detail + "\n" + cap_log(reference.session->log(), 4096);
      return conclude_finding(f);
    }
    reference.session->shutdown(milliseconds(10000));
    w.reference_timing = timing.stats;
    w.reference["measured_at"] = iso_utc_now();
    w.reference["method"] =
        "CUPTI activity window of each call in a ptxbench-runner process, L2 flushed before "
        "every sample, same policy and buffers as the candidate, measured in this evaluation";
    call_limit = std::max(call_limit, seconds_to_ms(policy.call_limit_reference_multiple *
                                                    timing.stats.median_ms / 1000.0));
    stage("reference_timing", start);
  }

  // ---- candidate: correctness ----
  start = Clock::now();
  Side candidate = start_side(RunnerRole::kCandidate, "candidate runner");
  auto record_runner = [&] {
    if (!candidate.session) return;
    w.runner["log"] = cap_log(candidate.session->log());
  };
  if (candidate.failure) {
    record_runner();
    return conclude_finding(*candidate.failure);
  }
  auto fail_candidate = [&](const Finding& failure) {
    record_runner();
    candidate.session->kill();
    w.runner["exit"] = candidate.session->wait(milliseconds(5000)).describe();
    Finding f = failure;
    // A memory fault names no line by itself; when the sanitizer did not run as a gate, one
    // memcheck pass over the self-contained call locates it (kernel.cu:LINE thanks to -lineinfo).
    if (f.status == PtxbStatus::kMemoryError && !options.sanitize && !job.sanitizer_path.empty()) {
      const auto locate_start = Clock::now();
      auto ran = run_tool(sanitizer_argv(job.sanitizer_path, "memcheck", self_contained_argv),
                          options.sanitizer_timeout_seconds, 1u << 20);
      if (ran.ok())
        if (auto sandboxed = sandbox_failure(*ran)) f = *sandboxed;
      if (ran.ok() && !ran->timed_out && f.status == PtxbStatus::kMemoryError) {
        auto report = parse_sanitizer_output(ran->stdout_text + ran->stderr_text, "memcheck");
        if (report.ok() && report->error_count > 0) {
          result.sanitizer = report->to_json();
          result.sanitizer["summary"] = report->summary(3);
          f.detail += "\ncompute-sanitizer memcheck on one call: " + report->summary(3);
        }
      }
      stage("locate_memory_error", locate_start);
    }
    return conclude_finding(f);
  };
  // Trials on sets 0..T-1 (each its own seed; with one trial, one call on set 1 too, so the
  // plan always holds an A/B/A sequence of distinct inputs), then the write check: two more
  // calls on set 0 under the two poison patterns. An element equal to the poison after both was
  // not written by either call, even if an earlier call wrote it (a kernel that relies on the
  // previous call's values staying in the buffer).
  std::vector<std::pair<int, int>> plan;  // (set, trial)
  for (int t = 0; t < w.trials; ++t) plan.emplace_back(t % num_sets, t);
  if (w.trials == 1) plan.emplace_back(1, 1);
  // Poison patterns alternate with the trial index's parity (cuda/input_gen.h): two consecutive
  // unused indices give the two different patterns.
  const int first_write_trial = static_cast<int>(plan.size());
  plan.emplace_back(0, first_write_trial);
  plan.emplace_back(0, first_write_trial + 1);
  const std::size_t first_write_check = plan.size() - 2;
  // A failure with elements still holding the poison may be an unwritten region: confirm with
  // the write check before reporting it as a plain mismatch.
  std::optional<Finding> pending_failure;
  std::vector<std::pair<int, std::uint64_t>> output_hashes;  // (set, hash) per call
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const auto [set, trial] = plan[i];
    const bool write_check = i >= first_write_check;
    if (auto s = device_.poison(set, trial); !s.ok())
      return conclude(PtxbStatus::kInfraError, "poison", s.error().message);
    auto before = device_.input_hash(set);
    if (!before.ok())
      return conclude(PtxbStatus::kInfraError, "input_hash", before.error().message);
    auto reply = candidate.session->call(CallRequest{static_cast<std::uint64_t>(set), true, false},
                                         call_limit, nullptr);
    if (!reply.ok()) return fail_candidate(call_failure(candidate, reply.error(), call_limit));
    if (auto f = reply_findings(*reply, reply_checks)) return fail_candidate(*f);
    auto after = device_.input_hash(set);
    if (!after.ok()) return conclude(PtxbStatus::kInfraError, "input_hash", after.error().message);
    if (*after != *before)
      return fail_candidate(Finding{PtxbStatus::kRewardHack, std::string(reason::kInputModified),
                                    "the kernel wrote to an input tensor (inputs must stay "
                                    "unchanged; use scratch memory of your own)"});
    auto checks = device_.check(set, trial);
    if (!checks.ok()) return conclude(PtxbStatus::kInfraError, "compare", checks.error().message);
    if (!write_check) w.checks.insert(w.checks.end(), checks->begin(), checks->end());
    // Before the comparison's verdict: a stale cache also fails the comparison, and the more
    // specific reason is the one a reader needs.
    auto hash = device_.output_hash(set);
    if (!hash.ok()) return conclude(PtxbStatus::kInfraError, "output_hash", hash.error().message);
    if (auto f = cached_output_finding(output_hashes, set, *hash)) return fail_candidate(*f);
    output_hashes.emplace_back(set, *hash);
    if (write_check) {
      if (auto s = device_.observe_unwritten(set, trial); !s.ok())
        return conclude(PtxbStatus::kInfraError, "unwritten", s.error().message);
    }
    if (i + 1 == plan.size()) {
      auto unwritten = device_.unwritten(0);
      if (!unwritten.ok())
        return conclude(PtxbStatus::kInfraError, "unwritten", unwritten.error().message);
      w.unwritten = *unwritten;
      for (const auto& [name, count] : *unwritten)
        if (count > 0)
          return fail_candidate(
              Finding{PtxbStatus::kRewardHack, std::string(reason::kUnwrittenOutput),
                      fmt::format("output {}: {} elements were never written (they kept the poison "
                                  "pattern in two consecutive calls with different patterns)",
                                  name, count)});
      if (pending_failure) return fail_candidate(*pending_failure);
    }
    if (auto f = first_failure(*checks)) {
      bool poison_seen = false;
      for (const auto& c : *checks) poison_seen = poison_seen || c.num_equal_poison > 0;
      // The last call of the plan decided above (unwritten, or the pending failure).
      const bool defer = (poison_seen || pending_failure) &&
                         f->status != PtxbStatus::kInvalidReference && i + 1 < plan.size();
      if (defer) {
        if (!pending_failure) pending_failure = f;
        if (!write_check) i = first_write_check - 1;  // the loop's ++i lands on the write check
        continue;
      }
      return fail_candidate(*f);
    }
    // Right outputs from a call that enqueued no GPU work: produced outside the window.
    if (!reply->has_window)
      return fail_candidate(
          Finding{PtxbStatus::kRewardHack, std::string(reason::kNoGpuWork),
                  fmt::format("the call on input set {} enqueued no GPU work on any stream, yet "
                              "its outputs are right: they were produced outside the call",
                              set)});
  }
  stage("correctness", start);

  // ---- candidate: timing ----
  start = Clock::now();
  SideTiming timing = time_side(candidate, true, call_limit);
  w.checks.insert(w.checks.end(), timing.refresh_checks.begin(), timing.refresh_checks.end());
  if (timing.failure) return fail_candidate(*timing.failure);
  w.candidate_timing = timing.stats;
  stage("timing", start);

  // ---- candidate: anti-caching evidence and the re-validation of high speedups ----
  std::vector<double> fresh_ns = timing.fresh_ns;
  w.integrity["refreshes"] = timing.refreshes;
  if (w.reference_timing && w.candidate_timing->median_ms > 0) {
    const double speedup = w.reference_timing->median_ms / w.candidate_timing->median_ms;
    if (speedup > policy.revalidation_speedup) {
      start = Clock::now();
      // Flagged whatever the outcome: a consumer sees that this speedup needed a second look.
      w.flags.push_back("revalidated_high_speedup");
      Json revalidation{{"speedup", speedup},
                        {"threshold", policy.revalidation_speedup},
                        {"trials", policy.revalidation_trials}};
      Json trial_ms = Json::array();
      for (int t = 0; t < policy.revalidation_trials; ++t) {
        const int set = t % num_sets;
        const int trial = 20 + t;
        const std::uint64_t fresh = derive_set_seed(options.seed ^ 0x7e7a11d, task.name, 2000 + t);
        if (auto s = device_.regenerate(set, fresh); !s.ok())
          return conclude(PtxbStatus::kInfraError, "regenerate", s.error().message);
        if (auto s = device_.poison(set, trial); !s.ok())
          return conclude(PtxbStatus::kInfraError, "poison", s.error().message);
        auto before = device_.input_hash(set);
        if (!before.ok())
          return conclude(PtxbStatus::kInfraError, "input_hash", before.error().message);
        CallBracket bracket;
        auto reply = candidate.session->call(
            CallRequest{static_cast<std::uint64_t>(set), true, false}, call_limit, &bracket);
        if (!reply.ok()) return fail_candidate(call_failure(candidate, reply.error(), call_limit));
        if (auto f = reply_findings(*reply, reply_checks)) return fail_candidate(*f);
        auto after = device_.input_hash(set);
        if (!after.ok())
          return conclude(PtxbStatus::kInfraError, "input_hash", after.error().message);
        if (*after != *before)
          return fail_candidate(Finding{PtxbStatus::kRewardHack,
                                        std::string(reason::kInputModified),
                                        "re-validation: the kernel wrote to an input tensor"});
        auto checks = device_.check(set, trial);
        if (!checks.ok())
          return conclude(PtxbStatus::kInfraError, "compare", checks.error().message);
        w.checks.insert(w.checks.end(), checks->begin(), checks->end());
        if (auto f = first_failure(*checks)) {
          if (f->status == PtxbStatus::kIncorrectNumerical) {
            f->status = PtxbStatus::kRewardHack;
            f->reason = std::string(reason::kStaleOutput);
          }
          f->detail =
              fmt::format("re-validation of a {:.2f}x speedup, fresh trial {}: ", speedup, t + 1) +
              f->detail;
          w.integrity["revalidation"] = revalidation;
          return fail_candidate(*f);
        }
        if (!reply->has_window)
          return fail_candidate(Finding{PtxbStatus::kRewardHack, std::string(reason::kNoGpuWork),
                                        "re-validation: a call enqueued no GPU work"});
        fresh_ns.push_back(static_cast<double>(reply->device_ns));
        trial_ms.push_back(reply->device_ns * 1e-6);
      }
      revalidation["device_ms"] = trial_ms;
      w.integrity["revalidation"] = revalidation;
      stage("revalidation", start);
    }
  }
  {
    std::vector<double> sorted = fresh_ns;
    std::sort(sorted.begin(), sorted.end());
    w.integrity["fresh_input_median_ms"] =
        sorted.empty() ? Json(nullptr) : Json(percentile_sorted(sorted, 0.5) * 1e-6);
    w.integrity["fresh_input_slowdown_limit"] = policy.fresh_input_slowdown_limit;
    std::vector<double> repeats = timing.repeat_ns;
    std::sort(repeats.begin(), repeats.end());
    const double repeat_median_ns = repeats.empty() ? 0.0 : percentile_sorted(repeats, 0.5);
    w.integrity["repeat_median_ms"] = repeat_median_ns * 1e-6;
    auto slow = fresh_input_finding(fresh_ns, repeat_median_ns, policy.fresh_input_slowdown_limit);
    if (w.integrity.contains("revalidation"))
      w.integrity["revalidation"]["passed"] = !slow.has_value();
    if (slow) return fail_candidate(*slow);
  }
  // GPU-state guard (design.md §3.4): another compute process on the GPU, or a throttle reason
  // other than idle/boost housekeeping, makes the timing noisy. The trace is marked, never
  // silently used: consumers filter on gpu_state.noisy.
  {
    Json state{{"before", result.environment.value("compute_processes", -1)}};
    auto after = device_.facts();
    bool noisy = false;
    std::vector<std::string> why;
    if (facts->compute_processes > 1) {
      noisy = true;
      why.push_back(
          fmt::format("{} compute processes on the GPU before the evaluation (only the "
                      "supervisor expected)",
                      facts->compute_processes));
    }
    if (after.ok()) {
      state["after_timing"] = after->to_json();
      // The candidate runner is still alive here: supervisor + runner = 2.
      if (after->compute_processes > 2) {
        noisy = true;
        why.push_back(fmt::format("{} compute processes on the GPU after timing (2 expected)",
                                  after->compute_processes));
      }
      for (const auto& reason : after->clock_event_reasons)
        if (contains(reason, "thermal") || contains(reason, "power_brake") ||
            reason == "hw_slowdown") {
          noisy = true;
          why.push_back("clock event: " + reason);
        }
    }
    state["noisy"] = noisy;
    state["why"] = why;
    w.runner["gpu_state"] = state;
  }
  record_runner();
  if (auto s = candidate.session->shutdown(milliseconds(10000)); !s.ok())
    w.runner["shutdown"] = s.error().message;
  w.runner["exit"] = candidate.session->wait(milliseconds(5000)).describe();

  if (w.physical_floor_ms > 0 &&
      w.candidate_timing->median_ms < policy.physical_floor_fraction * w.physical_floor_ms) {
    w.findings.push_back(Finding{
        PtxbStatus::kRewardHack, std::string(reason::kBelowPhysicalFloor),
        fmt::format("median device time {:.4f} ms is below 0.9 x the physical floor {:.4f} ms "
                    "(tensor-core peak and HBM bandwidth): the work cannot have been done",
                    w.candidate_timing->median_ms, w.physical_floor_ms)});
    return conclude(w.findings.back().status, w.findings.back().reason, w.findings.back().detail);
  }
  if (w.reference_timing && w.candidate_timing->median_ms > 0)
    w.speedup = w.reference_timing->median_ms / w.candidate_timing->median_ms;
  const std::string passed_message =
      w.speedup
          ? fmt::format("correct; {:.4f} ms vs reference {:.4f} ms: speedup {:.3f}x",
                        w.candidate_timing->median_ms, w.reference_timing->median_ms, *w.speedup)
          : fmt::format("correct; {:.4f} ms (no library reference for this task)",
                        w.candidate_timing->median_ms);
  w.status = PtxbStatus::kPassed;
  w.message = passed_message;
  result.workloads.push_back(w);
  finish(PtxbStatus::kPassed, "", passed_message);

  // ---- dynamic target-instruction check ----
  TargetInstructionCheck& check = result.target_instructions;
  if (!compile.sass.target_present && !library_as_candidate) {
    check.verdict = kInstStaticAbsent;
  } else if (!options.ncu) {
    check.verdict = kInstNotRun;
    check.reason = "disabled (--no-ncu)";
  } else if (job.ncu_path.empty()) {
    check.verdict = kInstUnknown;
    check.reason = "Nsight Compute (ncu) not found";
  } else {
    start = Clock::now();
    auto ran = run_tool(ncu_source_argv(job.ncu_path, self_contained_argv),
                        options.ncu_timeout_seconds, 64u << 20);
    check.cost_ms = ms_since(start);
    stage("ncu", start);
    if (ran.ok())
      if (auto f = sandbox_failure(*ran)) {
        // The sandbox's verdict replaces the pass: a candidate that makes a forbidden call only
        // under the profiler is still caught (and a sandbox that failed is the harness's).
        check.verdict = kInstUnknown;
        check.reason = "the profiled call was stopped by the sandbox";
        Finding violation = *f;
        result.workloads.back().findings.push_back(violation);
        result.workloads.back().status = violation.status;
        result.workloads.back().reason = violation.reason;
        result.workloads.back().message = violation.detail;
        finish(violation.status, violation.reason, violation.detail);
        return result;
      }
    if (!ran.ok()) {
      check.verdict = kInstUnknown;
      check.reason = "ncu failed to start: " + ran.error().message;
    } else if (ran->timed_out || ran->exit_code != 0) {
      check.verdict = kInstUnknown;
      check.reason =
          fmt::format("ncu {}: {}", ran->describe(), trim(ran->stderr_text).substr(0, 500));
    } else {
      auto kernels = parse_ncu_source_csv(ran->stdout_text, "ncu source page");
      if (!kernels.ok()) {
        check.verdict = kInstUnknown;
        check.reason = kernels.error().message;
      } else {
        DynamicCheck dynamic = decide_dynamic(*kernels, compile.artifact.arch);
        check.verdict = dynamic.verdict;
        check.reason = dynamic.reason;
        check.dynamic = dynamic.to_json();
      }
    }
  }
  return result;
}

}  // namespace ptxb
