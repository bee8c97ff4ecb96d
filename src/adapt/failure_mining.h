// `ptxbench fixit mine`: failed turns of agent run directories, as the sources of Fixit repairs.
//
// A turn is a candidate when it is committed in RUN_DIR/turns.jsonl, its kernel file and detail
// file exist, and its status is one of the repairable error types:
//   compile    COMPILE_ERROR
//   runtime    RUNTIME_ERROR
//   memory     MEMORY_ERROR
//   numerical  INCORRECT_NUMERICAL, INCORRECT_SHAPE, INCORRECT_DTYPE
//   timeout    TIMEOUT
// Never taken: PASSED, NO_CODE (nothing to repair), FORBIDDEN (library use is not a kernel bug),
// REWARD_HACK (an integrity failure must not become training data), INFRA_ERROR and
// INVALID_REFERENCE (the harness failed, not the kernel).
//
// Selection is deterministic: candidates are deduplicated by canonical source
// (source_tokens.h; the first in (task, turn, trajectory id) order is kept), grouped by task ×
// error type, each group ordered by turn then trajectory id (early turns first: the base
// model's own first attempts, before the feedback loop shaped them), and each task's cap is
// filled round-robin over its error types, so a rare type is not crowded out by compile
// errors. Every turn looked at is either taken or listed as skipped with its reason.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "metrics/turn_record.h"

namespace ptxb::adapt {

// One failing turn with everything a repair needs: the prompt it was written under, the exact
// kernel, and the exact feedback the model read.
struct MinedFailure {
  std::string id;  // "<trajectory id>__turn<N>", file-name safe, unique over the mined set
  std::string run_dir;
  std::string trajectory;  // the trajectory id in its run directory
  TrajectoryKey key;
  std::string workload_name;
  std::string task;  // the task name (the definition)
  int turn = 0;
  std::string status;      // PtxbStatus name
  std::string error_type;  // compile, runtime, memory, numerical, timeout
  std::string system_prompt;
  std::string task_message;
  std::string kernel;
  std::string feedback;
  std::string canonical_hash;

  Json to_json() const;
  static Result<MinedFailure> from_json(const Json& json, const std::string& origin);
};

struct MiningOptions {
  int per_task_cap = 0;     // 0: no cap
  int max_source_turn = 0;  // 0: any turn; else turns 1..T only
  std::set<std::string> error_types = {"compile", "runtime", "memory", "numerical", "timeout"};
};

struct MiningResult {
  std::vector<MinedFailure> taken;
  Json manifest;  // options, counts, per task × type, every taken and skipped turn with reason
};

// The error type of a status name ("" when the status is never repaired).
std::string error_type_of(const std::string& status);
const std::vector<std::string>& all_error_types();

Result<MiningResult> mine_failures(const std::vector<std::string>& run_dirs,
                                   const MiningOptions& options);

// failures.jsonl as `mine` writes it.
Result<std::vector<MinedFailure>> read_failures(const std::string& path);

}  // namespace ptxb::adapt
