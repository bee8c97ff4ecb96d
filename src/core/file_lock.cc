#include "core/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/strings.h"

namespace ptxb {

Result<FileLock> FileLock::acquire(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error("io", "{}: cannot open the lock file: {}", path, std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int saved = errno;
    // The holder wrote its pid after locking; a holder between its lock and that write reads
    // as "pid unknown", never as a wrong pid.
    char buffer[32] = {};
    const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
    ::close(fd);
    if (saved != EWOULDBLOCK)
      return make_error("io", "{}: cannot lock: {}", path, std::strerror(saved));
    const std::string pid = n > 0 ? trim(std::string(buffer, static_cast<std::size_t>(n))) : "";
    return make_error("locked", "{}: already running ({}); wait for it to finish or stop it", what,
                      pid.empty() ? "pid unknown" : "pid " + pid);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    const int saved = errno;
    ::close(fd);
    return make_error("io", "{}: cannot write the lock file: {}", path, std::strerror(saved));
  }
  return FileLock(path, fd);
}

FileLock::FileLock(FileLock&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  // Closing the descriptor releases the lock; the file stays (its pid is stale but harmless).
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace ptxb
