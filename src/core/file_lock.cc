#include "core/file_lock.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

using Clock = std::chrono::steady_clock;

// Long enough for a few lines of text; a lock file never holds more.
constexpr std::size_t kMaxLockFileBytes = 4096;
// Between attempts while waiting for a live holder.
constexpr std::chrono::milliseconds kRetryInterval{200};

std::string own_content() {
  return fmt::format("{}:{}\n", lock_host_name(), static_cast<long>(::getpid()));
}

// "host:pid"; a bare "pid" is a lock file of an older ptxbench (flock, same host only).
std::optional<LockHolder> parse_holder(const std::string& text) {
  const std::string line = trim(text);
  const std::size_t colon = line.rfind(':');
  LockHolder holder;
  holder.host = colon == std::string::npos ? lock_host_name() : line.substr(0, colon);
  const std::string pid = colon == std::string::npos ? line : line.substr(colon + 1);
  try {
    std::size_t used = 0;
    holder.pid = std::stol(pid, &used);
    if (used != pid.size() || holder.pid <= 0) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return holder;
}

// The file server's idea of "now": the mtime of a file we just created next to the lock. On
// NFS both times come from the server, so the age below never mixes two machines' clocks.
Result<struct timespec> file_system_now(const std::string& near_path) {
  const std::string probe = fmt::format("{}.probe.{}.{}", near_path, lock_host_name(), ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error("io", "{}: cannot create: {}", probe, std::strerror(errno));
  struct stat st {};
  const int rc = ::fstat(fd, &st);
  ::close(fd);
  ::unlink(probe.c_str());
  if (rc != 0) return make_error("io", "{}: cannot stat: {}", probe, std::strerror(errno));
  return st.st_mtim;
}

double seconds_between(const struct timespec& earlier, const struct timespec& later) {
  return static_cast<double>(later.tv_sec - earlier.tv_sec) +
         static_cast<double>(later.tv_nsec - earlier.tv_nsec) * 1e-9;
}

// Whether the lock file at `path` (content `text`) belongs to nobody any more.
Result<bool> is_stale(const std::string& path, const std::string& text,
                      const FileLockOptions& options) {
  const std::optional<LockHolder> holder = parse_holder(text);
  if (holder && holder->host == lock_host_name()) {
    // Exact on the holder's own host: kill(pid, 0) fails with ESRCH only for no such process
    // (EPERM means it exists under another user).
    return ::kill(static_cast<pid_t>(holder->pid), 0) != 0 && errno == ESRCH;
  }
  // Another host's holder (or a file still being written): judged by its heartbeat.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOENT;
  PTXB_ASSIGN_OR_RETURN(const struct timespec now, file_system_now(path));
  const double age_s = seconds_between(st.st_mtim, now);
  return age_s > std::chrono::duration<double>(options.stale_after).count();
}

// Moves a stale lock aside and deletes it, unless the file moved is not the one judged stale
// (another process broke it and took the lock in between): that one is put back.
void break_stale(const std::string& path, const std::string& judged_text) {
  const std::string aside = fmt::format("{}.stale.{}.{}", path, lock_host_name(), ::getpid());
  if (::rename(path.c_str(), aside.c_str()) != 0) return;  // gone already: just retry
  auto moved = read_file(aside, kMaxLockFileBytes);
  if (moved.ok() && moved.value() != judged_text) (void)::link(aside.c_str(), path.c_str());
  ::unlink(aside.c_str());
}

Result<std::string> read_lock_text(const std::string& path) {
  auto text = read_file(path, kMaxLockFileBytes);
  if (!text.ok() && !path_exists(path)) return std::string();  // released meanwhile
  return text;
}

}  // namespace

std::string LockHolder::describe() const {
  return fmt::format("pid {} on host {}", pid, host);
}

std::string lock_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

// The held state lives on the heap so that the heartbeat thread keeps a stable address when
// the FileLock object moves.
struct FileLock::Held {
  std::string path;
  std::string content;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::thread heartbeat;

  void beat(std::chrono::milliseconds interval) {
    std::unique_lock<std::mutex> lock(mutex);
    while (!wake.wait_for(lock, interval, [&] { return stopping; })) {
      // times == nullptr: "now" by the file server's clock (NFS SET_TO_SERVER_TIME).
      ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
    }
  }

  void release() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stopping) return;
      stopping = true;
    }
    wake.notify_all();
    if (heartbeat.joinable()) heartbeat.join();
    // Only our own file: after a (wrong) stale judgement someone else may hold it now.
    auto text = read_file(path, kMaxLockFileBytes);
    if (text.ok() && text.value() == content) ::unlink(path.c_str());
  }

  ~Held() { release(); }
};

Result<FileLock> FileLock::acquire(const std::string& path, const std::string& what,
                                   const FileLockOptions& options) {
  const std::string content = own_content();
  const auto deadline = Clock::now() + options.wait;
  while (true) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      const bool written =
          ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) &&
          ::fsync(fd) == 0;
      const int saved = errno;
      ::close(fd);
      if (!written) {
        ::unlink(path.c_str());
        return make_error("io", "{}: cannot write the lock file: {}", path, std::strerror(saved));
      }
      auto held = std::make_unique<Held>();
      held->path = path;
      held->content = content;
      Held* raw = held.get();
      held->heartbeat = std::thread([raw, interval = options.heartbeat] { raw->beat(interval); });
      return FileLock(std::move(held));
    }
    if (errno != EEXIST)
      return make_error("io", "{}: cannot create the lock file: {}", path, std::strerror(errno));
    PTXB_ASSIGN_OR_RETURN(const std::string text, read_lock_text(path));
    PTXB_ASSIGN_OR_RETURN(const bool stale, is_stale(path, text, options));
    if (stale) {
      break_stale(path, text);
      continue;
    }
    if (Clock::now() >= deadline) {
      const std::optional<LockHolder> holder = parse_holder(text);
      return make_error("locked", "{}: already running ({}); wait for it to finish or stop it",
                        what, holder ? holder->describe() : "holder unknown");
    }
    std::this_thread::sleep_for(kRetryInterval);
  }
}

Result<std::optional<LockHolder>> FileLock::live_holder(const std::string& path,
                                                        const FileLockOptions& options) {
  if (!path_exists(path)) return std::optional<LockHolder>{};
  PTXB_ASSIGN_OR_RETURN(const std::string text, read_lock_text(path));
  if (text.empty() && !path_exists(path)) return std::optional<LockHolder>{};
  PTXB_ASSIGN_OR_RETURN(const bool stale, is_stale(path, text, options));
  if (stale) return std::optional<LockHolder>{};
  std::optional<LockHolder> holder = parse_holder(text);
  return holder ? holder : std::optional<LockHolder>(LockHolder{"unknown", 0});
}

FileLock::FileLock(std::unique_ptr<Held> held) : held_(std::move(held)) {}
FileLock::FileLock(FileLock&& other) noexcept = default;
FileLock& FileLock::operator=(FileLock&& other) noexcept = default;
FileLock::~FileLock() = default;

const std::string& FileLock::path() const {
  return held_->path;
}

void FileLock::release() {
  if (held_) held_->release();
}

}  // namespace ptxb
