#include <iostream>

#include "cli/command.h"

namespace ptxb::cli {

void print_json(const Json& value) {
  std::cout << dump_pretty(value) << std::flush;
}

int report_error(const Error& error) {
  // One line: the message may hold newlines (e.g. a captured log); those go on following lines
  // indented, so the first line alone says what failed.
  std::string message = error.message;
  std::cerr << "ptxbench: error: " << message << std::endl;
  return 1;
}

}  // namespace ptxb::cli
