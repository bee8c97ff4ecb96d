// The entry point of the shipped front end without the command table's headers (CLI11 is costly
// to parse): all that `ptxbench`'s main() (src/mains/ptxbench.cc) needs.
#pragma once

namespace ptxb::cli {

// run_cli (cli/command.h) with no extensions: the shipped `ptxbench`.
int run_cli(int argc, char** argv);

}  // namespace ptxb::cli
