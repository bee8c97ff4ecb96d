// What a report shows beyond the turn records: where each run came from (provenance: plan.json
// and summary.json of a `ptxbench run` directory) and, per turn, what the trajectory viewer shows
// (RUN_DIR/turns/<trajectory>/turnN.json: the kernel, the verdicts, the feedback the model read).
// Every file here is optional: golden run directories hold turns.jsonl only, and the report then
// says what it could not find instead of failing.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "metrics/turn_record.h"

namespace ptxb {

struct RunProvenance {
  std::string run_dir;
  std::string date;                  // summary.json "updated"; "" without a summary
  std::string gpu;                   // the GPU the evaluations ran on, "" when none reported it
  std::string harness_version;       // plan.json "harness_version"
  std::string suite;                 // plan.json config.suite (or its task list)
  std::optional<int> planned_turns;  // plan.json config.turns
  int recorded_turns = 0;
  int gpu_skipped_turns = 0;       // turns whose GPU stages were skipped (reason gpu_skipped)
  std::vector<std::string> notes;  // "no plan.json", ...
};

// The provenance of one run directory, from plan.json, summary.json and the loaded turns.
RunProvenance load_provenance(const std::string& run_dir,
                              const std::vector<Trajectory>& trajectories);

// The largest turn count any run planned, else the largest turn index recorded (0 if none).
int run_turn_count(const std::vector<RunProvenance>& runs,
                   const std::vector<Trajectory>& trajectories);

// Target-instruction counts of one family, from the Nsight Compute check.
struct FamilyCount {
  std::string family;  // "GMMA", "TMA", ...
  long long static_count = 0;
  std::optional<long long> executed;  // warp-level instructions executed; nullopt: not measured
};

// One turn as the viewer shows it.
struct TurnDetail {
  int turn = 0;
  std::string source;       // the kernel evaluated; "" when not found (see source_note)
  std::string source_note;  // why the source is missing, or where it came from
  std::string compile_status, compile_message;
  std::string eval_message;  // "correct; 0.81 ms vs reference 0.73 ms: speedup 0.902x"
  std::string inst_verdict, inst_reason;
  std::vector<FamilyCount> families;
  std::string feedback;  // the text the model read after this turn
  std::string started, finished;
};

// Resolves a turnN.kernel.json reference (a kernel not copied into the run directory because
// it is a file of the repository) to its text; returns an error when it cannot.
using KernelRefResolver = std::function<Result<std::string>(const Json& kernel_ref)>;

// The details of every turn of `trajectory` that has a turnN.json; turns without one are left
// out (the viewer then shows the turn record alone).
std::map<int, TurnDetail> load_turn_details(const Trajectory& trajectory,
                                            const KernelRefResolver& resolve_kernel_ref);

}  // namespace ptxb
