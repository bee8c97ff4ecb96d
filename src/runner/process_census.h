// Threads and child processes of the runner, read from /proc (the leftover check, design.md §3.2:
// all of the candidate's work is enqueued before `run` returns, so nothing it starts may still
// be alive afterwards).
//
// Threads are judged by *when they came to exist*, never by name (a thread may rename itself
// "cuda-EvtHandlr"): ThreadCensus trusts exactly the threads alive once the runner's own CUDA,
// CUPTI and NVML set-up is over — the runner pre-creates there the driver threads that would
// otherwise start lazily inside a call (runner_service.cc, initialize_gpu) — and every other
// thread alive after a call's device-wide synchronize is the candidate's leftover
// (`leftover_thread`). Children: whatever is alive (`leftover_process`). A tripwire like the
// CUPTI window: a candidate thread that launches GPU work after `run` returned is also seen as
// out-of-window activity, and the sandbox (its cgroup, killed at the end; rlimits) bounds what a
// process can do. Plain Linux; no CUDA, so the logic is unit-tested in ptxbench_tests.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ptxb {

struct TaskEntry {
  std::int64_t id = 0;  // tid or pid as this process's /proc shows it
  std::string name;     // comm (at most 15 characters)
  char state = '?';     // /proc/<id>/stat state: R, S, D, Z (zombie), X (dead), ...
  // /proc/<id>/stat field 22, clock ticks after boot: with the id, who the task is (a tid can
  // be reused once its thread is gone; the pair cannot).
  std::uint64_t start_ticks = 0;

  bool alive() const { return state != 'Z' && state != 'X' && state != '?'; }
};

// Every thread of this process (/proc/self/task), the calling one included.
std::vector<TaskEntry> list_threads();
// The same for any task directory laid out like /proc/<pid>/task (<tid>/stat): tests use a fake.
std::vector<TaskEntry> list_threads_in(const std::string& task_dir);
// Every child process of this process: the union of /proc/self/task/*/children (a child belongs
// to the thread that forked it), zombies included (check alive()).
std::vector<TaskEntry> list_children();

// The leftover-thread rule. The runner seals the census once, at the end of its own
// initialisation, before any candidate code ran: the threads alive then (the runner's, the
// driver's — event handler, host-function worker — CUPTI's, NVML's) are trusted for the rest
// of the process's life. Every thread that comes later came from candidate code (its dlopen,
// its `run`, a host function it enqueued, a thread it started) or from the driver lazily; the
// second kind is why the runner pre-creates the driver threads it knows of before sealing.
// A candidate cannot get a thread trusted: the set never grows after the seal.
class ThreadCensus {
 public:
  // Trusts every thread in `threads` (alive or not) and seals the census. Later calls are
  // ignored: the trusted set is the one from the first call.
  void seal(const std::vector<TaskEntry>& threads);
  bool sealed() const { return sealed_; }
  // Threads of `now` that are alive and were not trusted at the seal (all of them before it).
  std::vector<TaskEntry> untrusted_alive(const std::vector<TaskEntry>& now) const;

 private:
  bool is_trusted(const TaskEntry& task) const;

  bool sealed_ = false;
  std::vector<std::pair<std::int64_t, std::uint64_t>> trusted_;  // (id, start_ticks), sorted
};

// prctl(PR_SET_CHILD_SUBREAPER): orphans of this process's descendants (a double-forked daemon)
// are re-parented to us instead of init, so list_children() still sees them.
bool become_child_subreaper();

}  // namespace ptxb
