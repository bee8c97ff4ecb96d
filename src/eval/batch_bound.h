// The batch bound (docs/integrity.md "The batch bound"): the one time measurement no candidate
// can move, and the rules that tie the in-process (CUPTI) times to it.
//
// A supervisor can bound from above the real elapsed time of work it did not launch, never from
// below. It writes fresh inputs for K calls, poisons K output sets, stamps t0, sends one batch
// request, and ends the bracket when a snapshot of the outputs taken from its own context has
// completed; all K outputs are then verified. U = (bracket - O) / K, with the overhead O
// calibrated on the reference runner (no candidate code) with empty batches.
//
// Pure logic and the trace record; the measurement is src/supervisor/stage_bound.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct BatchBoundPolicy {
  // m: a CUPTI median below (1 - m)·U is replaced by U. Measured on the H200 (bench/results/
  // integrity_suite.md): honest kernels and the libraries sit within a few percent of U.
  double margin = 0.05;
  // Below this fraction of U the CUPTI times cannot be honest: REWARD_HACK below_batch_bound.
  double hack_fraction = 0.5;
  // K is the smallest count with O / (K · t) ≤ this, t the reference's median, within
  // [min_calls, max_calls].
  double overhead_target = 0.01;
  int min_calls = 2;
  int max_calls = 32;
  // And at most this long (K · t): a longer batch drifts further from the sampled calls' clocks
  // and costs more verification. Not shorter: with 15 ms (K = 3 for attention backward) one
  // honest expert kernel fell to CUPTI/B = 0.937 on the H200 (the reference's own ratio is
  // noisier in a 3-call batch); with 30 ms the 15 evaluations measured stayed ≥ 0.961.
  double max_batch_ms = 30.0;
  int overhead_samples = 5;   // empty batches for O (median)
  int reference_batches = 2;  // U of the reference (minimum)
  int candidate_batches = 2;  // U of the candidate (minimum of the valid ones)
  int max_void_batches = 3;   // then REWARD_HACK batch_void
  double void_factor = 2.0;   // a write phase above factor × calibration + slack is void
  double void_slack_ms = 5.0;
  // The overhead assumed before O is measured, to size the input sets (more than O ever was).
  double overhead_estimate_ms = 0.25;
};

// The calls per batch for an overhead O and a per-call time t (both ms): O / (K·t) ≤ the target,
// K·t ≤ max_batch_ms, within [min_calls, max_calls].
int batch_calls(double overhead_ms, double call_ms, const BatchBoundPolicy& policy);
// U from one bracket: (bracket - O) / K, never negative.
double bound_per_call_ms(double bracket_ms, double overhead_ms, int calls);
// True when a write phase is clearly slower than its calibration.
bool write_phase_void(double phase_ms, double calibration_ms, const BatchBoundPolicy& policy);

// The bound in CUPTI terms: U × min(1, r), r = the reference's CUPTI median / its own U, both
// measured in this evaluation with no candidate code running. On the H200 r is below 1 (0.94
// for the GEMM library): back-to-back calls run at the sustained clock and carry the launch
// gaps, while the CUPTI samples are spaced and count kernel time only. Without the scaling an
// honest kernel would sit at r·U and lose its own time; with it, a forged time gains at most m.
// r is capped at 1, so the bound is never looser than U itself. No reference U: U.
double scaled_bound_ms(double u_ms, std::optional<double> reference_u_ms,
                       std::optional<double> reference_cupti_ms);

enum class BoundJudgement { kCupti, kBound, kForged };
// Against the scaled bound B: kCupti: the CUPTI median stands; kBound: it is below (1 - m)·B,
// B is used; kForged: it is below hack_fraction·B. B = 0 (nothing measured) gives kCupti.
BoundJudgement judge_against_bound(double cupti_ms, double bound_ms,
                                   const BatchBoundPolicy& policy);

// What the trace records (workloads[].integrity.batch_bound).
struct BatchBoundRecord {
  int calls = 0;           // K
  double overhead_ms = 0;  // O, median of the empty batches on the reference runner
  double margin = 0;       // m
  std::optional<double> reference_u_ms;
  std::optional<double> reference_cupti_median_ms;
  double write_calibration_ms = 0;   // the slowest reference write phase
  std::vector<double> u_ms_samples;  // the candidate's valid batches
  int void_batches = 0;
  bool write_check = true;      // off when other processes share the GPU (stage_bound.cc)
  std::string write_check_off;  // why it was off
  double u_ms = 0;              // the candidate's U: the minimum of the valid batches
  double bound_ms = 0;          // U scaled by the reference's CUPTI/U ratio (scaled_bound_ms)
  double cupti_median_ms = 0;   // the candidate's CUPTI median, before any replacement
  std::string time_used;        // "cupti" | "bound"
  // The honest speed: the reference's median / B (U in the reference's CUPTI terms); absent
  // without a reference. What the speedup would be if every reported time were forged.
  std::optional<double> honest_speedup;
  double cost_ms = 0;  // wall time of the candidate's batches

  Json to_json() const;
  static Result<BatchBoundRecord> from_json(const Json& json);
};

}  // namespace ptxb
