// Set-up stages: the GPU probe, the staging directory, the sandbox self-check, the workload's
// inputs and the start-up of a runner process.
#include "core/fs.h"
#include "eval/integrity_reasons.h"
#include "protocol/reference_selector.h"
#include "supervisor/cgroup_watch.h"
#include "supervisor/eval_stages.h"
#include "supervisor/evaluator.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

// The cubin's kernels as cuobjdump named them, for the foreign-kernel check.
std::vector<std::string> cubin_functions(const CompileResult& compile) {
  std::vector<std::string> names;
  for (const auto& kernel : compile.sass.kernels) names.push_back(kernel.name);
  return names;
}

// Copies the candidate's .so and writes the self-contained call's parameters into the staging
// directory, and builds the profilers' runner command line. Errors are the harness's.
Status stage_files(EvalContext& ctx) {
  // Under /var/tmp, not /tmp: the sandbox mounts a private tmpfs over /tmp (Nsight Compute and
  // compute-sanitizer keep lock and temporary files there), which would hide the staged files.
  PTXB_ASSIGN_OR_RETURN(
      ctx.staging.path,
      make_temp_directory("ptxb-eval", is_directory("/var/tmp") ? "/var/tmp" : ""));
  const CompileArtifact& artifact = ctx.compile.artifact;
  const std::string params_path = ctx.staging.path + "/params.json";
  ctx.staged_so = ctx.staging.path + "/" + artifact.shared_object;
  PTXB_ASSIGN_OR_RETURN(std::string so_bytes,
                        read_file(artifact.path_of(artifact.shared_object), 1u << 30));
  PTXB_RETURN_IF_ERROR(write_file_atomic(ctx.staged_so, so_bytes));
  // In A/A mode the library runs one unprofiled warm-up call that builds its plans.
  PTXB_ASSIGN_OR_RETURN(Json self_contained,
                        self_contained_params(ctx.task, ctx.signature, ctx.options.seed));
  if (ctx.library_as_candidate) self_contained["warmup_calls"] = 1;
  PTXB_RETURN_IF_ERROR(write_file_atomic(params_path, self_contained.dump()));
  ctx.self_contained_argv = {
      ctx.job.runner_path,
      "--self-contained",
      "--so",
      ctx.library_as_candidate ? ctx.job.reference_library_path : ctx.staged_so,
      "--params-json",
      params_path};
  return ok_status();
}

}  // namespace

StageOutcome stage_setup(EvalContext& ctx) {
  auto start = EvalClock::now();
  auto facts = ctx.device.facts();
  if (!facts.ok())
    return ctx.finish(PtxbStatus::kInfraError, "gpu_unavailable", facts.error().message);
  ctx.facts = *facts;
  ctx.result.environment.gpu = *facts;
  ctx.result.environment.gpu_name = facts->name;
  ctx.stage_done("gpu_probe", start);

  ctx.signature = ctx.compile.artifact.abi_signature;
  ctx.library_as_candidate = ctx.options.reference_as_candidate;
  if (Status staged = stage_files(ctx); !staged.ok())
    return ctx.finish(PtxbStatus::kInfraError, "scratch", staged.error().message);

  // The sandbox checks itself before any candidate code runs.
  start = EvalClock::now();
  ctx.reference_selector = reference_selector(ctx.task);
  ctx.sandbox = std::make_unique<EvalSandbox>(ctx.job, ctx.staging.path, ctx.reference_selector,
                                              ctx.signature);
  const Status sandbox_ready = ctx.sandbox->self_check(ctx.tools);
  ctx.result.environment.sandbox = ctx.sandbox->describe();
  ctx.stage_done("sandbox_check", start);
  if (!sandbox_ready.ok())
    return ctx.finish(PtxbStatus::kInfraError, sandbox_ready.error().code,
                      sandbox_ready.error().message);

  // In A/A mode the library is in the candidate slot: its modules and leftovers are its own.
  ctx.reply_checks.check_modules = !ctx.options.reference_as_candidate;
  ctx.reply_checks.check_leftovers = !ctx.options.reference_as_candidate;
  ctx.reply_checks.cubin_functions = cubin_functions(ctx.compile);
  ctx.reference_reply_checks.check_modules = false;
  ctx.reference_reply_checks.check_leftovers = false;
  ctx.reference_reply_checks.check_copies_off_stream = false;
  ctx.reply_checks.check_copies_off_stream = !ctx.options.reference_as_candidate;
  return StageOutcome::kContinue;
}

StageOutcome stage_workload(EvalContext& ctx) {
  WorkloadEval& w = ctx.workload;
  w.workload = ctx.task.workload_name();
  w.workload_uuid = ctx.task.workload.uuid;
  w.seed = ctx.options.seed;
  w.trials = ctx.options.trials > 0 ? ctx.options.trials : (is_backward_task(ctx.task) ? 1 : 3);
  // At least two sets, so consecutive calls always see different inputs.
  ctx.num_sets = std::max(w.trials, 2);
  w.physical_floor_ms = ctx.facts.physical_floor_ms(ctx.task.flops, ctx.task.min_bytes);
  // Then the batch bound's sets; their inputs are rewritten from the secret before each batch.
  ctx.batch_sets = initial_batch_sets(ctx, w.physical_floor_ms);
  std::vector<std::uint64_t> seeds;
  for (int s = 0; s < ctx.num_sets + ctx.batch_sets; ++s)
    seeds.push_back(derive_set_seed(ctx.options.seed, ctx.task.name, s));
  w.set_seeds.assign(seeds.begin(), seeds.begin() + ctx.num_sets);

  const auto start = EvalClock::now();
  if (auto set_up = ctx.device.setup(ctx.task, seeds); !set_up.ok())
    return ctx.conclude(PtxbStatus::kInfraError, "setup", set_up.error().message);
  auto bind = ctx.device.bind_request();
  if (!bind.ok()) return ctx.conclude(PtxbStatus::kInfraError, "setup", bind.error().message);
  ctx.bind = std::move(bind).value();
  w.reference = ctx.device.reference_description();
  if (ctx.options.pin_reference_algorithm && ctx.task.reference_backend == "cublaslt_gemm") {
    const std::vector<GemmPin> pins = gemm_pins_of(w.reference.backend);
    if (pins.empty())
      return ctx.conclude(PtxbStatus::kInfraError, "setup",
                          "--pin-reference-algorithm: the reference (" +
                              ctx.task.reference_backend + ") recorded no cuBLASLt choice to pin");
    auto selector = parse_reference_selector(ctx.reference_selector);
    if (!selector.ok())
      return ctx.conclude(PtxbStatus::kInfraError, "setup", selector.error().message);
    selector->pins = pins;
    ctx.reference_selector = selector->to_string();
    ctx.sandbox->set_reference_selector(ctx.reference_selector);
  }
  ctx.stage_done("inputs_and_reference", start);
  return StageOutcome::kContinue;
}

namespace {

// A failed start-up step of `side` as its Finding.
Finding startup_failure(RunnerSide& side, RunnerRole role, const Error& e, const std::string& step,
                        milliseconds limit) {
  if (e.code == "timeout" || e.code == "eof" || e.code == "frame_truncated") {
    Finding f = call_failure(side, e, limit);
    f.detail = step + ": " + f.detail;
    // A runner that dies while loading the candidate ran the candidate's static
    // initialisers: that is the candidate's runtime error, not ours.
    if (role == RunnerRole::kReference) f.status = PtxbStatus::kInfraError;
    return f;
  }
  return Finding{role == RunnerRole::kCandidate && step == "load" ? PtxbStatus::kRuntimeError
                                                                  : PtxbStatus::kInfraError,
                 step + "_failed", e.message};
}

// What the runner loads: the staged candidate .so with its cubins' hashes, or the library.
LoadRequest load_request(const EvalContext& ctx, RunnerRole role) {
  LoadRequest load;
  const bool candidate_code = role == RunnerRole::kCandidate && !ctx.options.reference_as_candidate;
  load.so_path = candidate_code ? ctx.staged_so : ctx.job.reference_library_path;
  load.expected_signature = ctx.signature;
  if (candidate_code)
    for (const auto& cubin : ctx.compile.artifact.cubin_files) {
      auto it = ctx.compile.artifact.sha256.find(cubin);
      if (it != ctx.compile.artifact.sha256.end())
        load.expected_module_sha256.push_back(it->second);
    }
  return load;
}

}  // namespace

RunnerSide start_runner(EvalContext& ctx, RunnerRole role, const std::string& label,
                        const ToolWrap* tool) {
  RunnerSide side;
  side.role = label;
  const milliseconds limit =
      tool ? tool->start_limit : seconds_to_ms(ctx.options.runner_start_timeout_seconds);
  const bool library_in_slot = role == RunnerRole::kReference || ctx.options.reference_as_candidate;
  auto prefix = tool ? ctx.sandbox->tool_runner_prefix(library_in_slot, tool->tool_argv)
                     : ctx.sandbox->runner_prefix(library_in_slot);
  if (!prefix.ok()) {
    side.failure = Finding{PtxbStatus::kInfraError, std::string(reason::kSandboxSetup),
                           prefix.error().message};
    return side;
  }
  const RunnerRole spawn_role = library_in_slot ? RunnerRole::kReference : RunnerRole::kCandidate;
  auto spawned =
      tool ? ctx.launcher.spawn_wrapped(spawn_role, ctx.reference_selector, ctx.signature, *prefix,
                                        tool->runner_args, tool->log_cap_bytes)
           : ctx.launcher.spawn(spawn_role, ctx.reference_selector, ctx.signature, *prefix);
  if (!spawned.ok()) {
    side.failure = Finding{PtxbStatus::kInfraError, "runner_spawn", spawned.error().message};
    return side;
  }
  side.session = std::move(spawned).value();
  // The candidate's runner: the kernel's count of its processes after every call.
  if (!tool) side.cgroup_dir = ctx.sandbox->latest_group_dir();
  const pid_t runner_pid = side.session->process_id();
  if (const std::string procs = ctx.sandbox->latest_group_procs();
      !tool && !library_in_slot && !procs.empty() && runner_pid > 0)
    side.session = std::make_unique<CgroupWatchedSession>(std::move(side.session), real_cgroup_fs(),
                                                          procs, runner_pid);
  auto hello = side.session->hello(limit);
  if (!hello.ok()) {
    side.failure = startup_failure(side, role, hello.error(), "hello", limit);
    return side;
  }
  side.answered_hello = true;
  if (!tool)
    ctx.result.environment.runner = RunnerInfo{hello->device_name,
                                               hello->cuda_runtime_version,
                                               hello->cuda_driver_version,
                                               hello->cupti_version,
                                               hello->l2_bytes,
                                               hello->l2_flush_bytes};
  auto loaded = side.session->load(load_request(ctx, role), limit);
  if (!loaded.ok()) {
    side.failure = startup_failure(side, role, loaded.error(), "load", limit);
    return side;
  }
  auto bound = side.session->bind(ctx.bind, limit);
  if (!bound.ok()) side.failure = startup_failure(side, role, bound.error(), "bind", limit);
  return side;
}

}  // namespace ptxb
