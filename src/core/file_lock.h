// An exclusive advisory lock on a file (flock(2)), held for the lifetime of the object, so that
// two processes cannot work in one place at once (two `ptxbench run`s in one run directory
// would both append every turn, and pay a model twice). The holder's pid is written into the
// file, so the refusal names the process that holds it. The kernel drops the lock when the
// holder exits in any way (kill -9 included): a stale file never blocks anyone.
#pragma once

#include <string>

#include "core/result.h"

namespace ptxb {

class FileLock {
 public:
  // Locks `path` (created if missing) without waiting. Fails with code "locked" and a message
  // "`what`: already running (pid N); ..." when another process holds it.
  static Result<FileLock> acquire(const std::string& path, const std::string& what);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  const std::string& path() const { return path_; }

 private:
  FileLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace ptxb
