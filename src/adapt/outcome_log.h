// An append-only JSON Lines file of finished work items, each line an object with a unique
// "id": the commit point of `fixit repair` (repairs.jsonl), `fixit reason` (rationales.jsonl)
// and `kernelgen reason`. As with turns.jsonl (agent/run_directory.h), a line is written with
// one write(2) and fsync'd after everything it refers to is on disk, so an item without a line
// is redone by the next run and an item with one never is; a torn last line (a kill mid-append)
// is cut off when the log is opened.
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::adapt {

class OutcomeLog {
 public:
  // Opens (creating if absent) `path`; fails naming path:line on a malformed committed line or
  // a duplicate id.
  static Result<std::unique_ptr<OutcomeLog>> open(const std::string& path);

  bool contains(const std::string& id) const;
  std::map<std::string, Json> entries() const;  // by id
  // Thread-safe; fails on an id already committed.
  Status append(const Json& entry);

 private:
  explicit OutcomeLog(std::string path) : path_(std::move(path)) {}
  std::string path_;
  mutable std::mutex mutex_;
  std::map<std::string, Json> entries_;
};

}  // namespace ptxb::adapt
