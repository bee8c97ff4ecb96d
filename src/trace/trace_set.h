// A FlashInfer-Trace set on disk (design.md §3.1):
//   definitions/<op_type>/<name>.json     one Definition each
//   workloads/<op_type>/<name>.jsonl      workload traces of definition <name>
//   solutions/**.json                     one Solution each
//   traces/**.jsonl                       evaluated traces
// Loading checks every file and the cross-references between them, and reports ALL findings
// (file + JSON path + what is wrong), so a broken set is fixed in one pass.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "trace/definition.h"
#include "trace/diagnostics.h"
#include "trace/solution.h"
#include "trace/trace.h"

namespace ptxb {

struct TraceRecord {
  std::string file;  // path of the .jsonl file
  std::size_t line = 0;
  Trace trace;
};

struct TraceSet {
  std::string root;
  std::vector<Definition> definitions;  // sorted by name
  std::vector<TraceRecord> workloads;   // from workloads/
  std::vector<Solution> solutions;      // from solutions/
  std::vector<TraceRecord> traces;      // from traces/

  const Definition* find_definition(const std::string& name) const;
  const Solution* find_solution(const std::string& name) const;
  // The workload trace of `definition` with this uuid, or nullptr.
  const TraceRecord* find_workload(const std::string& definition, const std::string& uuid) const;
};

struct TraceSetLoad {
  TraceSet set;
  Diagnostics diagnostics;  // empty when the set is valid
};

// Loads and validates the set under `root`. A missing definitions/ folder is a finding; the
// other folders are optional.
TraceSetLoad load_trace_set(const std::string& root);

// What a single file holds (detected from its content, then its folder).
enum class TraceFileKind { kDefinition, kWorkload, kSolution, kTrace };
std::string_view trace_file_kind_name(TraceFileKind kind);

struct FileValidation {
  TraceFileKind kind = TraceFileKind::kDefinition;
  std::size_t documents = 0;  // 1 for .json, lines for .jsonl
  Diagnostics diagnostics;
};

// Validates one file. Workload and trace lines are also checked against their definition when
// the file sits inside a trace set (an ancestor folder holding definitions/).
FileValidation validate_trace_file(const std::string& path);

}  // namespace ptxb
