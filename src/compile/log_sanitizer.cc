#include "compile/log_sanitizer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <regex>

#include "compile/forbidden.h"
#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

bool path_within(std::string_view path, const std::string& dir) {
  if (dir.empty() || dir == "/") return false;
  return path == dir || (starts_with(path, dir) && path.size() > dir.size() &&
                         (path[dir.size()] == '/' || dir.back() == '/'));
}

// The file a diagnostic line is located in, or "" if the line is not a located diagnostic.
// Formats: EDG (cudafe++/cicc) "FILE(12): error: ...", GCC/GAS "FILE:12:5: error: ..." and
// "FILE:12: Error: ...", GCC's "In file included from FILE:12" chain.
std::string diagnostic_file(const std::string& line) {
  static const std::regex kEdg(R"(^([^\s()]+)\(\d+\): )");
  static const std::regex kGcc(
      R"(^(?:In file included from|\s+from)?\s*([^\s:]+):\d+(?::\d+)?[:,])");
  std::smatch match;
  if (std::regex_search(line, match, kEdg)) return match[1];
  if (std::regex_search(line, match, kGcc)) return match[1];
  return "";
}

std::string replace_prefixes(std::string line, const LogSanitizerContext& context) {
  std::vector<std::pair<std::string, std::string>> rules;
  if (!context.staging_dir.empty()) {
    rules.emplace_back(context.staging_dir + "/", "");
    rules.emplace_back(context.staging_dir, ".");
  }
  for (const auto& dir : context.toolkit_dirs) rules.emplace_back(dir, "<cuda>");
  for (const auto& dir : context.pack_dirs) rules.emplace_back(dir, "<pack>");
  for (const auto& dir : context.host_dirs) rules.emplace_back(dir, "<host>");
  // Longest first: the staging dir lies in the cache, which may lie in the home directory.
  std::stable_sort(rules.begin(), rules.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [from, to] : rules) {
    if (from.empty() || from == "/" || from == "/usr" || from == "/tmp") continue;
    line = replace_all(line, from, to);
  }
  return line;
}

std::string demangle_names(const std::string& line) {
  static const std::regex kMangled(R"(_Z[A-Za-z0-9_]+)");
  if (line.find("_Z") == std::string::npos) return line;
  std::string out;
  std::size_t last = 0;
  for (auto it = std::sregex_iterator(line.begin(), line.end(), kMangled);
       it != std::sregex_iterator(); ++it) {
    const auto& match = *it;
    const auto position = static_cast<std::size_t>(match.position(0));
    // Only a whole token: "foo_Z3" is not a mangled name.
    if (position > 0 &&
        (std::isalnum(static_cast<unsigned char>(line[position - 1])) || line[position - 1] == '_'))
      continue;
    out.append(line, last, position - last);
    out += demangle_symbol(match.str(0));
    last = position + static_cast<std::size_t>(match.length(0));
  }
  out.append(line, last, std::string::npos);
  return out;
}

}  // namespace

std::vector<std::string> default_host_dirs() {
  std::vector<std::string> dirs;
  if (const char* home = std::getenv("HOME"); home && *home && std::string(home) != "/")
    dirs.push_back(home);
#ifdef PTXB_SOURCE_DIR
  dirs.push_back(PTXB_SOURCE_DIR);
#endif
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) != nullptr && std::string(cwd) != "/") dirs.push_back(cwd);
  std::vector<std::string> out;
  for (const auto& dir : dirs) {
    out.push_back(dir);
    const std::string real = canonical_path(dir);
    if (!real.empty() && real != dir) out.push_back(real);
  }
  return out;
}

bool log_file_shown(std::string_view file, const LogSanitizerContext& context) {
  if (file.empty()) return true;
  if (file.front() != '/') return file.find("..") == std::string_view::npos;
  if (path_within(file, context.staging_dir)) return file.find("/../") == std::string_view::npos;
  for (const auto& dir : context.toolkit_dirs)
    if (path_within(file, dir)) return true;
  for (const auto& dir : context.pack_dirs)
    if (path_within(file, dir)) return true;
  for (const char* dir : {"/usr/include", "/usr/lib/gcc", "/tmp"})
    if (path_within(file, dir)) return true;
  return false;
}

std::string sanitize_compile_log(std::string_view log, const LogSanitizerContext& context) {
  std::string out;
  out.reserve(log.size());
  bool withholding = false;
  std::size_t withheld = 0;
  auto flush_withheld = [&] {
    if (withheld > 0)
      out += fmt::format("[{} line(s) withheld: they quote a file outside the compile view]\n",
                         withheld);
    withheld = 0;
  };
  for (const auto& line : split_lines(log)) {
    const std::string file = diagnostic_file(line);
    if (!file.empty()) {
      if (!log_file_shown(file, context)) {
        // The message itself may quote the file ("identifier "root" is undefined"): the whole
        // diagnostic goes, with the source lines echoed under it.
        withholding = true;
        ++withheld;
        continue;
      }
      withholding = false;
    } else if (withholding) {
      // Echoed source lines and carets are indented (EDG) or start with " N |" (GCC).
      if (line.empty() || std::isspace(static_cast<unsigned char>(line[0])) || line[0] == '|' ||
          line[0] == '^') {
        ++withheld;
        continue;
      }
      withholding = false;
    }
    flush_withheld();
    out += demangle_names(replace_prefixes(line, context));
    out += '\n';
  }
  flush_withheld();
  return out;
}

}  // namespace ptxb
