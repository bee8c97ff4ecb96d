// The small SQLite layer the service's stores share (the job store, service/sqlite_job_store.h,
// and the front's ledger of forwarded jobs, service/upstream_ledger.h): opening a database with
// the durability settings, running a statement, and a prepared statement with its bindings.
// Errors carry code "store" and SQLite's own message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/result.h"

namespace ptxb::service {

using SqliteValue = std::variant<std::int64_t, double, std::string, std::nullptr_t>;

// Opens (creating) `path` in WAL mode with synchronous=NORMAL: a commit survives a killed
// process (the WAL is in the OS's page cache), not power loss (docs/service.md). busy_timeout:
// another connection (the front's second store, the sqlite3 CLI, a backup) never makes a write
// fail at once. `what` names the store in errors.
Result<sqlite3*> sqlite_open_durable(const std::string& path, const std::string& what);

// Runs `sql` (one or more statements without results).
Status sqlite_exec(sqlite3* db, const char* sql);

// A prepared statement with its bindings; finalized when it goes out of scope.
class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, const std::string& sql, const std::vector<SqliteValue>& values);
  ~SqliteStatement() { sqlite3_finalize(stmt_); }
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // True with a row, false when done; an error names SQLite's message.
  Result<bool> step();
  // Steps to the end: for statements that return no rows (INSERT, UPDATE, DELETE).
  Status run();
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  bool is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }
  std::string text(int column) const;
  int changes() const { return sqlite3_changes(db_); }

 private:
  Error error() const;
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

}  // namespace ptxb::service
