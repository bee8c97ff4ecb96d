#include "runner/process_census.h"

#include <sys/prctl.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace ptxb {
namespace {

namespace fs = std::filesystem;

std::string read_small_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool all_digits(const std::string& text) {
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// /proc/<dir>/stat: "pid (comm) S ppid ..."; comm may hold spaces and parentheses, so the state
// follows the *last* ')'.
TaskEntry read_task(const std::string& stat_dir, std::int64_t id) {
  TaskEntry entry;
  entry.id = id;
  const std::string stat = read_small_file(stat_dir + "/stat");
  const auto open = stat.find('(');
  const auto close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return entry;
  entry.name = stat.substr(open + 1, close - open - 1);
  if (close + 2 < stat.size()) entry.state = stat[close + 2];
  // Fields after the comm, from field 3 (state) on; starttime is field 22 (proc(5)).
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int number = 3; number <= 22 && fields >> field; ++number)
    if (number == 22 && all_digits(field)) entry.start_ticks = std::stoull(field);
  return entry;
}

}  // namespace

std::vector<TaskEntry> list_threads() {
  return list_threads_in("/proc/self/task");
}

std::vector<TaskEntry> list_threads_in(const std::string& task_dir) {
  std::vector<TaskEntry> threads;
  std::error_code error;
  for (const auto& dir : fs::directory_iterator(task_dir, error)) {
    const std::string tid = dir.path().filename().string();
    if (!all_digits(tid)) continue;
    threads.push_back(read_task(dir.path().string(), std::stoll(tid)));
  }
  std::sort(threads.begin(), threads.end(),
            [](const TaskEntry& a, const TaskEntry& b) { return a.id < b.id; });
  return threads;
}

std::vector<TaskEntry> list_children() {
  std::set<std::int64_t> pids;
  std::error_code error;
  for (const auto& dir : fs::directory_iterator("/proc/self/task", error)) {
    std::istringstream children(read_small_file(dir.path().string() + "/children"));
    std::int64_t pid = 0;
    while (children >> pid) pids.insert(pid);
  }
  std::vector<TaskEntry> out;
  for (std::int64_t pid : pids) out.push_back(read_task("/proc/" + std::to_string(pid), pid));
  return out;
}

void ThreadCensus::seal(const std::vector<TaskEntry>& threads) {
  if (sealed_) return;
  for (const auto& thread : threads) trusted_.emplace_back(thread.id, thread.start_ticks);
  std::sort(trusted_.begin(), trusted_.end());
  sealed_ = true;
}

bool ThreadCensus::is_trusted(const TaskEntry& task) const {
  return std::binary_search(trusted_.begin(), trusted_.end(),
                            std::make_pair(task.id, task.start_ticks));
}

std::vector<TaskEntry> ThreadCensus::untrusted_alive(const std::vector<TaskEntry>& now) const {
  std::vector<TaskEntry> out;
  for (const auto& task : now)
    if (task.alive() && !is_trusted(task)) out.push_back(task);
  return out;
}

bool become_child_subreaper() {
  return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}

}  // namespace ptxb
