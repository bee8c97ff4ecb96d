// The `ptxbench` subcommand table. Each subcommand lives in its own cmd_*.cc file and exposes a
// make_*_command() returning a CommandSpec; commands.cc lists them in the order `--help` shows.
// Front ends stay thin: parse flags, call the core library, print.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::cli {

// Options shared by every subcommand (set on the top-level app).
struct GlobalOptions {
  std::vector<std::string> tasks_dirs;  // --tasks-dir (repeatable) plus $PTXBENCH_TASKS_DIR
};

// A subcommand's body: returns the process exit code, or an Error that main prints as one line.
using CommandBody = std::function<Result<int>()>;

struct CommandSpec {
  std::string name;
  std::string summary;
  // Adds the subcommand's options to `app` and returns its body (which reads those options).
  std::function<CommandBody(CLI::App& app, const GlobalOptions& globals)> setup;
};

const std::vector<CommandSpec>& command_table();

// Output helpers used by every command.
void print_json(const Json& value);
// Prints "ptxbench: error: <message>" to stderr; returns the exit code for failures (1).
int report_error(const Error& error);

}  // namespace ptxb::cli
