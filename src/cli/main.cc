// The command-line front end of `ptxbench` (main in src/mains/ptxbench.cc) and of
// `ptxbench-testing` (tests/support/testing_cli.cc), which differ only in the extensions they
// install in the command table (cli/command.h). Exit codes: 0 success, 1 failure (one-line error on
// stderr), 2 usage error (CLI11 prints what was wrong and how to get help).
#include <cstdlib>
#include <iostream>
#include <map>
#include "core/version.h"

#include "cli/command.h"
#include "cli/run_cli.h"
#include "core/interrupt.h"
#include "core/strings.h"

namespace ptxb::cli {
namespace {

// CLI11's own words for a usage error (our range checks word theirs themselves: cli_checks.cc,
// since CLI11's NonNegativeNumber prints DBL_MAX in full).
std::string usage_message(const CLI::ParseError& error) {
  std::string message = error.what();
  if (message.empty()) message = error.get_name();
  return message;
}

}  // namespace

int run_cli(int argc, char** argv, const CommandExtensions& extensions) {
  CLI::App app{
      "PTXBench: benchmark and adapt LLMs for GPU kernels written with architecture-specific PTX\n"
      "(wgmma, TMA, tcgen05). Each kernel is judged on three separate axes: correctness, target\n"
      "instructions executed at run time, and speed against cuBLAS/cuDNN.",
      "ptxbench"};
  app.set_version_flag("--version", std::string(ptxb::harness_version()));
  app.require_subcommand(1);
  app.footer(
      "Run `ptxbench <command> --help` for a command's options. Docs: docs/cli.md.\n"
      "Environment: PTXBENCH_TASKS_DIR adds task sets (colon-separated), like --tasks-dir.");

  // Global options are accepted after the subcommand too (`ptxbench tasks list --tasks-dir D`):
  // subcommands created from here on inherit fallthrough.
  app.fallthrough();
  GlobalOptions globals;
  app.add_option("--tasks-dir", globals.tasks_dirs,
                 "Extra FlashInfer-Trace task set (folder with tasks.json, definitions/, "
                 "workloads/); repeatable")
      ->check(CLI::ExistingDirectory);

  std::map<CLI::App*, CommandBody> bodies;
  std::vector<std::pair<CLI::App*, const CommandSpec*>> pending;
  const std::vector<CommandSpec> table = command_table(extensions);
  for (const auto& spec : table) {
    CLI::App* sub = app.add_subcommand(spec.name, spec.summary);
    pending.emplace_back(sub, &spec);
  }
  for (auto& [sub, spec] : pending) bodies[sub] = spec->setup(*sub, globals);

  // An unknown first word is the most common slip; name it and list the commands.
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const auto& spec : table) {
      known |= spec.name == argv[1];
      names += (names.empty() ? "" : ", ") + spec.name;
    }
    if (!known) {
      std::cerr << "ptxbench: error: unknown command '" << argv[1] << "' (commands: " << names
                << "; see ptxbench --help)" << std::endl;
      return kUsageExit;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" with exit code 0 in CLI11: they print to stdout.
    if (e.get_exit_code() == 0) return app.exit(e);
    // Every real usage error: one line in our format, naming where to get help, exit 2.
    std::string help = "ptxbench --help";
    for (const CLI::App* sub = &app; sub != nullptr;) {
      const auto parsed = sub->get_subcommands();
      if (parsed.empty()) break;
      sub = parsed.front();
      help.insert(help.size() - std::string(" --help").size(), " " + sub->get_name());
    }
    std::cerr << "ptxbench: error: " << one_line(usage_message(e)) << " (see " << help << ")"
              << std::endl;
    return kUsageExit;
  }
  if (const char* env = std::getenv("PTXBENCH_TASKS_DIR"); env && *env) {
    for (const auto& dir : ptxb::split(env, ':'))
      if (!dir.empty()) globals.tasks_dirs.push_back(dir);
  }
  for (auto& [sub, body] : bodies) {
    if (!sub->parsed()) continue;
    // A subcommand that itself has subcommands (e.g. `tasks`) needs one of them.
    // The library returns errors, never throws across its API; an exception that still escapes
    // (a third-party library's) is a bug, reported as one error line, not an abort (exit 134).
    try {
      auto result = body();
      // Interrupted (core/interrupt.h; `run`, `compile`, `eval`): the shell's 128 + signal.
      if (const int signal_number = interrupt_signal(); signal_number != 0) {
        if (!result.ok()) report_error(result.error());
        return 128 + signal_number;
      }
      if (!result.ok()) return report_error(result.error());
      return result.value();
    } catch (const std::exception& e) {
      return report_error(
          Error{std::string("internal error (please report it): ") + e.what(), "internal"});
    }
  }
  return 2;
}

int run_cli(int argc, char** argv) {
  return run_cli(argc, argv, CommandExtensions{});
}

}  // namespace ptxb::cli
