// Content-addressed store of compile artifacts.
//
// Key = SHA-256 over everything that can change the produced binary or its analysis: the source
// and its name, the `run` signature (it shapes the trampoline), the architecture, the exact nvcc
// command lines, the toolchain versions and the contents of every knowledge-pack wrapper header.
// Layout: <root>/<key[0..2]>/<key>/{result.json, kernel.so, ...}. Entries are built in
// <root>/staging/<random> and moved into place with rename(2), so a reader never sees a partial
// entry and concurrent processes compiling the same key are safe (the first rename wins, the
// loser discards its copy and uses the winner's).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compile/compile_types.h"
#include "core/result.h"

namespace ptxb {

// Bumped whenever the pipeline's output for the same inputs changes (new analysis fields...).
// v2: the symbol allow-list grew (nanosleep, sched_yield, __libc_single_threaded).
// v3: __isoc23_strto* (glibc >= 2.38 headers, as on the H200 machine).
// v4: sanitized logs (compile/log_sanitizer.h) and the file-directive scan; a v3 entry may hold
//     a log that quotes a file outside the compile view.
inline constexpr const char* kCompileCacheFormat = "ptxbench-compile-v4";

std::string compile_cache_key(const CompileRequest& request, const ToolchainInfo& toolchain,
                              const std::vector<std::string>& compile_command,
                              const std::vector<std::string>& link_command);

class CompileCache {
 public:
  explicit CompileCache(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }
  std::string entry_dir(const std::string& key) const;

  // The stored result for `key`, with artifact.directory set to where it lies and from_cache
  // set; nullopt if absent, unreadable, or if the shared object no longer matches its hash.
  std::optional<CompileResult> lookup(const std::string& key) const;

  // A fresh directory on the cache's filesystem to build an entry in.
  Result<std::string> make_staging_dir() const;

  // Moves `staging_dir` into place as the entry for `key`. With `replace`, an existing entry is
  // swapped out (--no-cache refresh); without it, an existing entry wins and staging is
  // discarded. Returns true if our staging dir became the entry.
  Result<bool> publish(const std::string& staging_dir, const std::string& key, bool replace) const;

 private:
  std::string root_;
};

}  // namespace ptxb
