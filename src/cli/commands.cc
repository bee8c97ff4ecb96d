#include "cli/command.h"

namespace ptxb::cli {

CommandSpec make_tasks_command();
CommandSpec make_validate_command();
CommandSpec make_prompt_command();
CommandSpec make_compile_command(const Extension<CompileOptions>& extension);
CommandSpec make_eval_command(const Extension<EvalOptions>& extension);
CommandSpec make_env_command();
CommandSpec make_run_command(const Extension<RunHooks>& extension);
CommandSpec make_status_command();
CommandSpec make_report_command();
CommandSpec make_fixit_command(const Extension<EvaluatorFactory>& extension);
CommandSpec make_kernelgen_command();
CommandSpec make_serve_command(const Extension<ServeWorkerCommand>& extension);
CommandSpec make_serve_worker_command(const Extension<EvaluatorFactory>& extension);

// The order `ptxbench --help` lists them: what to run on (tasks), what a model sees (prompt),
// the evaluation stages (compile, eval), agent runs and their metrics (run, report), then the
// machine (env).
std::vector<CommandSpec> command_table(const CommandExtensions& extensions) {
  return {
      make_tasks_command(),
      make_validate_command(),
      make_prompt_command(),
      make_compile_command(extensions.compile),
      make_eval_command(extensions.eval),
      make_run_command(extensions.run),
      make_status_command(),
      make_report_command(),
      make_fixit_command(extensions.fixit),
      make_kernelgen_command(),
      make_serve_command(extensions.serve),
      make_serve_worker_command(extensions.serve_worker),
      make_env_command(),
  };
}

}  // namespace ptxb::cli
