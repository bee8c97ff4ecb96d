// An exclusive lock that is a file, held for the lifetime of the object, so that two processes
// cannot work in one place at once (two `ptxbench run`s in one run directory would both append
// every turn and pay a model twice; two array tasks of one shard would evaluate its turns
// twice). Run directories of a cluster study sit on NFS, where flock(2) is emulated or absent,
// so the lock is the file's existence:
//   - taken with open(O_CREAT | O_EXCL), atomic on local file systems and on NFSv3+;
//   - the file holds "host:pid", so a refusal names the holder ("already running (pid N on
//     host H)");
//   - a holder that died leaves its file behind, so a lock can be stale. On the holder's own
//     host that is decided exactly (the pid no longer exists). From another host it cannot be:
//     the holder refreshes the file's mtime every kHeartbeat, and a lock whose mtime is older
//     than kStaleAfter, measured against the file server's own clock (a probe file's mtime, so
//     clocks of different nodes never enter), is stale;
//   - a stale lock is broken by renaming it aside (atomic) and checking that the renamed file
//     is the one judged stale, so two breakers never both win.
// Release removes the file only while it still names this holder.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "core/result.h"

namespace ptxb {

// Why these: a heartbeat every 15 s costs nothing; 90 s (six missed beats) rides out an NFS
// server's slow moment and a stalled node, yet a resubmitted array task that finds the lock of
// a task killed by `scancel -s KILL` on another node waits at most that long.
inline constexpr std::chrono::seconds kLockHeartbeat{15};
inline constexpr std::chrono::seconds kLockStaleAfter{90};

struct FileLockOptions {
  // How long to keep trying while another live process holds the lock (0: fail at once).
  std::chrono::milliseconds wait{0};
  std::chrono::milliseconds heartbeat = kLockHeartbeat;
  std::chrono::milliseconds stale_after = kLockStaleAfter;
};

// A lock holder as written in the file: "host:pid".
struct LockHolder {
  std::string host;
  long pid = 0;
  std::string describe() const;  // "pid 123 on host n1"
};

// This machine's host name, as lock files record it.
std::string lock_host_name();

class FileLock {
 public:
  // Takes the lock at `path` (its folder must exist). Fails with code "locked" and a message
  // "`what`: already running (pid N on host H); ..." when a live process holds it after
  // `options.wait`.
  static Result<FileLock> acquire(const std::string& path, const std::string& what,
                                  const FileLockOptions& options = {});

  // Whether `path` is held by a live holder right now (a missing or stale file: false), and by
  // whom. For `ptxbench status`: it never breaks a lock.
  static Result<std::optional<LockHolder>> live_holder(const std::string& path,
                                                       const FileLockOptions& options = {});

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  const std::string& path() const;
  // Removes the lock file now (the destructor does the same).
  void release();

 private:
  struct Held;
  explicit FileLock(std::unique_ptr<Held> held);
  std::unique_ptr<Held> held_;
};

}  // namespace ptxb
