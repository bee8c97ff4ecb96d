// What `ptxbench run` tells the person watching (stderr): one line per finished turn and per
// trajectory that ends, retries and warnings; on a terminal, also a live status line at the
// bottom (turns done, what is running, elapsed time). Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <ostream>
#include <string>

#include "agent/experiment.h"
#include "metrics/turn_record.h"

namespace ptxb {

class RunProgress {
 public:
  virtual ~RunProgress() = default;
  virtual void begin(std::size_t /*total_turns*/, std::size_t /*done_turns*/) {}
  // phase: "model" (waiting for the reply) or "eval" (compile + GPU).
  virtual void phase(const TrajectoryPlan& /*t*/, int /*turn*/, const std::string& /*phase*/) {}
  virtual void turn_done(const TrajectoryPlan& /*t*/, const TurnRecord& /*record*/) {}
  virtual void trajectory_done(const TrajectoryPlan& /*t*/, const std::string& /*exit_status*/,
                               const std::string& /*detail*/) {}
  virtual void note(const std::string& /*line*/) {}
  virtual void end() {}
};

class ConsoleProgress final : public RunProgress {
 public:
  // `live`: redraw a status line (use when `out` is a terminal).
  ConsoleProgress(std::ostream& out, bool live, int total_turns_per_trajectory);
  void begin(std::size_t total_turns, std::size_t done_turns) override;
  void phase(const TrajectoryPlan& t, int turn, const std::string& phase) override;
  void turn_done(const TrajectoryPlan& t, const TurnRecord& record) override;
  void trajectory_done(const TrajectoryPlan& t, const std::string& exit_status,
                       const std::string& detail) override;
  void note(const std::string& line) override;
  void end() override;

 private:
  void print_line(const std::string& line);  // mutex held
  std::string status_line() const;           // mutex held

  std::ostream& out_;
  bool live_;
  int turns_per_trajectory_;
  std::mutex mutex_;
  std::size_t total_turns_ = 0, done_turns_ = 0;
  std::map<std::string, std::string> running_;  // trajectory id -> phase
  std::map<std::string, int> statuses_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace ptxb
