// JobStore in SQLite (the default, `ptxbench serve --db PATH`): WAL journal with
// synchronous=NORMAL, so a committed transition survives a killed process (kill -9, a crash);
// losing the last transactions on power loss is accepted. One connection behind a mutex: the
// service's transitions are short, and SQLite serialises writers anyway.
#pragma once

#include <memory>
#include <mutex>

#include "service/job_store.h"

struct sqlite3;

namespace ptxb::service {

class SqliteJobStore final : public JobStore {
 public:
  // Opens (creating) the database at `path` and its schema.
  static Result<std::unique_ptr<SqliteJobStore>> open(const std::string& path);
  ~SqliteJobStore() override;

  Result<InsertOutcome> insert(const Job& job) override;
  Result<std::optional<Job>> get(std::int64_t id) override;
  Result<std::optional<Job>> find_by_key(const std::string& owner, const std::string& key) override;
  Result<std::vector<Job>> list(const JobFilter& filter) override;
  Result<std::vector<Job>> unfinished() override;
  Result<bool> start(std::int64_t id, const std::string& worker, std::int64_t dispatch_seq,
                     double at) override;
  Result<bool> requeue(std::int64_t id, const std::string& reason) override;
  Result<bool> finish(std::int64_t id, JobState state, const std::string& reason,
                      const std::string& verdict, const std::string& result_json,
                      double at) override;
  Result<std::optional<std::string>> result(std::int64_t id) override;
  Result<int> purge_finished(double before) override;
  Result<std::vector<std::string>> live_artifacts() override;
  Result<std::int64_t> max_seq() override;
  Status add_canary(const std::string& worker, double milliseconds, double at) override;
  Result<std::vector<double>> canary_history(const std::string& worker, int count) override;

 private:
  explicit SqliteJobStore(sqlite3* db) : db_(db) {}
  Result<std::vector<Job>> query_jobs(const std::string& where_sql,
                                      const std::vector<std::string>& text_args,
                                      const std::vector<std::int64_t>& int_args);
  Status exec(const char* sql);

  sqlite3* db_;
  std::mutex mutex_;
};

}  // namespace ptxb::service
