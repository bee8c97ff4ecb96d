// A test double for cluster/scheduler.h's Scheduler: submissions are recorded, task states are
// whatever the test sets, and `on_query` lets a test move the "cluster" on between two polls
// of the coordinator (cluster/scale_out.h).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cluster/scheduler.h"

namespace ptxb {

class FakeScheduler final : public Scheduler {
 public:
  std::string name() const override { return "fake"; }
  Result<std::string> submit(const ArrayJob& job) override {
    if (!submit_error.empty()) return make_error("scheduler", "{}", submit_error);
    const std::string id = std::to_string(100 + submissions.size());
    submissions.push_back(job);
    for (int i : job.indices) states[id][i] = TaskState::kPending;
    return id;
  }
  Result<std::map<int, TaskState>> query(const std::string& job_id) override {
    ++queries;
    if (on_query) on_query(queries);
    return states[job_id];
  }
  Status cancel(const std::string& job_id, std::optional<int> index) override {
    for (auto& [i, state] : states[job_id])
      if (!index || i == *index) state = TaskState::kCancelled;
    return ok_status();
  }

  std::vector<ArrayJob> submissions;
  std::map<std::string, std::map<int, TaskState>> states;  // job id -> index -> state
  std::function<void(int)> on_query;
  std::string submit_error;
  int queries = 0;
};

}  // namespace ptxb
