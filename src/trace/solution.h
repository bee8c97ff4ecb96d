// FlashInfer-Trace Solution: an implementation of a definition (design.md §3.1). For PTXBench the
// language is "cuda" and the entry point "kernel.cu::run" (design.md §3.2), but any schema-valid
// solution is accepted so that other tools' sets validate.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "trace/diagnostics.h"

namespace ptxb {

struct SourceFile {
  std::string path;  // relative, no "..", unique within the solution
  std::string content;
};

struct BuildSpec {
  std::string language;                      // "cuda", "triton", "python", ...
  std::vector<std::string> target_hardware;  // non-empty
  std::string entry_point;                   // "file::symbol"
  std::vector<std::string> dependencies;
};

struct Solution {
  std::string name;
  std::string definition;
  std::string author;
  std::string description;
  BuildSpec spec;
  std::vector<SourceFile> sources;
  Json raw;

  // "kernel.cu" and "run" of "kernel.cu::run".
  std::string entry_file() const;
  std::string entry_symbol() const;
  const SourceFile* find_source(const std::string& path) const;
};

Solution parse_solution(const Json& document, Diagnostics& diagnostics);
Result<Solution> parse_solution(const Json& document, const std::string& origin);
Json solution_to_json(const Solution& solution);

}  // namespace ptxb
