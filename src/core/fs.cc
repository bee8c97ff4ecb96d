#include "core/fs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace ptxb {
namespace stdfs = std::filesystem;

namespace {

// What a non-regular file is, for the error message.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

Result<std::string> read_file(const std::string& path, std::size_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the type is then checked on the open
  // descriptor itself (fstat), so the path cannot be swapped between the check and the read.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return make_error("io", "{}: cannot open: {}", path, std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    const int saved = errno;
    ::close(fd);
    return make_error("io", "{}: cannot stat: {}", path, std::strerror(saved));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd);
    return make_error("io", "{}: is {}, expected a regular file", path, file_kind(info.st_mode));
  }
  if (static_cast<std::size_t>(info.st_size) > max_bytes) {
    ::close(fd);
    return make_error("io", "{}: file is {} bytes, larger than the limit of {} bytes", path,
                      static_cast<long long>(info.st_size), max_bytes);
  }
  std::string contents;
  char buffer[1 << 16];
  // Reads to EOF, one byte past the cap at most: a file that grew since fstat is still refused.
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return make_error("io", "{}: cannot read: {}", path, std::strerror(saved));
    }
    if (n == 0) break;
    if (contents.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      return make_error("io", "{}: file grew while reading, larger than the limit of {} bytes",
                        path, max_bytes);
    }
    contents.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return contents;
}

Result<std::string> read_proc_file(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("io", "{}: cannot open: {}", path, std::strerror(errno));
  std::string contents;
  char buffer[4096];
  while (contents.size() < max_bytes) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const std::size_t room = max_bytes - contents.size();
    contents.append(buffer, std::min<std::size_t>(static_cast<std::size_t>(n), room));
  }
  ::close(fd);
  return contents;
}

Status write_kernel_file(const std::string& path, const std::string& text,
                         const std::string& code) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return make_error(code, "open {}: {}", path, std::strerror(errno));
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int saved = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return make_error(code, "write {}: {}", path, std::strerror(saved));
  return ok_status();
}

Status write_file_atomic(const std::string& path, const std::string& contents) {
  const stdfs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) stdfs::create_directories(target.parent_path(), ec);
  std::string temp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0)
    return make_error("io", "{}: cannot create temporary file: {}", path, std::strerror(errno));
  std::size_t written = 0;
  while (written < contents.size()) {
    ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      int saved = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      return make_error("io", "{}: write failed: {}", path, std::strerror(saved));
    }
    written += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  ::fsync(fd);
  ::close(fd);
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    int saved = errno;
    ::unlink(temp.c_str());
    return make_error("io", "{}: rename failed: {}", path, std::strerror(saved));
  }
  return ok_status();
}

Status make_directories(const std::string& path) {
  std::error_code ec;
  stdfs::create_directories(path, ec);
  if (ec) return make_error("io", "{}: cannot create directory: {}", path, ec.message());
  return ok_status();
}

Result<std::string> make_temp_directory(const std::string& prefix, const std::string& parent) {
  std::string base = parent;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = (tmp && *tmp) ? tmp : "/tmp";
  }
  PTXB_RETURN_IF_ERROR(make_directories(base));
  std::string templ = base + "/" + prefix + "-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    return make_error("io", "{}: cannot create temporary directory: {}", templ,
                      std::strerror(errno));
  return templ;
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  stdfs::remove_all(path, ec);
}

bool path_exists(const std::string& path) {
  std::error_code ec;
  return stdfs::exists(path, ec);
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return stdfs::is_directory(path, ec);
}

Result<std::vector<std::string>> list_files(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> files;
  for (auto it = stdfs::directory_iterator(dir, ec); !ec && it != stdfs::directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path().string());
  }
  if (ec) return make_error("io", "{}: cannot list directory: {}", dir, ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

Result<std::vector<std::string>> list_files_recursive(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> files;
  for (auto it = stdfs::recursive_directory_iterator(dir, ec);
       !ec && it != stdfs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file()) files.push_back(it->path().string());
  }
  if (ec) return make_error("io", "{}: cannot list directory: {}", dir, ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

std::string canonical_path(const std::string& path) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (!resolved) return path;
  std::string out(resolved);
  std::free(resolved);
  return out;
}

}  // namespace ptxb
