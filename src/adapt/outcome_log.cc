#include "adapt/outcome_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/fs.h"
#include "core/strings.h"
#include "metrics/turn_record.h"

namespace ptxb::adapt {
namespace {

constexpr std::size_t kMaxOutcomeLogBytes = 256u << 20;  // kernels inline: bigger than turns.jsonl

}  // namespace

Result<std::unique_ptr<OutcomeLog>> OutcomeLog::open(const std::string& path) {
  std::unique_ptr<OutcomeLog> log(new OutcomeLog(path));
  if (!path_exists(path)) {
    PTXB_RETURN_IF_ERROR(write_file_atomic(path, ""));
    return log;
  }
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxOutcomeLogBytes));
  const std::size_t committed = committed_jsonl_length(text);
  if (committed != text.size()) {
    // A torn append: cut it off so the next line starts clean.
    if (::truncate(path.c_str(), static_cast<off_t>(committed)) != 0)
      return make_error("io", "{}: cannot cut off a torn last line: {}", path,
                        std::strerror(errno));
    text.resize(committed);
  }
  int line_number = 0;
  for (const std::string& line : split(text, '\n')) {
    ++line_number;
    if (trim(line).empty()) continue;
    PTXB_ASSIGN_OR_RETURN(Json entry, parse_json(line, fmt::format("{}:{}", path, line_number)));
    if (!entry.is_object() || !entry.contains("id") || !entry["id"].is_string())
      return make_error("parse", "{}:{}: expected an object with a string \"id\"", path,
                        line_number);
    const std::string id = entry["id"].get<std::string>();
    if (!log->entries_.emplace(id, std::move(entry)).second)
      return make_error("parse", "{}:{}: id {} appears twice", path, line_number, id);
  }
  return log;
}

bool OutcomeLog::contains(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.count(id) > 0;
}

std::map<std::string, Json> OutcomeLog::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_;
}

Status OutcomeLog::append(const Json& entry) {
  const std::string id = entry.value("id", "");
  std::lock_guard<std::mutex> lock(mutex_);
  if (id.empty() || entries_.count(id))
    return make_error("internal", "{}: id '{}' is empty or already committed", path_, id);
  const std::string line = entry.dump() + "\n";
  const int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return make_error("io", "{}: {}", path_, std::strerror(errno));
  const ssize_t written = ::write(fd, line.data(), line.size());
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (written != static_cast<ssize_t>(line.size()) || !synced)
    return make_error("io", "{}: append failed: {}", path_, std::strerror(errno));
  entries_.emplace(id, entry);
  return ok_status();
}

}  // namespace ptxb::adapt
