// The supervisor's side of the runner channel: spawn `ptxbench-runner --channel-fd 3`, then
// typed request/response calls with deadlines (docs/runner.md).
//
// Trusted code. The runner is treated as hostile: every reply is size-capped and strictly
// parsed, every request has a deadline, and the process lives in its own process group so a
// timeout kills everything the candidate started. Verdicts are not made here; callers get the
// runner's facts plus their own clock bracket around each call (design.md §3.3).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "protocol/protocol.h"

namespace ptxb {

struct RunnerLaunchSpec {
  std::string runner_path;  // build/ptxbench-runner
  std::vector<std::string>
      wrapper_argv;  // sandbox launcher prefix (ptxbench-sandbox ... --); may be empty
  std::vector<std::string> extra_args;          // appended after `--channel-fd 3`
  std::optional<std::vector<std::string>> env;  // full KEY=VALUE list; nullopt inherits ours
  std::string cwd;                              // empty: inherit
  std::size_t log_cap_bytes = 1u << 20;         // stdout+stderr (merged) kept for the model
};

// How the runner process ended.
struct RunnerExit {
  bool finished = false;  // false: still running when wait() gave up (it was then killed)
  int exit_code = -1;     // valid when term_signal == 0
  int term_signal = 0;
  bool killed_by_us = false;
  std::string describe() const;  // "exit code 0", "killed by signal 11 (SIGSEGV)"
};

// The supervisor's clock around one call: request written → reply read (design.md §3.3 bracket).
struct CallBracket {
  std::uint64_t round_trip_ns = 0;
};

class RunnerClient {
 public:
  // Spawns the runner: fd 3 is our socketpair's other end, stdin /dev/null, stdout and stderr a
  // pipe drained into a capped log; every other descriptor is closed in the child.
  static Result<std::unique_ptr<RunnerClient>> spawn(const RunnerLaunchSpec& spec);
  // Talks over an already connected fd (tests: a fake runner on a socketpair). Owns `fd`.
  static std::unique_ptr<RunnerClient> attach(int fd);

  ~RunnerClient();
  RunnerClient(const RunnerClient&) = delete;
  RunnerClient& operator=(const RunnerClient&) = delete;

  Result<HelloReply> hello(std::chrono::milliseconds timeout);
  Result<LoadReply> load(const LoadRequest& request, std::chrono::milliseconds timeout);
  Result<BindReply> bind(const BindRequest& request, std::chrono::milliseconds timeout);
  // A timeout is an Error with code "timeout" (→ the caller kills and reports TIMEOUT); a dead
  // runner gives code "eof"/"frame_truncated" (→ wait() for the signal or exit code).
  Result<CallReply> call(const CallRequest& request, std::chrono::milliseconds timeout,
                         CallBracket* bracket = nullptr);
  // K calls in one request (protocol.h BatchRequest); the caller brackets it with its own clock.
  Result<BatchReply> batch(const BatchRequest& request, std::chrono::milliseconds timeout);
  // Sends shutdown, reads the reply and waits for the process to exit.
  Status shutdown(std::chrono::milliseconds timeout);

  // One raw request: writes {"type", "seq", ...body}, returns the checked reply object.
  Result<Json> request(const std::string& type, Json body, std::chrono::milliseconds timeout);

  // SIGKILL to the runner's process group (no-op for attach()ed clients).
  void kill();
  // Waits up to `timeout` for the process to end; kills it after that. Idempotent.
  RunnerExit wait(std::chrono::milliseconds timeout);

  pid_t pid() const { return pid_; }
  // The runner's stdout+stderr so far (capped; a note names the dropped byte count).
  std::string log() const;

 private:
  RunnerClient() = default;
  void drain_log(int fd, std::size_t cap);

  int channel_fd_ = -1;
  pid_t pid_ = -1;
  std::uint64_t next_seq_ = 1;
  std::optional<RunnerExit> exit_;
  std::thread log_thread_;
  // Set once the runner is reaped: the log pipe is then drained only for a short grace period,
  // since a process the candidate left behind (with the pipe as its stderr) could otherwise
  // hold it open, and the evaluation with it, for as long as it lives.
  std::atomic<bool> reaped_{false};
  mutable std::mutex log_mutex_;
  std::string log_;
  std::size_t log_dropped_ = 0;
};

}  // namespace ptxb
