#include "eval/eval_pipeline.h"

#include <unistd.h>

#include <chrono>

#include "compile/compiler.h"
#include "core/fs.h"
#include "core/install_layout.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "core/version.h"
#include "env/gpu_probe.h"
#include "env/tool_probe.h"
#include "eval/also_reference.h"

namespace ptxb {
namespace {

// PATH first, then the folders `ptxbench env` searches (CUDA toolkit, Nsight Compute installs).
std::string find_tool(const std::string& name) {
  if (auto found = find_executable(name)) return *found;
  for (const auto& dir : default_tool_dirs())
    if (auto found = find_executable(dir + "/" + name)) return *found;
  return "";
}

PtxbStatus compile_status_to_ptxb(CompileStatus status) {
  switch (status) {
    case CompileStatus::kOk:
      return PtxbStatus::kPassed;
    case CompileStatus::kForbidden:
      return PtxbStatus::kForbidden;
    case CompileStatus::kCompileError:
      break;
  }
  return PtxbStatus::kCompileError;
}

// The compile split's binary: its files must hash to what the request names (the service
// checked them on upload; this is the worker reading them back), then analyse_prebuilt.
Result<CompileResult> analyse_prebuilt_files(const CompileRequest& request,
                                             const PrebuiltFiles& files,
                                             const Toolchain& toolchain) {
  // kernel.so files of real kernels are a few MiB; this bounds a hostile upload.
  constexpr std::size_t kMaxBinaryBytes = std::size_t{256} << 20;
  PrebuiltBinary binary;
  binary.nvcc_version = files.nvcc_version;
  PTXB_ASSIGN_OR_RETURN(binary.shared_object, read_file(files.shared_object_path, kMaxBinaryBytes));
  PTXB_ASSIGN_OR_RETURN(binary.ptx, read_file(files.ptx_path, kMaxBinaryBytes));
  if (sha256_hex(binary.shared_object) != files.shared_object_sha256 ||
      sha256_hex(binary.ptx) != files.ptx_sha256)
    return make_error("integrity", "{}: the prebuilt files do not hash to their names",
                      files.shared_object_path);
  return analyse_prebuilt(request, binary, toolchain);
}

}  // namespace

std::string gpu_stages_unavailable(const EvalTools& tools, const std::string& arch) {
  if (!tools.gpu_disabled_reason.empty()) return tools.gpu_disabled_reason;
  if (arch != "sm_90a") return "only sm_90a (Hopper) GPUs are evaluated by this build";
  GpuProbe probe = probe_gpus();
  if (!probe.has_gpu()) return "no GPU: " + join(probe.problems, "; ");
  if (!find_executable(tools.supervisor_path))
    return tools.supervisor_path + " is not built (configure with CUDA)";
  return "";
}

EvalTools EvalTools::discover() {
  EvalTools t;
  // Where the helpers are (core/install_layout.h); when nowhere, the paths next to ptxbench
  // are reported as missing.
  auto helpers = find_helpers_dir();
  const std::string dir = helpers.ok() ? helpers->path : executable_dir();
  t.supervisor_path = dir + "/ptxbench-supervisor";
  t.runner_path = dir + "/ptxbench-runner";
  t.reference_library_path = dir + "/libptxbench_reference.so";
  t.ncu_path = find_tool("ncu");
  t.sanitizer_path = find_tool("compute-sanitizer");
  t.cuda_gdb_path = find_tool("cuda-gdb");
  t.sandbox_path = dir + "/ptxbench-sandbox";
  return t;
}

Json EvalTools::to_json() const {
  return Json{{"supervisor", supervisor_path},
              {"runner", runner_path},
              {"reference_library", reference_library_path},
              {"ncu", ncu_path},
              {"compute_sanitizer", sanitizer_path},
              {"cuda_gdb", cuda_gdb_path},
              {"sandbox", sandbox_path}};
}

CompileRequest make_compile_request(const EvalRequest& request, const Task& task) {
  CompileRequest compile_request;
  compile_request.options = CompileOptions::defaults();
  compile_request.options.arch = request.arch.empty() ? task.arch : request.arch;
  compile_request.options.enforce_forbidden = !request.options.disable_static_checks;
  // The one escape from the sandbox covers the compile's tools too (recorded in the trace).
  compile_request.options.sandbox.enabled = !request.options.unsafe_no_sandbox;
  compile_request.source = request.source;
  compile_request.source_name = request.source_name;
  compile_request.signature = make_run_signature(task.definition);
  return compile_request;
}

Result<EvalResult> evaluate(const EvalRequest& request, const TaskRegistry& registry,
                            const std::vector<std::string>& tasks_dirs, const EvalTools& tools,
                            ProcessRunner& processes) {
  PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(request.task));
  // A request from any front end (the CLI, the agent, a service): refused before compiling.
  PTXB_RETURN_IF_ERROR(
      check_also_reference(request.options.also_reference, *task, built_with_flashinfer()));
  EvalResult result;
  result.task = task->name;
  result.arch = request.arch.empty() ? task->arch : request.arch;
  result.options = request.options;
  result.harness_version = harness_version();

  // ---- compile (trusted process; no candidate code runs) ----
  const auto compile_start = std::chrono::steady_clock::now();
  const CompileRequest compile_request = make_compile_request(request, *task);
  PTXB_ASSIGN_OR_RETURN(Toolchain toolchain, Toolchain::discover(processes));
  PTXB_ASSIGN_OR_RETURN(CompileResult compiled,
                        request.prebuilt
                            ? analyse_prebuilt_files(compile_request, *request.prebuilt, toolchain)
                            : compile_solution(compile_request, toolchain));
  result.stage_ms.emplace_back("compile", std::chrono::duration<double, std::milli>(
                                              std::chrono::steady_clock::now() - compile_start)
                                              .count());
  result.compile = compiled;
  for (const auto& [family, count] : compiled.sass.family_totals)
    result.target_instructions.static_counts[family] = count;
  // Every outcome carries one workload entry, so --trace-out writes one trace per workload even
  // when the GPU stages never ran.
  auto workload_entry = [&] {
    WorkloadEval w;
    w.workload = task->workload_name();
    w.workload_uuid = task->workload.uuid;
    w.seed = request.options.seed;
    w.status = result.status;
    w.reason = result.reason;
    w.message = result.message;
    result.workloads = {w};
  };
  if (!compiled.ok()) {
    result.status = compile_status_to_ptxb(compiled.status);
    result.reason = compiled.reason;
    result.message = compiled.message;
    result.target_instructions.reason = "not compiled";
    workload_entry();
    return result;
  }

  // ---- GPU stages, in the supervisor ----
  auto skip = [&](std::string why) {
    result.gpu_skipped = true;
    result.gpu_skip_reason = std::move(why);
    // Not PASSED: nothing was run, so nothing passed. The CLI exits 3 ("incomplete") for it.
    result.status = PtxbStatus::kInfraError;
    result.reason = "gpu_skipped";
    result.message = "compiled; GPU stages skipped: " + result.gpu_skip_reason;
    result.target_instructions.verdict =
        compiled.sass.target_present ? kInstNotRun : kInstStaticAbsent;
    result.target_instructions.reason = "no GPU";
    workload_entry();
    return result;
  };
  if (std::string why = gpu_stages_unavailable(tools, result.arch); !why.empty())
    return skip(std::move(why));
  const GpuProbe probe = probe_gpus();  // recorded in the result's environment

  SupervisorJob job;
  job.request = request;
  job.compile = compiled;
  job.tasks_dirs = tasks_dirs;
  job.runner_path = tools.runner_path;
  job.reference_library_path = tools.reference_library_path;
  job.ncu_path = tools.ncu_path;
  job.sanitizer_path = tools.sanitizer_path;
  job.cuda_gdb_path = tools.cuda_gdb_path;
  job.sandbox_path = tools.sandbox_path;
  job.profile_save_dir = tools.profile_save_dir;
  ProcessSpec spec;
  spec.argv = {tools.supervisor_path, "--job", "-"};
  spec.stdin_data = job.to_json().dump();
  spec.timeout =
      std::chrono::milliseconds(static_cast<std::int64_t>(kSupervisorTimeoutSeconds * 1000));
  spec.output_cap_bytes = 64u << 20;
  auto ran = processes.run(spec);
  auto infra = [&](std::string message) {
    result.status = PtxbStatus::kInfraError;
    result.reason = "supervisor";
    result.message = std::move(message);
    return result;
  };
  if (!ran.ok()) return infra("could not start the supervisor: " + ran.error().message);
  // Stopped by our own Ctrl-C (core/interrupt.h): no verdict at all, not an INFRA_ERROR.
  if (ran->interrupted)
    return make_error("interrupted", "evaluation stopped: ptxbench was interrupted");
  if (ran->timed_out || ran->exit_code != 0)
    return infra(fmt::format("the supervisor failed ({}): {}", ran->describe(),
                             trim(ran->stderr_text).substr(0, 2000)));
  Json gpu_json;
  try {
    gpu_json = Json::parse(ran->stdout_text);
  } catch (const std::exception& e) {
    return infra(std::string("the supervisor printed no valid result JSON: ") + e.what());
  }
  PTXB_ASSIGN_OR_RETURN(EvalResult gpu, EvalResult::from_json(gpu_json));
  std::vector<std::pair<std::string, double>> stages = result.stage_ms;
  stages.insert(stages.end(), gpu.stage_ms.begin(), gpu.stage_ms.end());
  gpu.stage_ms = stages;
  gpu.compile = result.compile;
  gpu.environment.supervisor_log = trim(ran->stderr_text).substr(0, 4000);
  gpu.environment.tools = tools.to_json();
  gpu.environment.gpu_probe = probe.to_json();
  return gpu;
}

}  // namespace ptxb
