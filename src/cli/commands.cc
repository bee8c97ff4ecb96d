#include "cli/command.h"

namespace ptxb::cli {

CommandSpec make_tasks_command();
CommandSpec make_validate_command();
CommandSpec make_env_command();
CommandSpec make_compile_command();

const std::vector<CommandSpec>& command_table() {
  static const std::vector<CommandSpec> table = {
      make_tasks_command(),
      make_validate_command(),
      make_env_command(),
      make_compile_command(),
  };
  return table;
}

}  // namespace ptxb::cli
