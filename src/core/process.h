// Running a child process with a hard wall-clock limit and capped output capture.
//
// Used for every external tool (nvcc, ptxas, cuobjdump, ncu) and for the GPU runner. The child
// gets its own process group so that a timeout or an interrupt of ptxbench kills everything it
// started (nvcc spawns cicc,
// ptxas, fatbinary; a candidate may fork). Behind the ProcessRunner interface so that the compile
// and evaluation stages are tested with scripted fakes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace ptxb {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up on PATH if it has no '/'
  // Full environment ("KEY=VALUE"); nullopt inherits ours.
  std::optional<std::vector<std::string>> env;
  std::string cwd;                          // empty: inherit
  std::chrono::milliseconds timeout{0};     // 0: no limit
  std::size_t output_cap_bytes = 1u << 20;  // per stream; the rest is dropped and counted
  std::string stdin_data;                   // written to the child's stdin, then closed
  // Called in the parent right after the child started, with its pid (also its process group):
  // lets a caller that runs the child on another thread stop it (the local executor's cancel).
  std::function<void(pid_t)> on_start;
};

struct ProcessResult {
  int exit_code = -1;   // valid when term_signal == 0 and !timed_out
  int term_signal = 0;  // signal that ended the child, 0 if it exited
  bool timed_out = false;
  // ptxbench itself was interrupted (core/interrupt.h) while the child ran: its process group
  // was killed and the outcome means nothing about the child.
  bool interrupted = false;
  std::string stdout_text;
  std::string stderr_text;
  std::size_t stdout_dropped_bytes = 0;
  std::size_t stderr_dropped_bytes = 0;
  double wall_ms = 0.0;

  bool succeeded() const {
    return !timed_out && !interrupted && term_signal == 0 && exit_code == 0;
  }
  // "exit code 2", "killed by signal 11 (SIGSEGV)", "timed out after 120.0 s (process group
  // killed)"
  std::string describe() const;
};

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  // Fails only if the process could not be started (missing executable, fork failure); a
  // non-zero exit, a signal or a timeout is a successful run with that outcome recorded.
  virtual Result<ProcessResult> run(const ProcessSpec& spec) = 0;
};

class SystemProcessRunner final : public ProcessRunner {
 public:
  Result<ProcessResult> run(const ProcessSpec& spec) override;
};

// Looks `name` up on PATH (or checks it directly if it contains '/'); nullopt if not executable.
std::optional<std::string> find_executable(const std::string& name);

// Our environment as a KEY=VALUE list.
std::vector<std::string> current_environment();

}  // namespace ptxb
