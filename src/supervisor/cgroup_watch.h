// The supervisor's own count of the candidate runner's processes after every call (Integrity II,
// "nothing a candidate starts survives"; docs/integrity.md "Teardown").
//
// The runner reports the children it sees (`leftover_processes`), but the runner is the
// candidate's process: what it reports is what the candidate lets through. The kernel's count is
// not: each sandboxed runner lives in a cgroup of its own (sandbox/process_cgroup.h) that no
// unprivileged process can leave, so after each call and batch reply this session reads that
// group's cgroup.procs and appends every process other than the runner to the reply's
// `leftover_processes`, where the existing check makes it REWARD_HACK `leftover_process`.
// Threads are not processes and stay the runner's census; an exited child is no longer listed
// (a zombie leaves its cgroup when it exits).
//
// Only where cgroup v2 is usable; under the process-group fallback there is no such count.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "sandbox/process_cgroup.h"
#include "supervisor/eval_backend.h"

namespace ptxb {

class CgroupWatchedSession final : public RunnerSession {
 public:
  // `runner_pid`: the runner's pid (the sandbox launcher execs in place), the one process the
  // group may hold. `procs_path`: <group>/cgroup.procs.
  CgroupWatchedSession(std::unique_ptr<RunnerSession> inner, const CgroupFs& fs,
                       std::string procs_path, pid_t runner_pid);

  Result<HelloReply> hello(std::chrono::milliseconds timeout) override;
  Result<LoadReply> load(const LoadRequest& request, std::chrono::milliseconds timeout) override;
  Result<BindReply> bind(const BindRequest& request, std::chrono::milliseconds timeout) override;
  Result<CallReply> call(const CallRequest& request, std::chrono::milliseconds timeout,
                         CallBracket* bracket) override;
  Result<BatchReply> batch(const BatchRequest& request, std::chrono::milliseconds timeout) override;
  Status shutdown(std::chrono::milliseconds timeout) override;
  void kill() override;
  RunnerExit wait(std::chrono::milliseconds timeout) override;
  std::string log() const override;
  pid_t process_id() const override { return runner_pid_; }

 private:
  // The group's processes other than the runner, named from /proc/<pid>/comm.
  Result<std::vector<LeftoverTask>> strangers() const;

  std::unique_ptr<RunnerSession> inner_;
  const CgroupFs& fs_;
  std::string procs_path_;
  pid_t runner_pid_;
};

}  // namespace ptxb
