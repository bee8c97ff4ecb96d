// The `ptxbench` subcommand table. Each subcommand lives in its own cmd_*.cc file and exposes a
// make_*_command() returning a CommandSpec; commands.cc lists them in the order `--help` shows.
// Front ends stay thin: parse flags, call the core library, print.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {
struct CompileOptions;  // compile/compile_types.h
struct EvalOptions;     // eval/eval_types.h
class TurnEvaluator;    // agent/turn_evaluator.h
}  // namespace ptxb

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

// Makes the turn evaluator of one GPU slot of `ptxbench run` (`devices`: its
// CUDA_VISIBLE_DEVICES, "" to inherit).
using EvaluatorFactory = std::function<std::unique_ptr<TurnEvaluator>(const std::string& devices)>;

// What `run` is about to use, for an extension to adjust: the evaluator of each GPU slot, and
// the arguments every shard worker it starts gets (`run --executor`: `ptxbench run --shard
// I/N`, on a Slurm node or another GPU), so that an option of the coordinator reaches its
// workers too.
struct RunHooks {
  EvaluatorFactory make_evaluator;
  std::vector<std::string> worker_args;
};

// How `serve` starts its worker processes: the argv before `--gpu N` (default: this executable
// with `serve-worker` and the --tasks-dir options).
struct ServeWorkerCommand {
  std::vector<std::string> argv;
};

// An extension of one subcommand: called while the command sets up its options, it may add
// options of its own to `app`; it returns what the command then applies, once the arguments
// are parsed, to the object it is about to run with.
template <typename Target>
using Extension = std::function<std::function<void(Target&)>(CLI::App& app)>;

// The extension points of the command table. The shipped `ptxbench` installs none, so it has
// no test-only option and links no test double; `ptxbench-testing` (tests/support/
// testing_cli.cc) is the same front end with the test-only options installed here.
struct CommandExtensions {
  Extension<CompileOptions> compile;         // `compile`: the compile options
  Extension<EvalOptions> eval;               // `eval`: the evaluation options
  Extension<RunHooks> run;                   // `run`: each GPU slot's evaluator, workers' args
  Extension<ServeWorkerCommand> serve;       // `serve`: how its workers are started
  Extension<EvaluatorFactory> serve_worker;  // `serve-worker`: its evaluator
  Extension<EvaluatorFactory> fixit;         // `fixit repair`: each GPU slot's evaluator
};

// The subcommands in the order `--help` lists them, with `extensions` installed.
std::vector<CommandSpec> command_table(const CommandExtensions& extensions);

// The whole front end: parses `argv`, runs one subcommand, returns the exit code. main() of
// `ptxbench` (src/mains/ptxbench.cc) passes no extensions.
int run_cli(int argc, char** argv, const CommandExtensions& extensions);

// For a command's setup: installs `extension` on `app` (if there is one) and returns what to
// apply to the command's target (nothing without an extension).
template <typename Target>
std::function<void(Target&)> install(const Extension<Target>& extension, CLI::App& app) {
  if (!extension) return [](Target&) {};
  auto adjust = extension(app);
  if (!adjust) return [](Target&) {};
  return adjust;
}

// A flag check: a finite number >= `minimum` (> when not `inclusive`), with a message that
// names the bound plainly (cli_checks.cc).
CLI::Validator number_at_least(double minimum, bool inclusive);

// Output helpers used by every command.
void print_json(const Json& value);
// Exit code of a usage error (unknown command, unknown, missing or out-of-range flag).
inline constexpr int kUsageExit = 2;
// `message` on one line: line breaks become "; ".
std::string one_line(const std::string& message);
// Prints "ptxbench: error: <message>" on one line to stderr; returns the exit code: 2 for an
// Error with code "usage", else 1.
int report_error(const Error& error);

}  // namespace ptxb::cli
