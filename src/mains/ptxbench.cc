// `ptxbench`: the command-line front end (src/cli), as shipped: no extension installed, so no
// test-only option and no test double (tests/arch/shipped_cli_test.sh checks both).
#include "cli/run_cli.h"

int main(int argc, char** argv) {
  return ptxb::cli::run_cli(argc, argv);
}
