// `ptxbench-testing`: the `ptxbench` front end (src/cli) with the test-only options installed
// through the command table's extension points (cli/command.h). Built with the tests, never
// shipped: the end-to-end tests and the benchmarks that need a test hook inside a real binary
// run this one (PTXB_TESTING_CLI_PATH), everything else runs `ptxbench`.
//
//   compile --test-disable-static-checks   forbidden headers/symbols are recorded, the build
//                                          goes on (a separate cache entry: what `eval` with the
//                                          same flag loads, so the integrity suite can warm it)
//   eval --test-disable-static-checks      the same for the evaluation, to show that the
//                                          run-time checks and the sandbox stop a candidate by
//                                          themselves (scripts/integrity_suite.sh)
//   eval --test-reference-as-candidate     the task's library reference is loaded in the
//                                          candidate slot (the A/A benchmark, bench/eval_bench.sh);
//                                          recorded in the result's options
//   run --test-fake-eval DIR               kernels are judged by FakeTurnEvaluator from a
//                                          directive comment, every evaluation logged to
//                                          DIR/evals.log (tests/agent/run_cli_test.cc)
//   fixit repair --test-fake-eval DIR      the same for the repair loop (tests/adapt)
//   serve --test-fake-workers DIR          the service's workers run FakeTurnEvaluator
//                                          (serve-worker --test-fake-eval DIR): the fake GPU
//                                          worker of tests/service/serve_e2e_test.cc
#include <memory>

#include "cli/command.h"
#include "compile/compile_types.h"
#include "eval/eval_types.h"
#include "fake_turn_evaluator.h"

namespace ptxb::cli {
namespace {

constexpr const char* kGroup = "Test-only options (ptxbench-testing)";

CommandExtensions testing_extensions() {
  CommandExtensions extensions;
  extensions.compile = [](CLI::App& app) -> std::function<void(CompileOptions&)> {
    auto disable_static_checks = std::make_shared<bool>(false);
    app.add_flag("--test-disable-static-checks", *disable_static_checks,
                 "Record forbidden headers/symbols, build anyway (integrity suite)")
        ->group(kGroup);
    return [disable_static_checks](CompileOptions& options) {
      if (*disable_static_checks) options.enforce_forbidden = false;
    };
  };
  extensions.eval = [](CLI::App& app) -> std::function<void(EvalOptions&)> {
    auto disable_static_checks = std::make_shared<bool>(false);
    auto reference_as_candidate = std::make_shared<bool>(false);
    app.add_flag("--test-disable-static-checks", *disable_static_checks,
                 "Record forbidden headers/symbols, run anyway (integrity suite)")
        ->group(kGroup);
    app.add_flag("--test-reference-as-candidate", *reference_as_candidate,
                 "Time the reference library in the candidate slot (A/A benchmark)")
        ->group(kGroup);
    return [disable_static_checks, reference_as_candidate](EvalOptions& options) {
      if (*disable_static_checks) options.disable_static_checks = true;
      if (*reference_as_candidate) options.reference_as_candidate = true;
    };
  };
  // run --test-fake-eval DIR: also passed on to the shard workers of `run --executor`, so a
  // Slurm array task or a local GPU worker judges with the same fake.
  extensions.run = [](CLI::App& app) -> std::function<void(RunHooks&)> {
    auto log_dir = std::make_shared<std::string>();
    app.add_option("--test-fake-eval", *log_dir,
                   "Judge kernels with the fake evaluator (a `// ptxbench-fake-eval:` comment), "
                   "logging every evaluation into DIR/evals.log")
        ->group(kGroup);
    return [log_dir](RunHooks& hooks) {
      if (log_dir->empty()) return;
      hooks.make_evaluator = [log_dir](const std::string&) -> std::unique_ptr<TurnEvaluator> {
        return std::make_unique<FakeTurnEvaluator>(*log_dir);
      };
      hooks.worker_args.insert(hooks.worker_args.end(), {"--test-fake-eval", *log_dir});
    };
  };
  // serve --test-fake-workers DIR: its workers are `ptxbench-testing serve-worker
  // --test-fake-eval DIR`, the fake GPU worker of the service's end-to-end tests.
  extensions.serve = [](CLI::App& app) -> std::function<void(ServeWorkerCommand&)> {
    auto log_dir = std::make_shared<std::string>();
    app.add_option("--test-fake-workers", *log_dir,
                   "Workers judge kernels with the fake evaluator, logging into DIR/evals.log")
        ->group(kGroup);
    return [log_dir](ServeWorkerCommand& command) {
      if (log_dir->empty()) return;
      command.argv.insert(command.argv.end(), {"--test-fake-eval", *log_dir});
    };
  };
  extensions.serve_worker = [](CLI::App& app) -> std::function<void(EvaluatorFactory&)> {
    auto log_dir = std::make_shared<std::string>();
    app.add_option("--test-fake-eval", *log_dir, "Judge kernels with the fake evaluator")
        ->group(kGroup);
    return [log_dir](EvaluatorFactory& make_evaluator) {
      if (log_dir->empty()) return;
      make_evaluator = [log_dir](const std::string&) -> std::unique_ptr<TurnEvaluator> {
        return std::make_unique<FakeTurnEvaluator>(*log_dir);
      };
    };
  };
  // fixit repair --test-fake-eval DIR: repairs and their verification judged by the fake.
  extensions.fixit = extensions.serve_worker;
  return extensions;
}

}  // namespace
}  // namespace ptxb::cli

int main(int argc, char** argv) {
  return ptxb::cli::run_cli(argc, argv, ptxb::cli::testing_extensions());
}
