#include "service/artifact_store.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "core/fs.h"
#include "core/sha256.h"

namespace ptxb::service {

bool is_sha256_hex(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

Status ArtifactStore::init() {
  return make_directories(directory_);
}

std::string ArtifactStore::path_of(const std::string& sha256) const {
  return directory_ + "/" + sha256.substr(0, 2) + "/" + sha256;
}

bool ArtifactStore::has(const std::string& sha256) const {
  return is_sha256_hex(sha256) && path_exists(path_of(sha256));
}

Status ArtifactStore::put(const std::string& sha256, const std::string& bytes) {
  if (!is_sha256_hex(sha256))
    return make_error("invalid", "artifact name must be 64 lower-case hex digits (SHA-256)");
  if (bytes.size() > max_bytes_)
    return make_error("too_large", "artifact is {} bytes; the limit is {}", bytes.size(),
                      max_bytes_);
  const std::string actual = sha256_hex(bytes);
  if (actual != sha256)
    return make_error("invalid", "artifact bytes hash to {}, not to the name {}", actual, sha256);
  if (has(sha256)) return ok_status();
  PTXB_RETURN_IF_ERROR(make_directories(directory_ + "/" + sha256.substr(0, 2)));
  return write_file_atomic(path_of(sha256), bytes);
}

Result<std::string> ArtifactStore::get(const std::string& sha256) const {
  if (!is_sha256_hex(sha256)) return make_error("invalid", "not a SHA-256: {}", sha256);
  PTXB_ASSIGN_OR_RETURN(std::string bytes, read_file(path_of(sha256), max_bytes_));
  // The disk is trusted less than the name: a changed file is never evaluated under it.
  if (sha256_hex(bytes) != sha256)
    return make_error("io", "artifact {} changed on disk (hash mismatch)", sha256);
  return bytes;
}

int ArtifactStore::remove_unreferenced(const std::set<std::string>& keep,
                                       double older_than_seconds) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int removed = 0;
  const auto cutoff =
      fs::file_time_type::clock::now() - std::chrono::duration_cast<fs::file_time_type::duration>(
                                             std::chrono::duration<double>(older_than_seconds));
  for (auto it = fs::recursive_directory_iterator(directory_, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().filename().string();
    if (!is_sha256_hex(name) || keep.count(name)) continue;
    if (it->last_write_time(ec) > cutoff) continue;  // an upload its job has not named yet
    if (fs::remove(it->path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace ptxb::service
