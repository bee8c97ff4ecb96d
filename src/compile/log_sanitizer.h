// The compile log as a model may see it (docs/integrity.md "Compile stage").
//
// A compile log is written by tools that read files: an error located in a file the candidate
// pulled in (`#include "/etc/passwd"`, an assembler `.include`) quotes that file's lines, and
// every command line and diagnostic names host paths (the toolkit's install folder, the cache's
// staging folder, the repository). The compile sandbox keeps the harness's files out of the
// tools' reach; this is the second layer, for whatever a tool prints:
//   - a diagnostic located in a file that is neither the candidate's (relative names: the
//     staging dir), nor a toolkit, knowledge-pack or system header, is withheld with the source
//     lines echoed after it;
//   - host paths become placeholders: the staging dir -> relative names, the toolkit ->
//     <cuda>, pack include dirs -> <pack>, other harness dirs (home, repository, cache) -> <host>;
//   - mangled C++ names are shown demangled.
// One module so that every path that shows a log to a model uses the same rules.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ptxb {

struct LogSanitizerContext {
  std::string staging_dir;                // the compile's working dir: its paths become relative
  std::vector<std::string> toolkit_dirs;  // -> <cuda> (both a symlink and its target may appear)
  std::vector<std::string> pack_dirs;     // -> <pack>
  std::vector<std::string> host_dirs;     // -> <host>
};

// $HOME, the repository (PTXB_SOURCE_DIR) and the current directory, as found here.
std::vector<std::string> default_host_dirs();

// True if a diagnostic located in `file` may be shown: relative names (the staging dir), and
// absolute paths under the staging dir, the toolkit, a pack dir, /usr/include, /usr/lib/gcc or
// the compile view's private /tmp (nvcc's tmpxft files).
bool log_file_shown(std::string_view file, const LogSanitizerContext& context);

std::string sanitize_compile_log(std::string_view log, const LogSanitizerContext& context);

}  // namespace ptxb
