#include "service/sqlite_db.h"

namespace ptxb::service {

Result<sqlite3*> sqlite_open_durable(const std::string& path, const std::string& what) {
  sqlite3* db = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Error e = make_error("store", "{}: cannot open the {}: {}", path, what,
                         db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
    sqlite3_close(db);
    return e;
  }
  for (const char* pragma : {"PRAGMA journal_mode=WAL;", "PRAGMA synchronous=NORMAL;",
                             "PRAGMA busy_timeout=5000;", "PRAGMA foreign_keys=ON;"}) {
    if (auto applied = sqlite_exec(db, pragma); !applied.ok()) {
      sqlite3_close(db);
      return applied.error().with_context(path);
    }
  }
  return db;
}

Status sqlite_exec(sqlite3* db, const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    Error e = make_error("store", "job store: {}", message ? message : sqlite3_errmsg(db));
    sqlite3_free(message);
    return e;
  }
  return ok_status();
}

SqliteStatement::SqliteStatement(sqlite3* db, const std::string& sql,
                                 const std::vector<SqliteValue>& values)
    : db_(db) {
  rc_ = sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr);
  for (std::size_t i = 0; rc_ == SQLITE_OK && i < values.size(); ++i) {
    const int at = static_cast<int>(i + 1);
    if (auto* v = std::get_if<std::int64_t>(&values[i]))
      rc_ = sqlite3_bind_int64(stmt_, at, *v);
    else if (auto* d = std::get_if<double>(&values[i]))
      rc_ = sqlite3_bind_double(stmt_, at, *d);
    else if (auto* s = std::get_if<std::string>(&values[i]))
      rc_ = sqlite3_bind_text(stmt_, at, s->data(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
    else
      rc_ = sqlite3_bind_null(stmt_, at);
  }
}

Result<bool> SqliteStatement::step() {
  if (rc_ != SQLITE_OK) return error();
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  rc_ = rc;
  return error();
}

Status SqliteStatement::run() {
  while (true) {
    PTXB_ASSIGN_OR_RETURN(bool row, step());
    if (!row) return ok_status();
  }
}

std::string SqliteStatement::text(int column) const {
  const auto* p = sqlite3_column_text(stmt_, column);
  return p ? std::string(reinterpret_cast<const char*>(p),
                         static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)))
           : std::string();
}

Error SqliteStatement::error() const {
  return make_error("store", "job store: {}", sqlite3_errmsg(db_));
}

}  // namespace ptxb::service
