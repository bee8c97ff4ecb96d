// tasks.json, the manifest of a task set: which definition + workload make each task and what
// PTXBench adds to them (docs/tasks.md, "Manifest format").
#pragma once

#include <string>
#include <vector>

#include "core/result.h"
#include "tasks/task.h"
#include "trace/diagnostics.h"
#include "trace/trace_set.h"

namespace ptxb {

// Parses `manifest` (the document of <set>/tasks.json) and resolves each entry against `set`:
// the definition must exist, the workload uuid must be one of its workloads, the families must
// fit the architecture, the cost model must apply. Findings go to `diagnostics`; only entries
// without findings are returned.
std::vector<Task> parse_task_manifest(const Json& manifest, const TraceSet& set,
                                      Diagnostics& diagnostics);

// Target families per architecture (design.md §3.6).
const std::vector<std::string>& families_for_arch(const std::string& arch);

}  // namespace ptxb
