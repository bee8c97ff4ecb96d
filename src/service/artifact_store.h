// Content-addressed artifacts of the service: a client names what it wants evaluated by the
// SHA-256 of its bytes and uploads them only when the service lacks them
// (PUT /v1/artifacts/SHA256). Stored as DIR/ab/abcdef... (the first two hex digits fan out the
// directory); a write goes to a temporary file and is renamed into place, so a reader never
// sees half an artifact, and the bytes are checked against their name before they are kept.
#pragma once

#include <cstddef>
#include <set>
#include <string>

#include "core/result.h"

namespace ptxb::service {

// True for 64 lower-case hex digits.
bool is_sha256_hex(const std::string& text);

class ArtifactStore {
 public:
  ArtifactStore(std::string directory, std::size_t max_bytes)
      : directory_(std::move(directory)), max_bytes_(max_bytes) {}
  Status init();  // creates the directory

  bool has(const std::string& sha256) const;
  // Stores `bytes` under `sha256`. Errors: code "invalid" (not a SHA-256, bytes hash to
  // something else), "too_large", "io".
  Status put(const std::string& sha256, const std::string& bytes);
  Result<std::string> get(const std::string& sha256) const;
  // Removes every artifact not in `keep` whose file is older than `older_than_seconds`;
  // returns how many.
  int remove_unreferenced(const std::set<std::string>& keep, double older_than_seconds);

  std::size_t max_bytes() const { return max_bytes_; }
  // Where the artifact lies (a worker on this host reads a prebuilt binary from there).
  std::string path_of(const std::string& sha256) const;

 private:
  std::string directory_;
  std::size_t max_bytes_;
};

}  // namespace ptxb::service
