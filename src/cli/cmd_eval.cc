// `ptxbench eval KERNEL.cu --task NAME [--operation evaluate|sanitize|profile|debug] [--json]
//                [--trace-out FILE.jsonl] [--sanitize]
//                [--sanitizer-tool T] [--debug] [--no-ncu] [--seed N] [--trials N] [--feedback]
//                [--unsafe-no-sandbox] [--timing-protocol interleaved|sequential|paper] [--energy]
//                [--[no-]pin-reference-algorithm] [--profiler-hints]
//                [--also-reference flashinfer]
//                [--remote URL[,URL...] [--remote-compile]]`
// Compiles the candidate, then runs the GPU stages in the trusted supervisor process: reference
// timing, correctness trials, CUPTI timing with the integrity tripwires, the optional
// compute-sanitizer gate and the Nsight Compute target-instruction check (docs/eval.md). With
// --remote the same request goes to an evaluation service (`ptxbench serve`, docs/service.md)
// instead, with the bearer token from PTXBENCH_SERVICE_TOKEN. --operation sanitize runs the
// compute-sanitizer gate and the correctness trials only; profile forces the Nsight Compute
// check on; debug runs the correctness trials with the debug stage on (eval/eval_operation.h).
// Exit codes: 0 PASSED, 1 the candidate failed (any other status), 3 incomplete (no GPU here:
// compile and static analysis ran, GPU stages skipped), 2 usage error.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "compile/compile_types.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "core/version.h"
#include "eval/also_reference.h"
#include "eval/eval_pipeline.h"
#include "eval/feedback.h"
#include "llm/http_transport.h"
#include "service/client_compile.h"
#include "service/remote_evaluator.h"

namespace ptxb::cli {
namespace {

struct EvalFlags {
  std::string kernel_path;
  std::string task;
  std::string arch;
  std::string trace_out;
  std::string sanitizer_tool = "memcheck";
  std::uint64_t seed = 1;
  int trials = 0;
  bool json = false;
  bool sanitize = false;
  bool no_ncu = false;
  bool feedback = false;
  bool unsafe_no_sandbox = false;
  std::string timing_protocol = "interleaved";
  std::string operation = "evaluate";
  bool energy = false;
  bool pin_reference_algorithm = true;
  bool profiler_hints = false;
  bool ncu_source_page = false;
  std::string also_reference;
  bool debug = false;
  std::vector<std::string> remote;
  bool remote_compile = false;
  std::string save_profile;
};

// This machine's tools, with the folder for Nsight Compute's pages when asked (absolute: the
// supervisor runs elsewhere in the tree's eyes).
EvalTools local_tools(const std::string& save_profile) {
  EvalTools tools = EvalTools::discover();
  if (!save_profile.empty())
    tools.profile_save_dir = std::filesystem::absolute(save_profile).string();
  return tools;
}

// The evaluation through `ptxbench serve` (one or several, least loaded first). A nonce in the
// idempotency key: running the same command twice evaluates twice, as a local eval does, while
// a retry inside this one command finds its job again.
// Compiled here (the compile cache) and sent as kernel.so, unless `remote_compile`: then the
// service compiles the source in its sandboxed compile stage.
Result<EvalResult> evaluate_remotely(const EvalRequest& request,
                                     const std::vector<std::string>& urls, bool remote_compile,
                                     const TaskRegistry& registry,
                                     const std::vector<std::string>& tasks_dirs) {
  SystemProcessRunner processes;
  service::RemoteEvaluatorOptions options;
  options.urls = urls;
  if (!remote_compile)
    options.prepare = [&](EvalRequest& r) {
      return service::compile_for_service(r, registry, tasks_dirs, processes);
    };
  if (const char* token = std::getenv("PTXBENCH_SERVICE_TOKEN")) options.token = token;
  options.key_prefix = sha256_hex(fmt::format(
      "eval {} {}", ::getpid(), std::chrono::system_clock::now().time_since_epoch().count()));
  CurlHttpTransport transport;
  service::SystemClock clock;
  service::RemoteEvaluator evaluator(transport, options, clock);
  return evaluator.evaluate(request);
}

Status append_traces(const std::string& path, const EvalResult& result, const Task& task,
                     const std::string& solution) {
  std::ofstream out(path, std::ios::app);
  if (!out) return make_error("io", "{}: cannot open for appending", path);
  for (const auto& trace :
       result.traces(task.definition.name, workload_to_json(task.workload), solution))
    out << trace_to_json(trace).dump() << "\n";
  if (!out) return make_error("io", "{}: write failed", path);
  return ok_status();
}

}  // namespace

CommandSpec make_eval_command(const Extension<EvalOptions>& extension) {
  return {
      "eval",
      "Evaluate a kernel.cu on a task: compile, correctness, timing vs cuBLAS/cuDNN, "
      "integrity checks, target-instruction check",
      [extension](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
        auto flags = std::make_shared<EvalFlags>();
        app.add_option("kernel", flags->kernel_path, "The candidate's CUDA source (kernel.cu)")
            ->required();
        app.add_option("--task", flags->task, "Task whose `run` the kernel implements")->required();
        app.add_option("--arch", flags->arch, "Target architecture (default: the task's)")
            ->check(CLI::IsMember({"sm_90a", "sm_100a"}));
        app.add_flag("--json", flags->json, "Print the full result (traces, stages) as JSON");
        app.add_option("--trace-out", flags->trace_out,
                       "Append one FlashInfer-Trace line per workload to this .jsonl file");
        app.add_option("--operation", flags->operation,
                       "evaluate (default): correctness, timing and the checks; sanitize: the "
                       "compute-sanitizer gate and the correctness trials, nothing timed; "
                       "profile: evaluate with the Nsight Compute check forced on; debug: the "
                       "correctness trials, a failure explained by the debug stage")
            ->check(CLI::IsMember({"evaluate", "sanitize", "profile", "debug"}));
        app.add_flag("--debug", flags->debug,
                     "On RUNTIME_ERROR, MEMORY_ERROR or TIMEOUT: compute-sanitizer's fault and "
                     "cuda-gdb over a CUDA core dump, <= 30 s (docs/eval.md \"Debug stage\")");
        app.add_flag("--sanitize", flags->sanitize,
                     "Run compute-sanitizer on one call first; findings -> MEMORY_ERROR");
        app.add_option("--sanitizer-tool", flags->sanitizer_tool, "Sanitizer tool for --sanitize")
            ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck"}));
        app.add_flag("--no-ncu", flags->no_ncu,
                     "Skip the Nsight Compute check (target instructions: not_run)");
        app.add_option("--seed", flags->seed, "Base seed of the generated inputs (recorded)");
        app.add_option("--trials", flags->trials,
                       "Correctness trials (default: 3 forward, 1 backward)")
            ->check(CLI::Range(0, 100));
        app.add_flag("--feedback", flags->feedback,
                     "Print the feedback text a model would get instead of the table");
        auto* unsafe =
            app.add_flag("--unsafe-no-sandbox", flags->unsafe_no_sandbox,
                         "Run the candidate without the sandbox (recorded in the result and the "
                         "feedback; for debugging the harness only)");
        app.add_option("--remote", flags->remote,
                       "Evaluate on this `ptxbench serve` instead of here (several, comma-"
                       "separated: the least loaded, with fail-over); token from "
                       "PTXBENCH_SERVICE_TOKEN")
            ->delimiter(',')
            ->excludes(unsafe);
        app.add_flag("--remote-compile", flags->remote_compile,
                     "With --remote: send the source and let the service compile it (default: "
                     "compile here and send kernel.so, which the service re-checks)");
        app.add_option("--timing-protocol", flags->timing_protocol,
                       "interleaved (default): reference and candidate timed in alternating "
                       "blocks in a secret order, so both see the same clock and power state; "
                       "sequential: the reference first, then the candidate; paper: ours "
                       "(interleaved) and then the reference implementation's recipe on both "
                       "sides (10 warm-up + 50 back-to-back calls per trial, L2 flushed, mean of "
                       "the trial medians), whose speedup is reported, for comparison with "
                       "published numbers")
            ->check(CLI::IsMember({"interleaved", "sequential", "paper"}));
        app.add_flag("--energy", flags->energy,
                     "Also measure joules per call of the reference and the candidate (NVML's "
                     "energy counter over >= 1 s of back-to-back calls per side, idle power "
                     "subtracted; about 3 s more; interleaved timing only)");
        app.add_flag("--pin-reference-algorithm,!--no-pin-reference-algorithm",
                     flags->pin_reference_algorithm,
                     "cuBLASLt references (default on): every runner uses the algorithm the "
                     "supervisor's own reference instance autotuned (recorded in the trace) "
                     "instead of autotuning again in its own process, where candidates 0.5 % "
                     "apart are picked differently; --no-pin-reference-algorithm lets each "
                     "runner autotune (as before 2026-12-02)");
        app.add_flag("--profiler-hints", flags->profiler_hints,
                     "Also collect the profiler hints' metrics (speed of light, memory, "
                     "occupancy, warp stall reasons) on the profiled call: in --json under "
                     "target_instructions.hint_metrics, and as sentences with --feedback")
            ->excludes("--no-ncu");
        app.add_flag("--ncu-source-page", flags->ncu_source_page,
                     "Profile with the method before 2026-12-03, to cross-check verdicts: import "
                     "ncu's source page instead of reading per-instruction counters from the raw "
                     "page, and profile every kernel of the call instead of only those whose "
                     "SASS holds a target family (about 1 s slower)")
            ->excludes("--no-ncu");
        app.add_option("--also-reference", flags->also_reference,
                       "Also time a second library reference, after a PASSED candidate: "
                       "`flashinfer` (MHA forward tasks only, a build with "
                       "-DPTXB_WITH_FLASHINFER=ON) checks FlashInfer's SM90 prefill against the "
                       "task reference's outputs, times it alone, and records its plan, median "
                       "and the candidate's speedup over it in workload.reference.also_reference; "
                       "the verdict and speedup stay cuDNN's. A few seconds more");
        app.add_option("--save-profile", flags->save_profile,
                       "Write Nsight Compute's pages of the profiled call into this folder "
                       "(ncu_source.csv: executed counts per SASS instruction; ncu_raw.csv: "
                       "launches and kernel times), for reading what the verdict was made from")
            ->excludes("--remote");
        auto adjust_options = install(extension, app);
        return [flags, adjust_options, &globals]() -> Result<int> {
          // Ctrl-C ends the compile's and the supervisor's process groups (core/interrupt.h).
          install_interrupt_handlers();
          PTXB_ASSIGN_OR_RETURN(TaskRegistry registry, TaskRegistry::load(globals.tasks_dirs));
          PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(flags->task));
          // A local evaluation refuses a second reference that does not fit the task in
          // evaluate(), before compiling. For --remote the task is checked here, before anything
          // is sent (the service checks its own build).
          if (!flags->remote.empty())
            PTXB_RETURN_IF_ERROR(check_also_reference(flags->also_reference, *task, true));
          EvalRequest request;
          request.task = task->name;
          request.arch = flags->arch;
          auto source = read_file(flags->kernel_path, CompileOptions::defaults().max_source_bytes);
          if (!source.ok()) return source.error();
          request.source = std::move(source).value();
          request.options.seed = flags->seed;
          request.options.sanitize = flags->sanitize;
          request.options.sanitizer_tool = flags->sanitizer_tool;
          request.options.ncu = !flags->no_ncu;
          request.options.trials = flags->trials;
          request.options.unsafe_no_sandbox = flags->unsafe_no_sandbox;
          request.options.timing.interleave = flags->timing_protocol != "sequential";
          request.options.timing.paper = flags->timing_protocol == "paper";
          request.options.energy = flags->energy;
          request.options.pin_reference_algorithm = flags->pin_reference_algorithm;
          request.options.also_reference = flags->also_reference;
          request.options.debug = flags->debug;
          request.options.profiler_hints = flags->profiler_hints;
          request.options.ncu_source_page = flags->ncu_source_page;
          adjust_options(request.options);
          request.operation = *parse_eval_operation(flags->operation);  // CLI checked the name
          if (auto applied = apply_operation(request.operation, request.options); !applied.ok())
            return make_error("usage", "--operation {}: {}", flags->operation,
                              applied.error().message);
          if (!flags->remote.empty() &&
              (request.options.unsafe_no_sandbox || request.options.disable_static_checks ||
               request.options.reference_as_candidate))
            return make_error("usage",
                              "--remote: a service never runs an unsandboxed or unchecked "
                              "evaluation");
          SystemProcessRunner processes;
          PTXB_ASSIGN_OR_RETURN(
              EvalResult result,
              flags->remote.empty()
                  ? evaluate(request, registry, globals.tasks_dirs,
                             local_tools(flags->save_profile), processes)
                  : evaluate_remotely(request, flags->remote, flags->remote_compile, registry,
                                      globals.tasks_dirs));
          if (!flags->trace_out.empty())
            PTXB_RETURN_IF_ERROR(
                append_traces(flags->trace_out, result, *task, flags->kernel_path));
          if (flags->json) {
            Json out = result.to_json();
            out["traces"] = Json::array();
            for (const auto& trace : result.traces(
                     task->definition.name, workload_to_json(task->workload), flags->kernel_path))
              out["traces"].push_back(trace_to_json(trace));
            print_json(out);
          } else if (flags->feedback) {
            FeedbackOptions feedback;
            feedback.profiler_hints = flags->profiler_hints;
            std::cout << render_feedback(result, feedback);
          } else {
            std::cout << render_summary(result);
          }
          if (result.gpu_skipped) return 3;
          return result.status == PtxbStatus::kPassed ? 0 : 1;
        };
      }};
}

}  // namespace ptxb::cli
