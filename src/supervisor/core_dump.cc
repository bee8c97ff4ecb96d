#include "supervisor/core_dump.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {

using std::chrono::milliseconds;

std::string core_dump_pipe_path(const std::string& scratch_dir) {
  return scratch_dir + "/corepipe";
}

std::vector<std::string> core_dump_environment(const std::string& scratch_dir, bool hang_trigger) {
  std::vector<std::string> env = {
      "CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1",
      "CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION=0",
      "CUDA_COREDUMP_FILE=" + scratch_dir + "/core_%p.nvcudmp",
      "CUDA_COREDUMP_GENERATION_FLAGS=skip_global_memory,skip_shared_memory,skip_local_memory,"
      "skip_abort",
  };
  if (hang_trigger) {
    env.push_back("CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1");
    env.push_back("CUDA_COREDUMP_PIPE=" + core_dump_pipe_path(scratch_dir));
  }
  return env;
}

std::optional<CoreDumpFile> find_core_dump(const std::string& scratch_dir) {
  std::optional<CoreDumpFile> best;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(scratch_dir, ec)) {
    if (!entry.is_regular_file(ec) || !ends_with(entry.path().string(), ".nvcudmp")) continue;
    const auto bytes = static_cast<std::int64_t>(entry.file_size(ec));
    if (ec) continue;
    if (!best || bytes > best->bytes) best = CoreDumpFile{entry.path().string(), bytes};
  }
  return best;
}

HangTrigger::HangTrigger(std::string scratch_dir, milliseconds after, milliseconds dump_wait)
    : scratch_dir_(std::move(scratch_dir)),
      after_(after),
      dump_wait_(dump_wait),
      thread_([this] { run(); }) {}

HangTrigger::~HangTrigger() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void HangTrigger::started(pid_t group) {
  std::lock_guard lock(mutex_);
  group_ = group;
}

void HangTrigger::stop() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
  }
  stopped_cv_.notify_all();
}

bool HangTrigger::fired() {
  std::lock_guard lock(mutex_);
  return fired_;
}

std::string HangTrigger::failure() {
  std::lock_guard lock(mutex_);
  return failure_;
}

bool HangTrigger::wait_stopped(milliseconds limit) {
  std::unique_lock lock(mutex_);
  return stopped_cv_.wait_for(lock, limit, [this] { return stopped_; });
}

void HangTrigger::run() {
  if (wait_stopped(after_)) return;
  const std::string pipe = core_dump_pipe_path(scratch_dir_);
  // Non-blocking: with nobody reading (a driver that did not create the pipe, or a process
  // that already exited) open fails with ENXIO at once instead of hanging this thread.
  const int fd = ::open(pipe.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  bool written = false;
  std::string why;
  if (fd < 0) {
    why = fmt::format("the driver's core-dump pipe {} could not be opened: {}", pipe,
                      std::strerror(errno));
  } else {
    written = ::write(fd, "1", 1) == 1;
    if (!written) why = fmt::format("writing to {} failed: {}", pipe, std::strerror(errno));
    ::close(fd);
  }
  {
    std::lock_guard lock(mutex_);
    fired_ = written;
    failure_ = why;
  }
  if (written) wait_for_dump();
  // The process still hangs; the dump (or the failure) is all it has left to give.
  std::lock_guard lock(mutex_);
  if (!stopped_ && group_ > 0) ::kill(-group_, SIGKILL);
}

std::optional<bool> dump_open_in_group(pid_t group) {
  std::error_code ec;
  bool readable = false;
  for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = proc.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    // /proc/<pid>/stat: "pid (comm) state ppid pgrp ..."; comm may hold spaces, so fields are
    // counted after its closing parenthesis.
    auto stat = read_file(proc.path().string() + "/stat", 4096);
    if (!stat.ok()) continue;
    const std::size_t close = stat->rfind(')');
    if (close == std::string::npos) continue;
    const std::vector<std::string> fields = split(trim(stat->substr(close + 1)), ' ');
    if (fields.size() < 3 || fields[2] != std::to_string(group)) continue;
    std::error_code fd_ec;
    for (const auto& fd : std::filesystem::directory_iterator(proc.path() / "fd", fd_ec)) {
      readable = true;
      std::error_code link_ec;
      const auto target = std::filesystem::read_symlink(fd.path(), link_ec);
      if (!link_ec && ends_with(target.filename().string(), ".nvcudmp")) return true;
    }
  }
  if (!readable) return std::nullopt;
  return false;
}

void HangTrigger::wait_for_dump() {
  // The driver gives no signal when the dump is complete. Done when no process of the group has
  // the dump open any more; where that cannot be read, when the file has kept its size for 2 s
  // (on the H200 a dump cut at 1 s of stable size held no kernel: the driver pauses while it
  // stops the warps). Polled every 100 ms; stop() (the process ended) ends the wait too.
  constexpr milliseconds kPoll{100};
  constexpr int kStablePolls = 20;
  std::int64_t last_bytes = -1;
  int stable = 0;
  const auto deadline = std::chrono::steady_clock::now() + dump_wait_;
  while (std::chrono::steady_clock::now() < deadline) {
    if (wait_stopped(kPoll)) return;
    auto dump = find_core_dump(scratch_dir_);
    const std::int64_t bytes = dump ? dump->bytes : -1;
    stable = bytes > 0 && bytes == last_bytes ? stable + 1 : 0;
    last_bytes = bytes;
    if (bytes <= 0) continue;
    pid_t group = 0;
    {
      std::lock_guard lock(mutex_);
      group = group_;
    }
    const std::optional<bool> open = group > 0 ? dump_open_in_group(group) : std::nullopt;
    if (open.has_value() ? !*open : stable >= kStablePolls) return;
  }
}

}  // namespace ptxb
