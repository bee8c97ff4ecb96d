#include "service/sqlite_job_store.h"

#include "service/sqlite_db.h"

namespace ptxb::service {
namespace {

// One row of `jobs`, in this column order everywhere a Job is read.
constexpr const char* kJobColumns =
    "id, owner, idem_key, operation, task, arch, artifact, source_name, options, state, reason, "
    "verdict, attempts, submitted_at, started_at, finished_at, worker, submit_seq, dispatch_seq, "
    "prebuilt";

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS jobs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  owner TEXT NOT NULL,
  idem_key TEXT,
  operation TEXT NOT NULL,
  task TEXT NOT NULL,
  arch TEXT NOT NULL,
  artifact TEXT NOT NULL,
  source_name TEXT NOT NULL,
  options TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  verdict TEXT NOT NULL DEFAULT '',
  attempts INTEGER NOT NULL DEFAULT 0,
  submitted_at REAL NOT NULL,
  started_at REAL NOT NULL DEFAULT 0,
  finished_at REAL NOT NULL DEFAULT 0,
  worker TEXT NOT NULL DEFAULT '',
  submit_seq INTEGER NOT NULL,
  dispatch_seq INTEGER NOT NULL DEFAULT 0,
  result TEXT,
  prebuilt TEXT);
CREATE UNIQUE INDEX IF NOT EXISTS jobs_idem ON jobs(owner, idem_key) WHERE idem_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, submit_seq);
CREATE INDEX IF NOT EXISTS jobs_owner ON jobs(owner, id);
CREATE TABLE IF NOT EXISTS canary (
  worker TEXT NOT NULL, at REAL NOT NULL, ms REAL NOT NULL);
CREATE INDEX IF NOT EXISTS canary_worker ON canary(worker, at);
)sql";

using Statement = SqliteStatement;
using Value = SqliteValue;

}  // namespace

Status SqliteJobStore::exec(const char* sql) {
  return sqlite_exec(db_, sql);
}

Result<std::unique_ptr<SqliteJobStore>> SqliteJobStore::open(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(sqlite3 * db, sqlite_open_durable(path, "job store"));
  std::unique_ptr<SqliteJobStore> store(new SqliteJobStore(db));
  auto schema = store->exec(kSchema);
  if (!schema.ok()) return schema.error().with_context(path);
  // A store created before the compile split lacks the prebuilt column: added in place (NULL
  // for every older job: it was a source upload).
  bool has_prebuilt = false;
  {
    Statement columns(store->db_, "PRAGMA table_info(jobs)", {});
    while (true) {
      auto row = columns.step();
      if (!row.ok()) return row.error().with_context(path);
      if (!*row) break;
      if (columns.text(1) == "prebuilt") has_prebuilt = true;
    }
  }
  if (!has_prebuilt) {
    auto added = store->exec("ALTER TABLE jobs ADD COLUMN prebuilt TEXT;");
    if (!added.ok()) return added.error().with_context(path);
  }
  return store;
}

SqliteJobStore::~SqliteJobStore() {
  sqlite3_close(db_);
}

Result<std::vector<Job>> SqliteJobStore::query_jobs(const std::string& where_sql,
                                                    const std::vector<std::string>& text_args,
                                                    const std::vector<std::int64_t>& int_args) {
  std::vector<Value> values;
  for (const auto& t : text_args) values.emplace_back(t);
  for (const auto& i : int_args) values.emplace_back(i);
  Statement q(db_, std::string("SELECT ") + kJobColumns + " FROM jobs " + where_sql, values);
  std::vector<Job> jobs;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    Job job;
    job.id = q.integer(0);
    job.owner = q.text(1);
    job.idempotency_key = q.is_null(2) ? "" : q.text(2);
    job.operation = q.text(3);
    job.task = q.text(4);
    job.arch = q.text(5);
    job.artifact = q.text(6);
    job.source_name = q.text(7);
    auto options = parse_json(q.text(8), "job store: options of job " + std::to_string(job.id));
    if (!options.ok()) return options.error();
    job.options = std::move(options).value();
    auto state = parse_job_state(q.text(9));
    if (!state) return make_error("store", "job store: job {} has state \"{}\"", job.id, q.text(9));
    job.state = *state;
    job.reason = q.text(10);
    job.verdict = q.text(11);
    job.attempts = static_cast<int>(q.integer(12));
    job.submitted_at = q.real(13);
    job.started_at = q.real(14);
    job.finished_at = q.real(15);
    job.worker = q.text(16);
    job.submit_seq = q.integer(17);
    job.dispatch_seq = q.integer(18);
    if (!q.is_null(19)) {
      auto prebuilt =
          parse_json(q.text(19), "job store: prebuilt of job " + std::to_string(job.id));
      if (!prebuilt.ok()) return prebuilt.error();
      job.prebuilt = std::move(prebuilt).value();
    }
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Result<InsertOutcome> SqliteJobStore::insert(const Job& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!job.idempotency_key.empty()) {
    PTXB_ASSIGN_OR_RETURN(auto existing, query_jobs("WHERE owner = ? AND idem_key = ?",
                                                    {job.owner, job.idempotency_key}, {}));
    if (!existing.empty()) return InsertOutcome{existing.front(), false};
  }
  Statement q(db_,
              "INSERT INTO jobs (owner, idem_key, operation, task, arch, artifact, source_name, "
              "options, state, reason, submitted_at, submit_seq, prebuilt) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              {job.owner, job.idempotency_key.empty() ? Value(nullptr) : Value(job.idempotency_key),
               job.operation, job.task, job.arch, job.artifact, job.source_name, job.options.dump(),
               std::string(job_state_name(job.state)), job.reason, job.submitted_at, job.submit_seq,
               job.prebuilt.is_null() ? Value(nullptr) : Value(job.prebuilt.dump())});
  PTXB_RETURN_IF_ERROR(q.step());
  InsertOutcome out{job, true};
  out.job.id = sqlite3_last_insert_rowid(db_);
  return out;
}

Result<std::optional<Job>> SqliteJobStore::get(std::int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  PTXB_ASSIGN_OR_RETURN(auto jobs, query_jobs("WHERE id = ?", {}, {id}));
  if (jobs.empty()) return std::optional<Job>();
  return std::optional<Job>(std::move(jobs.front()));
}

Result<std::optional<Job>> SqliteJobStore::find_by_key(const std::string& owner,
                                                       const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  PTXB_ASSIGN_OR_RETURN(auto jobs,
                        query_jobs("WHERE owner = ? AND idem_key = ?", {owner, key}, {}));
  if (jobs.empty()) return std::optional<Job>();
  return std::optional<Job>(std::move(jobs.front()));
}

Result<std::vector<Job>> SqliteJobStore::list(const JobFilter& filter) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> texts;
  // Text parameters are bound first (query_jobs' order), so they come first in the clause.
  std::string text_clause;
  if (!filter.owner.empty()) {
    text_clause += "owner = ? AND ";
    texts.push_back(filter.owner);
  }
  if (filter.state) {
    text_clause += "state = ? AND ";
    texts.push_back(std::string(job_state_name(*filter.state)));
  }
  return query_jobs("WHERE " + text_clause + "id > ? ORDER BY id LIMIT ?", texts,
                    {filter.after_id, static_cast<std::int64_t>(filter.limit)});
}

Result<std::vector<Job>> SqliteJobStore::unfinished() {
  std::lock_guard<std::mutex> lock(mutex_);
  return query_jobs("WHERE state IN ('queued', 'running') ORDER BY submit_seq", {}, {});
}

Result<bool> SqliteJobStore::start(std::int64_t id, const std::string& worker,
                                   std::int64_t dispatch_seq, double at) {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_,
              "UPDATE jobs SET state = 'running', worker = ?, dispatch_seq = ?, started_at = ?, "
              "attempts = attempts + 1 WHERE id = ? AND state = 'queued'",
              {worker, dispatch_seq, at, id});
  PTXB_RETURN_IF_ERROR(q.step());
  return q.changes() == 1;
}

Result<bool> SqliteJobStore::requeue(std::int64_t id, const std::string& reason) {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_,
              "UPDATE jobs SET state = 'queued', reason = ? WHERE id = ? AND state = 'running'",
              {reason, id});
  PTXB_RETURN_IF_ERROR(q.step());
  return q.changes() == 1;
}

Result<bool> SqliteJobStore::finish(std::int64_t id, JobState state, const std::string& reason,
                                    const std::string& verdict, const std::string& result_json,
                                    double at) {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_,
              "UPDATE jobs SET state = ?, reason = ?, verdict = ?, result = ?, finished_at = ? "
              "WHERE id = ? AND state IN ('queued', 'running')",
              {std::string(job_state_name(state)), reason, verdict,
               result_json.empty() ? Value(nullptr) : Value(result_json), at, id});
  PTXB_RETURN_IF_ERROR(q.step());
  return q.changes() == 1;
}

Result<std::optional<std::string>> SqliteJobStore::result(std::int64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_, "SELECT result FROM jobs WHERE id = ?", {id});
  PTXB_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row || q.is_null(0)) return std::optional<std::string>();
  return std::optional<std::string>(q.text(0));
}

Result<int> SqliteJobStore::purge_finished(double before) {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_,
              "DELETE FROM jobs WHERE state IN ('done', 'failed', 'cancelled') AND finished_at < ?",
              {before});
  PTXB_RETURN_IF_ERROR(q.step());
  return q.changes();
}

Result<std::vector<std::string>> SqliteJobStore::live_artifacts() {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_, "SELECT DISTINCT artifact, prebuilt FROM jobs", {});
  std::vector<std::string> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    out.push_back(q.text(0));
    if (q.is_null(1)) continue;
    // The compile split's binary and PTX are the job's artifacts too.
    auto prebuilt = parse_json(q.text(1), "job store: prebuilt");
    if (!prebuilt.ok() || !prebuilt->is_object()) continue;
    for (const char* field : {"shared_object", "ptx"})
      if (prebuilt->contains(field) && (*prebuilt)[field].is_string())
        out.push_back((*prebuilt)[field].get<std::string>());
  }
  return out;
}

Result<std::int64_t> SqliteJobStore::max_seq() {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_, "SELECT MAX(MAX(submit_seq), MAX(dispatch_seq)) FROM jobs", {});
  PTXB_ASSIGN_OR_RETURN(bool row, q.step());
  if (!row || q.is_null(0)) return std::int64_t{0};
  return q.integer(0);
}

Status SqliteJobStore::add_canary(const std::string& worker, double milliseconds, double at) {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_, "INSERT INTO canary (worker, at, ms) VALUES (?, ?, ?)",
              {worker, at, milliseconds});
  PTXB_RETURN_IF_ERROR(q.step());
  return ok_status();
}

Result<std::vector<double>> SqliteJobStore::canary_history(const std::string& worker, int count) {
  std::lock_guard<std::mutex> lock(mutex_);
  Statement q(db_,
              "SELECT ms FROM (SELECT ms, at FROM canary WHERE worker = ? ORDER BY at DESC "
              "LIMIT ?) ORDER BY at",
              {worker, static_cast<std::int64_t>(count)});
  std::vector<double> out;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    out.push_back(q.real(0));
  }
  return out;
}

}  // namespace ptxb::service
