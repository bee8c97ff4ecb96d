// Threads and child processes of the runner, read from /proc (the leftover check, design.md §3.2:
// all of the candidate's work is enqueued before `run` returns, so nothing it starts may still
// be alive afterwards).
//
// The runner lists its threads and children just before calling `run` and again after the
// call's device-wide synchronize; whatever is new and still alive is reported to the
// supervisor, which fails the candidate (`leftover_thread`, `leftover_process`). A tripwire like
// the CUPTI window: a candidate thread that launches GPU work after `run` returned is also seen
// as out-of-window activity, and the sandbox (PID namespace, rlimits) bounds what a process can
// do. Plain Linux; no CUDA, so the logic is unit-tested in ptxbench_tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ptxb {

struct TaskEntry {
  std::int64_t id = 0;  // tid or pid as this process's /proc shows it
  std::string name;     // comm (at most 15 characters)
  char state = '?';     // /proc/<id>/stat state: R, S, D, Z (zombie), X (dead), ...

  bool alive() const { return state != 'Z' && state != 'X' && state != '?'; }
};

// Every thread of this process (/proc/self/task), the calling one included.
std::vector<TaskEntry> list_threads();
// Every child process of this process: the union of /proc/self/task/*/children (a child belongs
// to the thread that forked it), zombies included (check alive()).
std::vector<TaskEntry> list_children();

// Entries of `after` that are not in `before` (by id), alive, and not exempt. Exempt: threads
// the CUDA driver starts on its own (comm "cuda-EvtHandlr", "cuda00001400006", ... — the
// driver names its workers "cuda*"); a candidate thread inherits the runner's comm unless it
// renames itself, which only hides it from this tripwire, not from the CUPTI window.
std::vector<TaskEntry> new_live_tasks(const std::vector<TaskEntry>& before,
                                      const std::vector<TaskEntry>& after,
                                      bool exempt_driver_threads);

// prctl(PR_SET_CHILD_SUBREAPER): orphans of this process's descendants (a double-forked daemon)
// are re-parented to us instead of init, so list_children() still sees them.
bool become_child_subreaper();

}  // namespace ptxb
