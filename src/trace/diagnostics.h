// Validation findings for FlashInfer-Trace documents.
//
// Validation reports every problem it finds, not just the first, so that a user fixing a
// hand-written trace set sees the whole list in one run. Each finding names the file, the JSON
// path inside it ($.inputs.A.shape[1]) and what is wrong.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct Issue {
  std::string file;       // "definitions/gemm/gemm_n7168_k5120.json" or "x.jsonl:3"
  std::string json_path;  // "$.inputs.A.shape[1]"; empty when the file itself is the problem
  std::string message;    // what is wrong

  // "file: $.path: message" (parts that are empty are left out).
  std::string to_string() const;
  Json to_json() const;
};

class Diagnostics {
 public:
  explicit Diagnostics(std::string file = "") : file_(std::move(file)) {}

  // The file that following error() calls are attributed to.
  void set_file(std::string file) { file_ = std::move(file); }
  const std::string& file() const { return file_; }

  void error(const std::string& json_path, std::string message);
  // Records an Error from a lower layer (I/O, JSON parse) whose message already names the file.
  void add_error(const Error& error);
  void merge(const Diagnostics& other);

  bool ok() const { return issues_.empty(); }
  std::size_t size() const { return issues_.size(); }
  const std::vector<Issue>& issues() const { return issues_; }

  // All findings, one per line, as an Error with code "validation".
  Error to_error() const;

 private:
  std::string file_;
  std::vector<Issue> issues_;
};

}  // namespace ptxb
