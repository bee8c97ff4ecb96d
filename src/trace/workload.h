// FlashInfer-Trace Workload: concrete values for a definition's var axes plus how each input is
// produced (design.md §3.1). Stored one per line in workloads/<op_type>/<definition>.jsonl, wrapped
// as {"definition": ..., "workload": {...}} (a trace without solution and evaluation).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "trace/definition.h"
#include "trace/diagnostics.h"

namespace ptxb {

struct InputSpec {
  enum class Kind { kRandom, kScalar, kSafetensors };
  Kind kind = Kind::kRandom;
  Json scalar_value;       // kScalar: a number or a boolean
  std::string path;        // kSafetensors: relative to the trace-set root
  std::string tensor_key;  // kSafetensors
  // PTXBench extension `"ptxbench": {"derive": "reference_forward"}` on a random input: the
  // tensor is not drawn at random but computed by the task's reference forward from the other
  // generated inputs (the backward tasks' O and L). Empty when absent.
  std::string derive;
};

std::string_view input_kind_name(InputSpec::Kind kind);

struct Workload {
  std::string uuid;
  std::vector<std::pair<std::string, std::int64_t>> axes;  // var axis -> value, document order
  std::vector<std::pair<std::string, InputSpec>> inputs;   // input name -> spec, document order
  Json raw;  // the "workload" object as read (order and unknown fields preserved)

  const InputSpec* find_input(const std::string& name) const;
};

// Parses the "workload" object found at `path` (e.g. "$.workload"); findings go to diagnostics.
Workload parse_workload(const Json& object, const std::string& path, Diagnostics& diagnostics);
Result<Workload> parse_workload(const Json& object, const std::string& origin,
                                const std::string& path);

// Cross-checks a workload against its definition: every var axis bound, only var axes bound,
// an input spec for every definition input and none for unknown names, scalar specs only for
// scalar inputs (and scalar inputs only by scalar specs).
void check_workload_against(const Workload& workload, const Definition& definition,
                            const std::string& path, Diagnostics& diagnostics);

Json workload_to_json(const Workload& workload);

}  // namespace ptxb
