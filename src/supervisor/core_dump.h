// CUDA core dumps for the debug stage (supervisor/stage_debug.cc, docs/eval.md "Debug stage").
//
// The driver writes a GPU core dump itself when the process's environment asks for it
// (cuda-gdb documentation, "GPU core dump support"; CUDA 12.5+ generation flags):
//   CUDA_ENABLE_COREDUMP_ON_EXCEPTION=1      a dump when a kernel raises a GPU exception
//   CUDA_ENABLE_USER_TRIGGERED_COREDUMP=1    a dump when anything is written to the pipe
//   CUDA_COREDUMP_PIPE=<scratch>/corepipe    ... which the driver creates (a FIFO) at start-up
//   CUDA_COREDUMP_FILE=<scratch>/core_%p.nvcudmp
//   CUDA_COREDUMP_GENERATION_FLAGS=skip_global_memory,skip_shared_memory,skip_local_memory,
//                                  skip_abort
// Skipping the memories keeps the dump to registers, the ELF images (kernel.cu line info) and
// the grid's state: a few MB instead of the GPU's 141 GB, and none of the inputs' or the
// reference's data leaves the process. skip_abort: after the dump the process goes on and
// reports the error at its synchronization (the runner's own message), instead of abort().
// CPU core dumps stay off (CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION=0; RLIMIT_CORE is 0 anyway).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ptxb {

// The KEY=VALUE entries above for a process whose scratch folder is `scratch_dir`; the user
// trigger and its pipe only with `hang_trigger`.
std::vector<std::string> core_dump_environment(const std::string& scratch_dir, bool hang_trigger);
std::string core_dump_pipe_path(const std::string& scratch_dir);

struct CoreDumpFile {
  std::string path;
  std::int64_t bytes = 0;
};
// The largest *.nvcudmp file directly in `scratch_dir` (the driver names it from the pattern;
// one process, one dump expected). nullopt when there is none.
std::optional<CoreDumpFile> find_core_dump(const std::string& scratch_dir);

// Whether a process of process group `group` has a *.nvcudmp file open (the driver still
// writing it), read from /proc/<pid>/fd; nullopt when that cannot be told (no process of the
// group could be read, e.g. another uid without privileges).
std::optional<bool> dump_open_in_group(pid_t group);

// Takes the dump of a process that hangs: after `after`, unless stop() came first, writes one
// byte to the driver's pipe, waits until the dump is complete (or `dump_wait` passed), then
// kills the process group it was given (started()), so the caller's
// run returns without waiting for its own timeout. Runs on a thread of its own from
// construction; the destructor stops and joins it.
class HangTrigger {
 public:
  HangTrigger(std::string scratch_dir, std::chrono::milliseconds after,
              std::chrono::milliseconds dump_wait);
  ~HangTrigger();
  HangTrigger(const HangTrigger&) = delete;
  HangTrigger& operator=(const HangTrigger&) = delete;

  // ProcessSpec::on_start: the process group to kill once the dump is written.
  void started(pid_t group);
  // The process ended by itself: nothing to trigger or kill.
  void stop();

  // After the run (stop() or the destructor joined the thread): whether the byte was written,
  // and why not when it was due but failed.
  bool fired();
  std::string failure();

 private:
  void run();
  // Waits up to `limit` for stop(); true when stopped.
  bool wait_stopped(std::chrono::milliseconds limit);
  void wait_for_dump();

  std::string scratch_dir_;
  std::chrono::milliseconds after_, dump_wait_;
  std::mutex mutex_;
  std::condition_variable stopped_cv_;
  bool stopped_ = false;
  pid_t group_ = 0;
  bool fired_ = false;
  std::string failure_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace ptxb
