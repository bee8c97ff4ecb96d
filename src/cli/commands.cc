#include "cli/command.h"

namespace ptxb::cli {

CommandSpec make_tasks_command();
CommandSpec make_validate_command();
CommandSpec make_prompt_command();
CommandSpec make_compile_command();
CommandSpec make_eval_command();
CommandSpec make_env_command();
CommandSpec make_run_command();
CommandSpec make_report_command();

// The order `ptxbench --help` lists them: what to run on (tasks), what a model sees (prompt),
// the evaluation stages (compile, eval), agent runs and their metrics (run, report), then the
// machine (env).
const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> table = {
      make_tasks_command(), make_validate_command(), make_prompt_command(), make_compile_command(),
      make_eval_command(),  make_run_command(),      make_report_command(), make_env_command(),
  };
  return table;
}

}  // namespace ptxb::cli
