#include "supervisor/cgroup_watch.h"

#include <charconv>

#include "core/strings.h"

namespace ptxb {

CgroupWatchedSession::CgroupWatchedSession(std::unique_ptr<RunnerSession> inner, const CgroupFs& fs,
                                           std::string procs_path, pid_t runner_pid)
    : inner_(std::move(inner)),
      fs_(fs),
      procs_path_(std::move(procs_path)),
      runner_pid_(runner_pid) {}

Result<std::vector<LeftoverTask>> CgroupWatchedSession::strangers() const {
  auto text = fs_.read(procs_path_);
  if (!text.ok())
    return make_error("cgroup", "the runner's process count: {}", text.error().message);
  std::vector<LeftoverTask> out;
  for (const auto& line : split(*text, '\n')) {
    const std::string field = trim(line);
    if (field.empty()) continue;
    std::int64_t pid = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), pid);
    if (ec != std::errc() || end != field.data() + field.size())
      return make_error("cgroup", "{}: not a pid list (\"{}\")", procs_path_, field);
    if (pid == runner_pid_) continue;
    // The name is for the message only; a process gone since the read keeps its number.
    auto comm = fs_.read("/proc/" + std::to_string(pid) + "/comm");
    out.push_back(LeftoverTask{pid, comm.ok() ? std::string(trim(*comm)) : std::string("?")});
  }
  return out;
}

Result<HelloReply> CgroupWatchedSession::hello(std::chrono::milliseconds timeout) {
  return inner_->hello(timeout);
}

Result<LoadReply> CgroupWatchedSession::load(const LoadRequest& request,
                                             std::chrono::milliseconds timeout) {
  return inner_->load(request, timeout);
}

Result<BindReply> CgroupWatchedSession::bind(const BindRequest& request,
                                             std::chrono::milliseconds timeout) {
  return inner_->bind(request, timeout);
}

Result<CallReply> CgroupWatchedSession::call(const CallRequest& request,
                                             std::chrono::milliseconds timeout,
                                             CallBracket* bracket) {
  PTXB_ASSIGN_OR_RETURN(CallReply reply, inner_->call(request, timeout, bracket));
  PTXB_ASSIGN_OR_RETURN(std::vector<LeftoverTask> extra, strangers());
  reply.leftover_processes.insert(reply.leftover_processes.end(), extra.begin(), extra.end());
  return reply;
}

Result<BatchReply> CgroupWatchedSession::batch(const BatchRequest& request,
                                               std::chrono::milliseconds timeout) {
  PTXB_ASSIGN_OR_RETURN(BatchReply reply, inner_->batch(request, timeout));
  PTXB_ASSIGN_OR_RETURN(std::vector<LeftoverTask> extra, strangers());
  reply.leftover_processes.insert(reply.leftover_processes.end(), extra.begin(), extra.end());
  return reply;
}

Status CgroupWatchedSession::shutdown(std::chrono::milliseconds timeout) {
  return inner_->shutdown(timeout);
}

void CgroupWatchedSession::kill() {
  inner_->kill();
}

RunnerExit CgroupWatchedSession::wait(std::chrono::milliseconds timeout) {
  return inner_->wait(timeout);
}

std::string CgroupWatchedSession::log() const {
  return inner_->log();
}

}  // namespace ptxb
