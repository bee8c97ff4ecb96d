// `ptxbench compile KERNEL.cu --task NAME [--arch sm_90a|sm_100a] [--no-cache] [--json]`
// Compiles a candidate against a task's `run` signature and prints the compile result: status,
// per-kernel registers/spills/shared memory, target-instruction families and the static verdict,
// and where the artifact lies. Exit 0 only when the status is OK.
#include <iostream>

#include "cli/command.h"
#include "compile/compiler.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/strings.h"
#include "core/symbol_names.h"
// The task registry lands from branch wip-a; until it is merged the command says so instead
// of failing the build.
#if __has_include("tasks/registry.h")
#include "tasks/registry.h"
#define PTXB_HAVE_TASK_REGISTRY 1
#endif

namespace ptxb::cli {
namespace {

struct CompileFlags {
  std::string kernel_path;
  std::string task;
  std::string arch;
  bool no_cache = false;
  bool json = false;
};

void print_summary(const CompileResult& result) {
  std::cout << "status: " << compile_status_name(result.status);
  if (!result.reason.empty()) std::cout << " (" << result.reason << ")";
  std::cout << (result.from_cache ? " [cached]" : "") << "\n";
  // A compile error is shown as nvcc printed it, once: each diagnostic with its source line
  // and caret (the sanitized log without the command lines); the message repeats the first.
  std::string diagnostics;
  if (result.status == CompileStatus::kCompileError && !result.diagnostics.empty())
    for (const auto& line : split_lines(result.log))
      if (!starts_with(line, "$ ") && !starts_with(line, "# ") && !trim(line).empty())
        diagnostics += line + "\n";
  if (diagnostics.empty())
    std::cout << result.message << "\n";
  else
    std::cout << diagnostics;
  for (const auto& finding : result.forbidden)
    std::cout << "  forbidden: " << finding.describe() << "\n";
  for (const auto& kernel : result.sass.kernels) {
    std::cout << "kernel " << demangle_symbol(kernel.name) << "\n";
    if (const auto* report = result.ptxas.find(kernel.name)) {
      std::cout << fmt::format(
          "  registers {}, smem {} B, stack {} B, spills {} B stored / {} B loaded\n",
          report->registers, report->shared_bytes, report->stack_frame_bytes,
          report->spill_store_bytes, report->spill_load_bytes);
      for (const auto& d : report->diagnostics)
        if (slows_the_kernel(d)) std::cout << "  ptxas " << d.code << ": " << d.message << "\n";
    }
    std::vector<std::string> families;
    for (const auto& [family, count] : kernel.family_counts)
      families.push_back(fmt::format("{} x{}", family, count));
    std::cout << "  families: " << (families.empty() ? "none" : join(families, ", "))
              << fmt::format("; local memory: {} LDL, {} STL\n", kernel.local_loads,
                             kernel.local_stores);
  }
  for (const auto& d : result.ptxas.unattributed())
    if (slows_the_kernel(d)) std::cout << "ptxas " << d.code << ": " << d.message << "\n";
  if (result.ok()) {
    std::cout << "target instructions (" << result.sass.target_arch << "): "
              << (result.sass.target_present
                      ? "present: " + join(result.sass.qualifying_families_found, ", ")
                      : "absent")
              << "\n";
  }
  if (!result.artifact.directory.empty())
    std::cout << "artifact: " << result.artifact.directory << "\n";
}

}  // namespace

CommandSpec make_compile_command(const Extension<CompileOptions>& extension) {
  return {"compile",
          "Compile a kernel.cu for a task: build, forbidden-library check, ptxas and SASS analysis",
          [extension](CLI::App& app, const GlobalOptions& globals) -> CommandBody {
            auto flags = std::make_shared<CompileFlags>();
            app.add_option("kernel", flags->kernel_path, "The candidate's CUDA source (kernel.cu)")
                ->required();
            app.add_option("--task", flags->task,
                           "Task whose `run` signature the kernel implements")
                ->required();
            app.add_option("--arch", flags->arch, "Target architecture (default: the task's)")
                ->check(CLI::IsMember({"sm_90a", "sm_100a"}));
            app.add_flag("--no-cache", flags->no_cache, "Recompile even if a cached result exists");
            app.add_flag("--json", flags->json, "Print the full compile result as JSON");
            auto adjust_options = install(extension, app);
            return [flags, adjust_options, &globals]() -> Result<int> {
              // Ctrl-C ends nvcc's process group too, and nothing is cached (core/interrupt.h).
              install_interrupt_handlers();
#ifndef PTXB_HAVE_TASK_REGISTRY
              (void)globals;
              return make_error("unavailable",
                                "compile --task {}: this build has no task registry (src/tasks)",
                                flags->task);
#else
              PTXB_ASSIGN_OR_RETURN(TaskRegistry registry, TaskRegistry::load(globals.tasks_dirs));
              PTXB_ASSIGN_OR_RETURN(const Task* task, registry.get(flags->task));
              CompileRequest request;
              request.options = CompileOptions::defaults();
              request.options.arch = flags->arch.empty() ? task->arch : flags->arch;
              request.options.use_cache = !flags->no_cache;
              adjust_options(request.options);
              // The size limit is enforced before reading too, so a huge file is never loaded.
              auto source = read_file(flags->kernel_path, request.options.max_source_bytes);
              if (!source.ok()) return source.error();
              request.source = std::move(source).value();
              request.signature = make_run_signature(task->definition);
              SystemProcessRunner runner;
              PTXB_ASSIGN_OR_RETURN(Toolchain toolchain, Toolchain::discover(runner));
              PTXB_ASSIGN_OR_RETURN(CompileResult result, compile_solution(request, toolchain));
              if (flags->json)
                print_json(compile_result_to_json(result));
              else
                print_summary(result);
              return result.ok() ? 0 : 1;
#endif
            };
          }};
}

}  // namespace ptxb::cli
