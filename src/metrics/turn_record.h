// One agent turn as the metrics see it (design.md §3.7), and the run directory that holds them.
//
// The agent writes one TurnRecord per turn to RUN_DIR/turns.jsonl; `ptxbench report` reads any
// number of run directories. Only structured fields drive the metrics: the outcome of a turn is
// its PtxbStatus (or "no code"), never text matching on logs (the reference implementation's
// weak point). Format: docs/report.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "trace/trace.h"

namespace ptxb {

// Status string of a turn whose reply held no kernel (it has no PtxbStatus: nothing was run).
inline constexpr const char* kNoCodeStatus = "NO_CODE";

struct TokenUsage {
  std::int64_t prompt = 0;
  std::int64_t completion = 0;
  std::int64_t reasoning = 0;  // part of `completion` for APIs that report it separately
};

// Identifies a trajectory across run directories: the same trajectory id may recur under other
// models, tasks or prompt variants.
struct TrajectoryKey {
  std::string model;
  std::string arch;
  std::string definition;  // the task's definition name
  std::string workload;    // workload uuid
  std::string variant;     // prompt variant (knowledge-pack tag)
  std::string trajectory;  // trajectory id, unique within the four fields above

  auto operator<=>(const TrajectoryKey&) const = default;
};

struct TurnRecord {
  TrajectoryKey key;
  std::string workload_name;  // "gemm_n7168_k5120_M8192"; defaults to the workload uuid
  int turn = 0;               // 1-based index within the trajectory
  // No kernel extracted from the reply: `status` is nullopt and `no_code_reason` says why.
  bool kernel_present = false;
  std::string no_code_reason;
  std::optional<PtxbStatus> status;  // nullopt exactly when !kernel_present (NO_CODE)
  // The evaluation's machine-readable reason for the status ("gpu_skipped", "supervisor",
  // "numerical", ...); "" when none. Informational: metrics use `status` only.
  std::string reason;
  std::optional<double> speedup;  // reference / candidate; null when not measured
  // The speedup's 95 % bootstrap interval (eval/speedup_interval.h); absent when not computed.
  std::optional<double> speedup_low, speedup_high;
  // With --energy (eval/energy.h): the candidate's joules per call ÷ the reference's.
  std::optional<double> energy_ratio;
  // With --also-reference (eval/also_reference.h): the candidate's speedup over the second
  // reference (its median / the candidate's); absent unless it was measured.
  std::optional<double> also_reference_speedup;
  std::string target_instructions = "not_run";  // design.md §3.6 verdict (eval_types.h kInst*)
  TokenUsage tokens;
  double model_wall_s = 0;  // the LLM call
  double eval_wall_s = 0;   // compile + evaluation
  std::string run_dir;      // where it was loaded from (not serialized)

  bool correct() const { return status == PtxbStatus::kPassed; }
  // "PASSED", ..., or "NO_CODE".
  std::string status_name() const;

  Json to_json() const;
  // Validates every field; errors name the offending field ("$.turn: ...").
  static Result<TurnRecord> from_json(const Json& json);
};

// A trajectory: its key and its turns sorted by index. May hold no turns at all (the agent
// failed before the first reply); it still counts in every denominator.
struct Trajectory {
  TrajectoryKey key;
  std::string workload_name;
  std::string run_dir;
  std::vector<TurnRecord> turns;
};

// The turn files of a run directory: RUN_DIR/turns.jsonl (required), then the turns.jsonl of
// each shard folder RUN_DIR/shards/*/ (a sharded run, agent/shard.h) in name order. Each turn
// is in exactly one of them; together they are the run's turns.
Result<std::vector<std::string>> run_turn_files(const std::string& run_dir);

// Loads the turn files (run_turn_files) and RUN_DIR/trajectories.jsonl (optional: declares
// trajectories, including ones without turns) from each directory. Fails on a malformed line
// (naming file:line), a duplicate (trajectory, turn), or a trajectory declared twice. A torn
// last line of a turn file (no newline: the run was killed while appending it) was never
// committed: it is left out, as `run` does on resume, and a note saying so goes to `notes`.
Result<std::vector<Trajectory>> load_run_dirs(const std::vector<std::string>& run_dirs,
                                              std::vector<std::string>* notes = nullptr);

// Bytes of `jsonl` up to and including its last newline: the committed lines. Records are
// appended whole with one write(2) each, so anything after the last newline is a torn append.
std::size_t committed_jsonl_length(std::string_view jsonl);

// Parses the text of a turns.jsonl / trajectories.jsonl (for tests and the loader).
Result<std::vector<TurnRecord>> parse_turns_jsonl(const std::string& text,
                                                  const std::string& origin);

}  // namespace ptxb
