#include "service/upstream_ledger.h"

#include <random>

#include "service/sqlite_db.h"

namespace ptxb::service {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS upstream_jobs (
  job INTEGER PRIMARY KEY,
  backend TEXT NOT NULL DEFAULT '',
  round INTEGER NOT NULL DEFAULT 0,
  backend_job TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS upstream_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
)sql";

// 64 random bits as hex: unique enough among the fronts that share a backend.
std::string random_front_id() {
  std::random_device os;
  const std::uint64_t bits = (static_cast<std::uint64_t>(os()) << 32) ^ os();
  return fmt::format("{:016x}", bits);
}

Result<std::string> load_or_make_front_id(sqlite3* db) {
  {
    SqliteStatement q(db, "SELECT value FROM upstream_meta WHERE name = 'front_id'", {});
    PTXB_ASSIGN_OR_RETURN(bool row, q.step());
    if (row) return q.text(0);
  }
  const std::string id = random_front_id();
  SqliteStatement insert(db, "INSERT INTO upstream_meta (name, value) VALUES ('front_id', ?)",
                         {id});
  PTXB_RETURN_IF_ERROR(insert.run());
  return id;
}

}  // namespace

Result<std::unique_ptr<UpstreamLedger>> UpstreamLedger::open(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(sqlite3 * db, sqlite_open_durable(path, "upstream ledger"));
  auto close_on_error = [db](Error e) {
    sqlite3_close(db);
    return e;
  };
  if (auto schema = sqlite_exec(db, kSchema); !schema.ok())
    return close_on_error(schema.error().with_context(path));
  auto id = load_or_make_front_id(db);
  if (!id.ok()) return close_on_error(id.error().with_context(path));
  return std::unique_ptr<UpstreamLedger>(new UpstreamLedger(db, *id));
}

UpstreamLedger::~UpstreamLedger() {
  sqlite3_close(db_);
}

std::string UpstreamLedger::key(std::int64_t job, int round) const {
  return fmt::format("ptxb-front:{}:{}:{}", front_id_, job, round);
}

Status UpstreamLedger::assign(std::int64_t job, const std::string& backend, int round) {
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement q(db_,
                    "INSERT INTO upstream_jobs (job, backend, round, backend_job) "
                    "VALUES (?, ?, ?, '') ON CONFLICT(job) DO UPDATE SET "
                    "backend = excluded.backend, round = excluded.round, backend_job = ''",
                    {job, backend, static_cast<std::int64_t>(round)});
  return q.run();
}

Status UpstreamLedger::accepted(std::int64_t job, const std::string& backend_job) {
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement q(db_, "UPDATE upstream_jobs SET backend_job = ? WHERE job = ?",
                    {backend_job, job});
  return q.run();
}

Status UpstreamLedger::release(std::int64_t job, int round) {
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement q(db_,
                    "UPDATE upstream_jobs SET backend = '', backend_job = '', round = ? "
                    "WHERE job = ?",
                    {static_cast<std::int64_t>(round), job});
  return q.run();
}

Status UpstreamLedger::forget(std::int64_t job) {
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement q(db_, "DELETE FROM upstream_jobs WHERE job = ?", {job});
  return q.run();
}

Result<std::vector<Forwarding>> UpstreamLedger::all() {
  std::lock_guard<std::mutex> lock(mutex_);
  SqliteStatement q(db_, "SELECT job, backend, round, backend_job FROM upstream_jobs ORDER BY job",
                    {});
  std::vector<Forwarding> rows;
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, q.step());
    if (!row) break;
    rows.push_back(Forwarding{q.integer(0), q.text(1), static_cast<int>(q.integer(2)), q.text(3)});
  }
  return rows;
}

}  // namespace ptxb::service
