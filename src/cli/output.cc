#include <iostream>

#include "cli/command.h"

namespace ptxb::cli {

void print_json(const Json& value) {
  std::cout << dump_pretty(value) << std::flush;
}

std::string one_line(const std::string& message) {
  // A message may hold newlines (a captured log, a server's body): they become "; " so that
  // every error is exactly one line that scripts can grep for.
  std::string line;
  line.reserve(message.size());
  bool pending_break = false;
  for (char c : message) {
    if (c == '\n' || c == '\r') {
      pending_break = !line.empty();
      continue;
    }
    if (pending_break) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      if (!line.empty() && line.back() != ';' && line.back() != ':') line += ';';
      line += ' ';
      pending_break = false;
    }
    line += c;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

int report_error(const Error& error) {
  std::cerr << "ptxbench: error: " << one_line(error.message) << std::endl;
  return error.code == "usage" ? kUsageExit : 1;
}

}  // namespace ptxb::cli
