#include "agent/progress.h"

#include <fmt/format.h>

#include "core/strings.h"

namespace ptxb {

ConsoleProgress::ConsoleProgress(std::ostream& out, bool live, int turns_per_trajectory)
    : out_(out), live_(live), turns_per_trajectory_(turns_per_trajectory) {}

std::string ConsoleProgress::status_line() const {
  int model = 0, eval = 0;
  for (const auto& [id, phase] : running_) (phase == "eval" ? eval : model)++;
  const auto seconds = static_cast<long>(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  std::string line =
      fmt::format("[{}/{} turns] running: {} model, {} eval | {}m{:02}s |", done_turns_,
                  total_turns_, model, eval, seconds / 60, seconds % 60);
  for (const auto& [status, count] : statuses_) line += fmt::format(" {} {}", status, count);
  return line;
}

void ConsoleProgress::print_line(const std::string& line) {
  if (live_) out_ << "\r\033[K";
  out_ << line << "\n";
  if (live_) out_ << status_line();
  out_ << std::flush;
}

void ConsoleProgress::begin(std::size_t total_turns, std::size_t done_turns) {
  std::lock_guard<std::mutex> lock(mutex_);
  total_turns_ = total_turns;
  done_turns_ = done_turns;
  print_line(done_turns ? fmt::format("resuming: {} of {} already done", done_turns,
                                      count_noun(static_cast<long long>(total_turns), "turn"))
                        : fmt::format("starting: {}",
                                      count_noun(static_cast<long long>(total_turns), "turn")));
}

void ConsoleProgress::phase(const TrajectoryPlan& t, int turn, const std::string& phase) {
  std::lock_guard<std::mutex> lock(mutex_);
  (void)turn;
  running_[t.id] = phase;
  if (live_) out_ << "\r\033[K" << status_line() << std::flush;
}

void ConsoleProgress::turn_done(const TrajectoryPlan& t, const TurnRecord& r) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_turns_;
  ++statuses_[r.status_name()];
  std::string line =
      fmt::format("turn {}/{} {}: {}", r.turn, turns_per_trajectory_, t.id, r.status_name());
  if (!r.reason.empty()) line += " (" + r.reason + ")";
  if (r.speedup && r.correct()) line += fmt::format(" {:.3f}x", *r.speedup);
  if (r.correct()) line += " " + r.target_instructions;
  line += fmt::format(" | model {:.1f} s, eval {:.1f} s | {}/{}", r.model_wall_s, r.eval_wall_s,
                      done_turns_, total_turns_);
  print_line(line);
}

void ConsoleProgress::trajectory_done(const TrajectoryPlan& t, const std::string& exit_status,
                                      const std::string& detail) {
  std::lock_guard<std::mutex> lock(mutex_);
  running_.erase(t.id);
  if (exit_status == "completed") return;  // the turn lines said it all
  print_line(
      fmt::format("trajectory {}: {}{}", t.id, exit_status, detail.empty() ? "" : ": " + detail));
}

void ConsoleProgress::note(const std::string& line) {
  std::lock_guard<std::mutex> lock(mutex_);
  print_line(line);
}

void ConsoleProgress::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (live_) out_ << "\r\033[K" << std::flush;
}

}  // namespace ptxb
