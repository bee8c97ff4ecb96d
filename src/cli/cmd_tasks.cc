// PLACEHOLDER (skeleton): replaced by the real command before landing.
#include "cli/command.h"

namespace ptxb::cli {

CommandSpec make_tasks_command() {
  return {"tasks", "(placeholder)", [](CLI::App&, const GlobalOptions&) -> CommandBody {
            return []() -> Result<int> { return make_error("todo", "not implemented"); };
          }};
}

}  // namespace ptxb::cli
