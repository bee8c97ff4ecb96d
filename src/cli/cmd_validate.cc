// PLACEHOLDER (skeleton): replaced by the real command before landing.
#include "cli/command.h"

namespace ptxb::cli {

CommandSpec make_validate_command() {
  return {"validate", "(placeholder)", [](CLI::App&, const GlobalOptions&) -> CommandBody {
            return []() -> Result<int> { return make_error("todo", "not implemented"); };
          }};
}

}  // namespace ptxb::cli
