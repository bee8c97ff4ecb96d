#include "compile/compile_cache.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/fs.h"
#include "core/sha256.h"

namespace ptxb {
namespace {

constexpr const char* kResultFile = "result.json";
// A stored result or shared object larger than this is corrupt, not an artifact.
constexpr std::size_t kMaxArtifactBytes = std::size_t{256} << 20;

void hash_field(Sha256& hash, const std::string& label, const std::string& value) {
  // Length-prefixed fields: no two different field lists hash the same byte stream.
  hash.update(label)
      .update(":")
      .update(std::to_string(value.size()))
      .update(":")
      .update(value)
      .update("\n");
}

}  // namespace

std::string compile_cache_key(const CompileRequest& request, const ToolchainInfo& toolchain,
                              const std::vector<std::string>& compile_command,
                              const std::vector<std::string>& link_command) {
  Sha256 hash;
  hash_field(hash, "format", kCompileCacheFormat);
  hash_field(hash, "source_name", request.source_name);
  hash_field(hash, "source", request.source);
  hash_field(hash, "signature", request.signature.declaration());
  hash_field(hash, "arch", request.options.arch);
  // Only when off, so the keys of every normal compile stay what they were.
  if (!request.options.enforce_forbidden) hash_field(hash, "enforce_forbidden", "off");
  for (const auto& arg : compile_command) hash_field(hash, "compile_arg", arg);
  for (const auto& arg : link_command) hash_field(hash, "link_arg", arg);
  hash_field(hash, "toolchain", toolchain.fingerprint());
  hash_field(hash, "cuda_include_dir", toolchain.cuda_include_dir);
  for (const auto& dir : request.options.include_dirs) {
    hash_field(hash, "include_dir", dir);
    auto files = list_files_recursive(dir);
    if (!files.ok()) {
      hash_field(hash, "include_dir_error", files.error().message);
      continue;
    }
    for (const auto& file : *files) {
      auto contents = read_file(file, kMaxArtifactBytes);
      hash_field(hash, "header", file);
      hash_field(hash, "header_sha256", contents.ok() ? sha256_hex(*contents) : "unreadable");
    }
  }
  return hash.hex_digest();
}

std::string CompileCache::entry_dir(const std::string& key) const {
  return root_ + "/" + key.substr(0, 2) + "/" + key;
}

std::optional<CompileResult> CompileCache::lookup(const std::string& key) const {
  const std::string dir = entry_dir(key);
  auto json = read_json_file(dir + "/" + kResultFile);
  if (!json.ok()) return std::nullopt;
  auto result = compile_result_from_json(*json, dir + "/" + kResultFile);
  if (!result.ok() || result->artifact.cache_key != key) return std::nullopt;
  result->artifact.directory = dir;
  result->from_cache = true;
  // The timed binary must be exactly the analysed one: re-hash the shared object.
  if (result->ok()) {
    const CompileArtifact& artifact = result->artifact;
    auto expected = artifact.sha256.find(artifact.shared_object);
    if (expected == artifact.sha256.end()) return std::nullopt;
    auto bytes = read_file(artifact.path_of(artifact.shared_object), kMaxArtifactBytes);
    if (!bytes.ok() || sha256_hex(*bytes) != expected->second) return std::nullopt;
  }
  return std::move(result).value();
}

Result<std::string> CompileCache::make_staging_dir() const {
  const std::string staging_root = root_ + "/staging";
  PTXB_RETURN_IF_ERROR(make_directories(staging_root));
  return make_temp_directory("build", staging_root);
}

Result<bool> CompileCache::publish(const std::string& staging_dir, const std::string& key,
                                   bool replace) const {
  const std::string final_dir = entry_dir(key);
  PTXB_RETURN_IF_ERROR(make_directories(root_ + "/" + key.substr(0, 2)));
  if (replace && path_exists(final_dir)) {
    // Swap the old entry out of the way first; rename(2) cannot replace a non-empty directory.
    PTXB_ASSIGN_OR_RETURN(std::string graveyard, make_temp_directory("old", root_ + "/staging"));
    const std::string old_entry = graveyard + "/entry";
    if (std::rename(final_dir.c_str(), old_entry.c_str()) != 0 && errno != ENOENT)
      return make_error("io", "{}: cannot replace cache entry: {}", final_dir,
                        std::strerror(errno));
    remove_tree(graveyard);
  }
  if (std::rename(staging_dir.c_str(), final_dir.c_str()) == 0) return true;
  if (errno == ENOTEMPTY || errno == EEXIST) {
    remove_tree(staging_dir);  // a concurrent process published the same key first
    return false;
  }
  return make_error("io", "{}: cannot publish cache entry: {}", final_dir, std::strerror(errno));
}

}  // namespace ptxb
