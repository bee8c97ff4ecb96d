// The calibration canary: each GPU times a library reference (the GEMM task's cuBLASLt
// reference, through the same runner as candidates) at start and every N jobs, and compares it
// with that GPU's own history. A GPU whose canary drifts is drained (no jobs) and reported in
// health until a later canary agrees with the history again. This is the project's one canary
// component; the fidelity work reuses it.
//
// Why relative to the GPU's own history, with the median as baseline: GPUs of one model differ
// by a few percent among themselves, and the median ignores the odd slow sample that a
// transient (a clock ramp) gives.
#pragma once

#include <optional>
#include <vector>

#include "core/json_io.h"

namespace ptxb::service {

struct CanaryPolicy {
  // Jobs between two canaries on a GPU (0: only at start).
  int every_jobs = 200;
  // How far the canary may move from the history's median before the GPU is drained. 10 %:
  // the library reference's run-to-run spread on an idle H200 is about 1 % (the A/A runs of
  // bench/results/eval.md: 0.990-1.017), so 10 % is a changed GPU (throttled clocks, another
  // process), not noise; and a speedup read off a GPU that moved 10 % is off by as much.
  double max_drift = 0.10;
  // Samples the history must hold before a canary is judged; the first ones only build it.
  int min_history = 3;
  int history_size = 20;  // the latest samples kept for the baseline
  // A drained GPU repeats its canary this often, and serves again when it agrees.
  double recheck_seconds = 60;
};

struct CanaryVerdict {
  bool ok = true;                     // within max_drift, or history still being built
  std::optional<double> baseline_ms;  // the history's median, when judged
  std::optional<double> drift;        // |ms / baseline - 1|, when judged
  bool judged = false;

  Json to_json(double ms) const;
};

// Judges `ms` against `history` (oldest first). A pure function of its inputs.
CanaryVerdict judge_canary(const std::vector<double>& history, double ms,
                           const CanaryPolicy& policy);

}  // namespace ptxb::service
