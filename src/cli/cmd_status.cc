// `ptxbench status RUN_DIR [--json]`
// Where a run stands (cluster/run_status.h): per shard its state, turns done and remaining,
// failures by status, the GPU-hours so far and an ETA from the measured turn times. For a run
// submitted to Slurm (`run --executor slurm`) the shards' array tasks are looked up with
// squeue/sacct when those are on PATH; without them the directory alone decides. Read-only:
// safe while the shards run.
// Exit codes: 0 printed; 1 unreadable run directory; 2 usage.
#include <iostream>

#include "cli/command.h"
#include "cluster/run_status.h"
#include "cluster/scale_out.h"
#include "cluster/slurm_scheduler.h"
#include "core/fs.h"
#include "core/process.h"

namespace ptxb::cli {
namespace {

struct StatusFlags {
  std::string run_dir;
  bool json = false;
};

// The scheduler's view when the run went to Slurm and Slurm answers here.
Result<SchedulerView> scheduler_view(const std::string& run_dir, std::string& note) {
  PTXB_ASSIGN_OR_RETURN(const auto records, read_job_records(run_dir));
  bool slurm = false;
  for (const auto& r : records) slurm = slurm || r.executor == "slurm";
  if (!slurm) return ask_scheduler(run_dir, nullptr);  // the job names, from the records
  if (!find_executable("squeue")) {
    note = "squeue is not on PATH: shard states from the run directory only";
    return ask_scheduler(run_dir, nullptr);
  }
  SystemProcessRunner processes;
  SlurmScheduler slurm_scheduler(processes);
  auto view = ask_scheduler(run_dir, &slurm_scheduler);
  if (!view.ok()) {
    note = "Slurm did not answer (" + view.error().message +
           "): shard states from the run "
           "directory only";
    return ask_scheduler(run_dir, nullptr);
  }
  return view;
}

Result<int> status_command(const StatusFlags& flags) {
  if (!is_directory(flags.run_dir))
    return make_error("usage", "{}: not a directory", flags.run_dir);
  std::string note;
  PTXB_ASSIGN_OR_RETURN(const SchedulerView view, scheduler_view(flags.run_dir, note));
  PTXB_ASSIGN_OR_RETURN(const RunStatus status, read_run_status(flags.run_dir, view));
  if (flags.json) {
    Json json = status.to_json();
    json["note"] = note;
    print_json(json);
    return 0;
  }
  std::cout << status.table() << std::flush;
  if (!note.empty()) std::cerr << "ptxbench: note: " << note << "\n";
  return 0;
}

}  // namespace

CommandSpec make_status_command() {
  return {
      "status",
      "Where a run stands: per shard state, turns done and remaining, failures, GPU-hours, "
      "ETA",
      [](CLI::App& app, const GlobalOptions&) -> CommandBody {
        auto flags = std::make_shared<StatusFlags>();
        app.add_option("RUN_DIR", flags->run_dir, "A run directory of `ptxbench run`")->required();
        app.add_flag("--json", flags->json, "Print the status as JSON");
        app.footer(
            "States: done, running (a live worker holds the shard's lock), queued (Slurm "
            "PENDING), stopped (cut off or ended with unfinished trajectories: rerun the "
            "run command to resubmit it), not_started. GPU-hours: the evaluations' wall "
            "time (each holds one GPU slot). ETA: the remaining turns at the measured "
            "evaluation time per turn over the shards running now.\n"
            "Examples:\n"
            "  ptxbench status runs/paper\n"
            "  ptxbench status runs/paper --json | jq '.shards[] | {shard, state}'\n"
            "Exit codes: 0 printed; 1 unreadable run directory; 2 usage.");
        return [flags]() -> Result<int> { return status_command(*flags); };
      }};
}

}  // namespace ptxb::cli
