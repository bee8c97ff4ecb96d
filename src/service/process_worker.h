// Worker in its own process (the real one and the end-to-end tests' fake alike): the service
// starts `argv` (ptxbench serve-worker ...) with CUDA_VISIBLE_DEVICES set to its GPU and speaks
// service/worker_protocol.h over its stdin/stdout.
//
// The process dies with the service: it is started with a parent-death signal (SIGTERM, on which
// `serve-worker` kills the evaluation processes it started, then itself), and it leads its own
// process group, which kill() and a timeout end as a whole.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>
#include <vector>

#include "service/worker.h"

namespace ptxb::service {

class ProcessWorker final : public Worker {
 public:
  // `devices`: the worker's CUDA_VISIBLE_DEVICES ("" inherits the service's).
  ProcessWorker(std::string name, std::vector<std::string> argv, std::string devices,
                double start_timeout_seconds = 60);
  ~ProcessWorker() override;

  const std::string& name() const override { return name_; }
  Status start() override;
  Result<Json> evaluate(const EvalRequest& request, double timeout_seconds) override;
  Result<double> canary(double timeout_seconds) override;
  void kill() override;

 private:
  // Sends one line and reads the reply line; any failure kills the process.
  Result<Json> exchange(const Json& message, double timeout_seconds);
  Result<std::string> read_line(double timeout_seconds);
  // Ends the process (if any), waits for it, closes the pipes: how it ended, "" if none ran.
  std::string reap();

  std::string name_;
  std::vector<std::string> argv_;
  std::string devices_;
  double start_timeout_seconds_;
  std::mutex pid_mutex_;  // kill() may come from another thread; it only signals
  pid_t pid_ = -1;
  int to_worker_ = -1, from_worker_ = -1;  // the talking thread's alone
  std::string buffer_;                     // bytes read past the last line
};

}  // namespace ptxb::service
