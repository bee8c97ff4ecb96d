#include "cli/run_executor.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "agent/experiment_runner.h"
#include "agent/run_directory.h"
#include "agent/shard.h"
#include "cluster/local_scheduler.h"
#include "cluster/scale_out.h"
#include "cluster/slurm_scheduler.h"
#include "core/clock.h"
#include "core/fs.h"
#include "core/interrupt.h"
#include "core/strings.h"

namespace ptxb::cli {
namespace {

// One shard per trajectory at most; past 32 a shard of a paper-size study (1680 trajectories)
// still holds about 50 trajectories, a few hours on one GPU, and the array stays small enough
// to read in squeue.
constexpr int kDefaultSlurmShards = 32;

Result<int> choose_shard_count(const ScaleOutFlags& flags, const ExperimentPlan& plan,
                               const std::string& out) {
  PTXB_ASSIGN_OR_RETURN(const std::optional<int> recorded, read_shard_layout(out));
  const int trajectories = static_cast<int>(plan.trajectories.size());
  if (flags.shards > 0) {
    if (flags.shards > trajectories)
      return make_error("usage", "--shards {}: the plan has only {}", flags.shards,
                        count_noun(trajectories, "trajectory"));
    return flags.shards;
  }
  if (recorded) return *recorded;
  if (flags.executor == "local") return std::min(trajectories, static_cast<int>(flags.gpus.size()));
  return std::min(trajectories, kDefaultSlurmShards);
}

std::string stamp() {
  return iso_utc_now().substr(11, 8);  // HH:MM:SS of the ISO time
}

}  // namespace

Status ScaleOutFlags::check() const {
  const bool slurm_only = !partition.empty() || !gres.empty() || !time_limit.empty() ||
                          array_parallel > 0 || !sbatch_args.empty();
  if (slurm_only && executor != "slurm")
    return make_error("usage",
                      "--partition, --gres, --time, --array-parallel and --sbatch-arg place Slurm "
                      "array tasks: they need --executor slurm");
  if (!shard.empty() && !executor.empty())
    return make_error("usage",
                      "--shard I/N runs one shard here (a worker); --executor starts "
                      "workers: give one of them");
  if (shards > 0 && executor.empty())
    return make_error("usage", "--shards N needs --executor slurm or local");
  if (executor == "local" && gpus.empty())
    return make_error("usage", "--executor local runs one worker per GPU: give --gpus 0,1,...");
  if (executor == "slurm" && !gpus.empty())
    return make_error("usage",
                      "--gpus picks GPUs of this machine; on Slurm ask for them with "
                      "--gres gpu:1");
  for (const auto& gpu : gpus)
    if (gpu.empty() || gpu.find_first_not_of("0123456789") != std::string::npos)
      return make_error("usage", "--gpus {}: expected GPU indices such as 0,1,2", join(gpus, ","));
  return ok_status();
}

std::string ScaleOutFlags::resume_args() const {
  std::string args = " --executor " + executor;
  if (!gpus.empty()) args += " --gpus " + join(gpus, ",");
  if (!partition.empty()) args += " --partition " + partition;
  if (!gres.empty()) args += " --gres " + gres;
  if (!time_limit.empty()) args += " --time " + time_limit;
  if (array_parallel > 0) args += fmt::format(" --array-parallel {}", array_parallel);
  for (const auto& arg : sbatch_args) args += " --sbatch-arg=" + arg;
  return args;
}

void add_scale_out_options(CLI::App& app, ScaleOutFlags& flags) {
  const char* group = "Scale-out (docs/cluster.md)";
  app.add_option("--executor", flags.executor,
                 "Run the plan as shards: slurm (one sbatch job array, a shard per array task) "
                 "or local (one worker per GPU of --gpus); the same command again resubmits the "
                 "unfinished shards")
      ->check(CLI::IsMember({"local", "slurm"}))
      ->group(group);
  app.add_option("--gpus", flags.gpus,
                 "GPU indices, comma-separated: this run's GPU evaluation slots (slot i on the "
                 "i-th; sets concurrency.gpu), or with --executor local one worker per GPU")
      ->delimiter(',')
      ->group(group);
  app.add_option("--shard", flags.shard,
                 "Run shard I of N (0-based) of the run directory: what each array task runs")
      ->group(group);
  app.add_option("--shards", flags.shards,
                 "Split the plan into N shards by trajectory (default: the recorded split; "
                 "slurm: up to 32; local: one per GPU)")
      ->check(CLI::Range(1, kMaxShards))
      ->group(group);
  app.add_option("--partition", flags.partition, "Slurm partition of the array tasks")
      ->group(group);
  app.add_option("--gres", flags.gres, "Slurm generic resources per task, e.g. gpu:1")
      ->group(group);
  app.add_option("--time", flags.time_limit, "Slurm time limit per task, e.g. 04:00:00")
      ->group(group);
  app.add_option("--array-parallel", flags.array_parallel,
                 "At most N array tasks at once (sbatch --array=...%N)")
      ->check(CLI::Range(1, kMaxShards))
      ->group(group);
  app.add_option("--sbatch-arg", flags.sbatch_args,
                 "One more sbatch argument, e.g. --sbatch-arg=--account=proj; repeatable")
      ->allow_extra_args(false)
      ->group(group);
}

Result<int> run_with_executor(const ScaleOutFlags& flags, const ExperimentPlan& plan,
                              const std::string& out, const std::vector<std::string>& worker_argv) {
  PTXB_ASSIGN_OR_RETURN(const int shard_count, choose_shard_count(flags, plan, out));
  bool resumed = false;
  PTXB_RETURN_IF_ERROR(RunDirectory::prepare_sharded(out, plan, shard_count, resumed));
  // The same command again: the directory, how turns are judged (the workers' options after
  // `--out DIR`: --evaluator, --compile-only, ...) and the executor's flags.
  std::string again = "ptxbench run --out " + out;
  const auto at = std::find(worker_argv.begin(), worker_argv.end(), "--out");
  for (auto it = at == worker_argv.end() ? at : at + 2; it < worker_argv.end(); ++it)
    again += " " + *it;
  again += flags.resume_args();
  std::cerr << fmt::format(
      "run directory: {} ({}; {} shards on {}; run `{}` again to resubmit "
      "unfinished shards; `ptxbench status {}` to follow)\n",
      out, resumed ? "resuming" : "new", shard_count, flags.executor, again, out);

  SystemProcessRunner processes;
  std::unique_ptr<Scheduler> scheduler;
  if (flags.executor == "slurm")
    scheduler = std::make_unique<SlurmScheduler>(processes);
  else
    scheduler = std::make_unique<LocalScheduler>(processes, flags.gpus);
  ScaleOutOptions options;
  options.job.run_root = out;
  options.job.shard_count = shard_count;
  options.job.name = "ptxbench:" + std::filesystem::path(out).filename().string();
  options.job.worker_argv = worker_argv;
  options.job.partition = flags.partition;
  options.job.gres = flags.gres;
  options.job.time_limit = flags.time_limit;
  options.job.array_parallel = flags.array_parallel;
  options.job.extra_args = flags.sbatch_args;
  // The local executor's workers end without a scheduler in between: look more often.
  if (flags.executor == "local") options.poll = std::chrono::milliseconds(1000);
  options.note = [](const std::string& line) {
    std::cerr << "[" << stamp() << "] " << line << "\n";
  };
  PTXB_ASSIGN_OR_RETURN(const ScaleOutOutcome outcome, run_scaled_out(*scheduler, options));
  scheduler.reset();  // the local executor's workers are waited for (killed if interrupted)

  if (outcome.interrupted) {
    const int signal_number = interrupt_signal();
    std::cerr << fmt::format(
        "ptxbench: error: interrupted by {}: {}; resume with: {}\n", signal_name(signal_number),
        flags.executor == "slurm" ? "the job array keeps running (scancel it to stop it); "
                                    "`ptxbench status " +
                                        out + "` follows it"
                                  : "the workers were stopped, nothing half-done recorded",
        again);
    return 128 + signal_number;
  }
  if (!outcome.status.complete()) {
    std::vector<std::string> stopped;
    for (const auto& shard : outcome.status.shards)
      if (shard.state != "done")
        stopped.push_back(fmt::format("{}: {}{}", shard.name, shard.state,
                                      shard.detail.empty() ? "" : " (" + shard.detail + ")"));
    return make_error("incomplete",
                      "{} of {} did not finish ({}); `ptxbench status {}` has the details; "
                      "resubmit them with: {}",
                      stopped.size(), count_noun(shard_count, "shard"), join(stopped, "; "), out,
                      again);
  }
  PTXB_ASSIGN_OR_RETURN(const RunSummary summary, summarize_run(plan, out));
  PTXB_RETURN_IF_ERROR(write_file_atomic(out + "/summary.json", dump_pretty(summary.json)));
  std::cout << summary.table << std::flush;
  std::cerr << fmt::format("summary: {}/summary.json; metrics: ptxbench report {}\n", out, out);
  if (summary.unfinished > 0)
    return make_error("incomplete",
                      "{} of {} stopped on model or evaluation failures; "
                      "resubmit with: {}",
                      summary.unfinished,
                      count_noun(static_cast<long long>(plan.trajectories.size()), "trajectory"),
                      again);
  return summary.gpu_skipped_turns > 0 ? 3 : 0;
}

}  // namespace ptxb::cli
