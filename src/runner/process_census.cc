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
  return entry;
}

bool is_driver_thread(const std::string& name) {
  return name.rfind("cuda", 0) == 0;
}

}  // namespace

std::vector<TaskEntry> list_threads() {
  std::vector<TaskEntry> threads;
  std::error_code error;
  for (const auto& dir : fs::directory_iterator("/proc/self/task", error)) {
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

std::vector<TaskEntry> new_live_tasks(const std::vector<TaskEntry>& before,
                                      const std::vector<TaskEntry>& after,
                                      bool exempt_driver_threads) {
  std::set<std::int64_t> known;
  for (const auto& task : before) known.insert(task.id);
  std::vector<TaskEntry> out;
  for (const auto& task : after) {
    if (known.count(task.id) || !task.alive()) continue;
    if (exempt_driver_threads && is_driver_thread(task.name)) continue;
    out.push_back(task);
  }
  return out;
}

bool become_child_subreaper() {
  return ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0;
}

}  // namespace ptxb
