// The scale-out part of `ptxbench run` (docs/cluster.md): its flags, their checks, and the
// coordinator front end of `--executor slurm|local` (cluster/scale_out.h). cmd_run.cc keeps
// the single-process run and the shard worker (`--shard I/N`).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "agent/experiment.h"
#include "core/result.h"

namespace ptxb::cli {

struct ScaleOutFlags {
  std::string executor;           // "" (this process), "local" or "slurm"
  std::vector<std::string> gpus;  // --gpus: this run's GPU slots, or the local executor's GPUs
  std::string shard;              // --shard I/N: run as that shard's worker
  int shards = 0;                 // --shards N (0: recorded, or the executor's default)
  std::string partition, gres, time_limit;
  int array_parallel = 0;
  std::vector<std::string> sbatch_args;

  // Usage errors for combinations that mean nothing (--partition without slurm, ...).
  Status check() const;
  // The flags again, for the "run the same command again" line.
  std::string resume_args() const;
};

void add_scale_out_options(CLI::App& app, ScaleOutFlags& flags);

// Prepares the run directory for `plan` (created or resumed, split into shards), submits its
// unfinished shards to the executor and follows them; at the end writes summary.json and
// prints the summary table, as a single-process run does. `worker_argv`: everything a worker
// runs but its shard (`ptxbench [--tasks-dir D] run --out DIR [...]`). Exit codes as `run`'s.
Result<int> run_with_executor(const ScaleOutFlags& flags, const ExperimentPlan& plan,
                              const std::string& out, const std::vector<std::string>& worker_argv);

}  // namespace ptxb::cli
