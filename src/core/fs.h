// Filesystem helpers with the error model of the core library.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/result.h"

namespace ptxb {

// Reads a whole file; fails with a clear message if it is missing, not a regular file (a
// directory, FIFO, device or socket: a FIFO would block forever), or larger than
// `max_bytes` (the size is checked before reading, so a huge file is never loaded).
Result<std::string> read_file(const std::string& path, std::size_t max_bytes);

// Reads a file whose size stat(2) does not know (/proc, /sys) until EOF, at most `max_bytes`.
Result<std::string> read_proc_file(const std::string& path, std::size_t max_bytes = 1u << 16);

// Writes `text` to a kernel file (/proc, cgroupfs) in one write(2): such files take one value per
// write and report a refusal there. Errors carry `code` and the errno text.
Status write_kernel_file(const std::string& path, const std::string& text,
                         const std::string& code = "io");

// Writes `contents` to `path` atomically: a temporary file in the same directory, fsync'd, then
// rename(2). Readers never see a half-written file, and concurrent writers of identical content
// are safe.
Status write_file_atomic(const std::string& path, const std::string& contents);

// Creates `path` and its parents (like mkdir -p).
Status make_directories(const std::string& path);

// Creates a fresh private directory under `parent` (or $TMPDIR / /tmp) named prefix-XXXXXX.
Result<std::string> make_temp_directory(const std::string& prefix, const std::string& parent = "");

// Removes a directory tree; errors are ignored (best-effort cleanup of our own temp dirs).
void remove_tree(const std::string& path);

bool path_exists(const std::string& path);
bool is_directory(const std::string& path);

// Regular files directly inside `dir` (not recursive), sorted by name.
Result<std::vector<std::string>> list_files(const std::string& dir);

// Regular files under `dir`, recursively, sorted by path.
Result<std::vector<std::string>> list_files_recursive(const std::string& dir);

// Resolves symlinks and `..` (realpath(3)); returns the input unchanged if it does not exist.
std::string canonical_path(const std::string& path);

}  // namespace ptxb
