// Runs the built `ptxbench` binary as a user would (end-to-end CLI tests).
#pragma once

#include <string>
#include <vector>

#include "core/process.h"

namespace ptxb::testing {

inline ProcessResult run_cli(const std::vector<std::string>& args,
                             const std::vector<std::string>& extra_env = {}) {
  ProcessSpec spec;
  spec.argv = {PTXB_CLI_PATH};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  std::vector<std::string> env;
  // A user's PTXBENCH_TASKS_DIR must not leak into the tests.
  for (const auto& entry : current_environment())
    if (entry.rfind("PTXBENCH_TASKS_DIR=", 0) != 0) env.push_back(entry);
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  spec.env = env;
  spec.timeout = std::chrono::milliseconds(60000);
  SystemProcessRunner runner;
  auto result = runner.run(spec);
  return result.ok() ? result.value() : ProcessResult{};
}

}  // namespace ptxb::testing
