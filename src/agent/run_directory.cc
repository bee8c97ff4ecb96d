#include "agent/run_directory.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/clock.h"
#include "core/fs.h"
#include "core/json_fields.h"
#include "core/strings.h"

namespace ptxb {
namespace {

constexpr std::size_t kMaxRunFileBytes = 64u << 20;
// How long an open waits for the directory lock: an unsharded run briefly (a shard starting at
// the same moment holds it for milliseconds), a shard long enough for a whole array of shards
// starting together on a slow NFS server.
constexpr std::chrono::milliseconds kDirectoryWait{5000};
constexpr std::chrono::milliseconds kShardOpenWait{120000};

std::string turns_path(const std::string& root) {
  return root + "/turns.jsonl";
}

// Appends `text` with one write(2) (O_APPEND: concurrent appenders never interleave a line),
// then fsync, so a committed turn survives a crash of the process or the machine.
Status append_durably(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return make_error("io", "{}: cannot open for appending: {}", path, std::strerror(errno));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      ::close(fd);
      return make_error("io", "{}: append failed: {}", path, std::strerror(saved));
    }
    written += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return make_error("io", "{}: fsync failed: {}", path, std::strerror(errno));
  return ok_status();
}

// Creates the run's files, or checks that an existing run holds the same experiment. Called
// under the directory lock.
Status prepare_files(const std::string& root, const ExperimentPlan& plan, bool& resumed) {
  const std::string plan_path = root + "/plan.json";
  resumed = path_exists(plan_path);
  if (resumed) {
    PTXB_ASSIGN_OR_RETURN(Json saved, read_json_file(plan_path));
    Json identity;
    Status read = FieldReader(saved).required("identity", identity).status();
    if (!read.ok()) return read.error().with_context(plan_path);
    const std::string difference = first_json_difference(identity, plan.identity(), "$.identity");
    if (!difference.empty())
      return make_error("usage",
                        "{} holds another experiment ({}, saved vs asked); resume it with the "
                        "same settings (or `ptxbench run --out {}` alone), or use another --out",
                        root, difference, root);
    return ok_status();
  }
  if (path_exists(turns_path(root)))
    return make_error("usage",
                      "--out {}: holds turns.jsonl but no plan.json; not a ptxbench run directory",
                      root);
  PTXB_RETURN_IF_ERROR(make_directories(root + "/trajectories"));
  PTXB_RETURN_IF_ERROR(make_directories(root + "/turns"));
  Json plan_json = plan.to_json();
  plan_json["created"] = iso_utc_now();
  std::string declared;
  for (const auto& t : plan.trajectories) declared += t.to_json().dump() + "\n";
  PTXB_RETURN_IF_ERROR(write_file_atomic(root + "/trajectories.jsonl", declared));
  PTXB_RETURN_IF_ERROR(append_durably(turns_path(root), ""));  // exists from the start
  // plan.json last: its presence means the directory is complete and resumable.
  return write_file_atomic(plan_path, dump_pretty(plan_json));
}

}  // namespace

Result<std::unique_ptr<RunDirectory>> RunDirectory::open(const std::string& root,
                                                         const ExperimentPlan& plan, bool& resumed,
                                                         std::optional<ShardSpec> shard) {
  if (path_exists(root) && !is_directory(root))
    return make_error("usage", "--out {}: exists and is not a directory", root);
  PTXB_RETURN_IF_ERROR(make_directories(root));
  std::unique_ptr<RunDirectory> dir(new RunDirectory(root));
  dir->shard_ = shard;
  // Locked before anything is read: two runs started together must not both see "new". Shards
  // hold it for milliseconds, so waiting a little rides out shards starting together.
  FileLockOptions options;
  options.wait = shard ? kShardOpenWait : kDirectoryWait;
  PTXB_ASSIGN_OR_RETURN(FileLock directory_lock,
                        FileLock::acquire(root + "/.lock", "ptxbench run --out " + root, options));
  dir->directory_lock_.emplace(std::move(directory_lock));
  PTXB_RETURN_IF_ERROR(prepare_files(root, plan, resumed));
  PTXB_RETURN_IF_ERROR(dir->take_locks(shard));
  PTXB_RETURN_IF_ERROR(dir->load_turns());
  if (shard) dir->directory_lock_.reset();  // the shard lock is enough from here on
  return dir;
}

Status RunDirectory::prepare_sharded(const std::string& root, const ExperimentPlan& plan,
                                     int shard_count, bool& resumed) {
  if (path_exists(root) && !is_directory(root))
    return make_error("usage", "--out {}: exists and is not a directory", root);
  PTXB_RETURN_IF_ERROR(make_directories(root));
  FileLockOptions options;
  options.wait = kShardOpenWait;
  PTXB_ASSIGN_OR_RETURN(FileLock lock,
                        FileLock::acquire(root + "/.lock", "ptxbench run --out " + root, options));
  PTXB_RETURN_IF_ERROR(prepare_files(root, plan, resumed));
  PTXB_RETURN_IF_ERROR(record_shard_layout(root, shard_count));
  for (int i = 0; i < shard_count; ++i)  // Slurm writes each task's log there from the start
    PTXB_RETURN_IF_ERROR(make_directories(shard_dir(root, ShardSpec{i, shard_count})));
  return ok_status();
}

Status RunDirectory::take_locks(const std::optional<ShardSpec>& shard) {
  if (shard) {
    PTXB_RETURN_IF_ERROR(record_shard_layout(root_, shard->count));
    PTXB_RETURN_IF_ERROR(make_directories(shard_dir(root_, *shard)));
    // A predecessor killed on another node leaves a lock that turns stale only after
    // kLockStaleAfter: a resubmitted task waits that long rather than fail.
    FileLockOptions options;
    options.wait = kLockStaleAfter + std::chrono::seconds(30);
    PTXB_ASSIGN_OR_RETURN(
        FileLock lock,
        FileLock::acquire(shard_dir(root_, *shard) + "/lock",
                          fmt::format("ptxbench run --out {} --shard {}", root_, shard->arg()),
                          options));
    shard_locks_.push_back(std::move(lock));
    return append_durably(own_turns_path(), "");  // exists from the start, as turns.jsonl
  }
  // Unsharded over a sharded directory: it stands in for every shard, so none may be running.
  PTXB_ASSIGN_OR_RETURN(const std::optional<int> count, read_shard_layout(root_));
  for (int i = 0; count && i < *count; ++i) {
    const ShardSpec each{i, *count};
    PTXB_RETURN_IF_ERROR(make_directories(shard_dir(root_, each)));
    PTXB_ASSIGN_OR_RETURN(
        FileLock lock,
        FileLock::acquire(shard_dir(root_, each) + "/lock",
                          fmt::format("ptxbench run --out {} --shard {}", root_, each.arg())));
    shard_locks_.push_back(std::move(lock));
  }
  return ok_status();
}

std::string RunDirectory::own_turns_path() const {
  return shard_ ? shard_dir(root_, *shard_) + "/turns.jsonl" : turns_path(root_);
}

Result<Json> RunDirectory::saved_config(const std::string& root) {
  PTXB_ASSIGN_OR_RETURN(Json saved, read_json_file(root + "/plan.json"));
  Json config;
  Status read = FieldReader(saved).required("config", config).status();
  if (!read.ok()) return read.error().with_context(root + "/plan.json");
  return config;
}

Status RunDirectory::load_turns() {
  PTXB_ASSIGN_OR_RETURN(const auto files, run_turn_files(root_));
  for (const std::string& path : files) {
    PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxRunFileBytes));
    // A line without its newline was being appended when the process or machine died: it was
    // never committed, so it is cut off and the turn is redone. Only in our own file: another
    // shard's last line may be an append still in flight.
    if (const std::size_t keep = committed_jsonl_length(text); keep < text.size()) {
      if (path == own_turns_path() && ::truncate(path.c_str(), static_cast<off_t>(keep)) != 0)
        return make_error("io", "{}: cannot cut off the torn last line: {}", path,
                          std::strerror(errno));
      text.resize(keep);
    }
    PTXB_ASSIGN_OR_RETURN(auto records, parse_turns_jsonl(text, path));
    for (const auto& record : records)
      if (!finished_[record.key.trajectory].insert(record.turn).second)
        return make_error("parse", "{}: trajectory {} has turn {} twice", path,
                          record.key.trajectory, record.turn);
  }
  return ok_status();
}

std::set<int> RunDirectory::finished_turns(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = finished_.find(id);
  return it == finished_.end() ? std::set<int>{} : it->second;
}

std::size_t RunDirectory::finished_turn_count(const ExperimentPlan& plan) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t count = 0;
  for (const auto& t : plan.trajectories)
    if (auto it = finished_.find(t.id); it != finished_.end()) count += it->second.size();
  return count;
}

std::size_t RunDirectory::finished_turn_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t count = 0;
  for (const auto& [id, turns] : finished_) count += turns.size();
  return count;
}

Status RunDirectory::append_turn(const TurnRecord& record) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_[record.key.trajectory].count(record.turn))
    return make_error("internal", "turn {} of {} is already recorded", record.turn,
                      record.key.trajectory);
  PTXB_RETURN_IF_ERROR(append_durably(own_turns_path(), record.to_json().dump() + "\n"));
  finished_[record.key.trajectory].insert(record.turn);
  return ok_status();
}

std::string RunDirectory::kernel_file(const std::string& id, int turn) const {
  return fmt::format("{}/turns/{}/turn{}.cu", root_, id, turn);
}

Status RunDirectory::write_turn_files(const std::string& id, int turn, const std::string* kernel,
                                      const Json& detail) const {
  if (kernel) PTXB_RETURN_IF_ERROR(write_file_atomic(kernel_file(id, turn), *kernel));
  return write_file_atomic(fmt::format("{}/turns/{}/turn{}.json", root_, id, turn),
                           dump_pretty(detail));
}

Result<Json> RunDirectory::read_turn_detail(const std::string& id, int turn) const {
  return read_json_file(fmt::format("{}/turns/{}/turn{}.json", root_, id, turn));
}

Status RunDirectory::write_trajectory(const std::string& id, const Json& document) const {
  return write_file_atomic(fmt::format("{}/trajectories/{}.json", root_, id),
                           dump_pretty(document));
}

Result<std::optional<Json>> read_trajectory_file(const std::string& root, const std::string& id) {
  const std::string path = fmt::format("{}/trajectories/{}.json", root, id);
  if (!path_exists(path)) return std::optional<Json>{};
  // Not read_json_file: eight turns of long reasoning can pass its 8 MB cap.
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxRunFileBytes));
  PTXB_ASSIGN_OR_RETURN(Json json, parse_json(text, path));
  return std::optional<Json>{std::move(json)};
}

Result<std::optional<Json>> RunDirectory::read_trajectory(const std::string& id) const {
  return read_trajectory_file(root_, id);
}

Status RunDirectory::write_summary(const Json& summary) const {
  const std::string folder = shard_ ? shard_dir(root_, *shard_) : root_;
  return write_file_atomic(folder + "/summary.json", dump_pretty(summary));
}

}  // namespace ptxb
