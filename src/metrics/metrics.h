// The paper's metrics over agent turns, exactly as design.md §3.7 defines them.
//
// For a set of trajectories and a turn limit k, the window is turns 1..k of every trajectory and
// N = trajectories × k. A turn index absent from a trajectory (the trajectory stopped early, or
// never started) is a failure with outcome `missing`: the paper's protocol runs every trajectory
// to all its turns, so a shorter trajectory must not get a smaller denominator. Cᵢ = 1 only for
// PASSED; Iᵢ = 1 only for `dynamic_present` (an `unknown` check counts as not executed).
// INFRA_ERROR and INVALID_REFERENCE turns are failures too (the paper has no way to redo them),
// but they are counted separately so a harness problem is visible in every report.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/turn_record.h"

namespace ptxb {

// Default p values of the Fast_p curves: the paper's thresholds plus its 1.2 target speedup.
inline const std::vector<double> kDefaultFastPs = {0, 0.5, 0.8, 1.0, 1.2, 1.5, 2.0};
// The paper reports ≤1 / ≤4 / ≤8 turns.
inline const std::vector<int> kDefaultTurnLimits = {1, 4, 8};

// Turn outcomes from the structured status only (never from log text).
enum class Outcome {
  kNoCode,
  kForbidden,
  kCompileError,
  kMemoryError,
  kRuntimeError,
  kTimeout,
  kNumericalError,    // INCORRECT_NUMERICAL, INCORRECT_SHAPE, INCORRECT_DTYPE
  kIntegrityFailure,  // REWARD_HACK
  kCorrect,           // PASSED
  kInfraError,        // INFRA_ERROR, INVALID_REFERENCE: the harness or reference failed
  kMissing,           // the trajectory has no turn at this index
};
inline constexpr std::size_t kOutcomeCount = 11;
using OutcomeCounts = std::array<int, kOutcomeCount>;

std::string_view outcome_name(Outcome outcome);  // "no_code", ..., "missing"
Outcome classify_turn(const TurnRecord& turn);

// Every metric of one set of trajectories (one prompt variant, or all pooled) at one turn limit.
struct WindowMetrics {
  int turn_limit = 0;
  int n_trajectories = 0;
  int n_turns = 0;                   // N = n_trajectories × turn_limit
  int n_correct = 0;                 // ΣCᵢ
  int n_correct_inst = 0;            // Σ(CᵢIᵢ)
  double turn_correctness = 0;       // ΣCᵢ / N
  double inst_turn_correctness = 0;  // Σ(CᵢIᵢ) / N
  // max sᵢ over correct turns with a measured speedup; nullopt ("—") when there is none.
  std::optional<double> best_speedup;
  std::optional<double> inst_best_speedup;  // likewise over CᵢIᵢ = 1
  std::vector<double> fast_p;               // parallel to the p list: (1/N) Σ 1[Cᵢ ∧ sᵢ > p]
  std::vector<double> fast_inst_p;          // (1/N) Σ 1[Cᵢ ∧ Iᵢ ∧ sᵢ > p]
  // Trajectory level (the reference implementation's correctness_rate@k): share of
  // trajectories with at least one correct (resp. correct + dynamic_present) turn in the window.
  int n_trajectories_correct = 0;
  int n_trajectories_correct_inst = 0;
  double trajectory_rate = 0;
  double inst_trajectory_rate = 0;
  OutcomeCounts outcomes{};   // sums to n_turns
  int n_unknown_checks = 0;   // turns in the window whose check was `unknown`
  int n_unknown_correct = 0;  // ... of which correct (the ones the verdict could change)
  int n_infra = 0;            // INFRA_ERROR + INVALID_REFERENCE turns in the window
};

WindowMetrics compute_window(const std::vector<const Trajectory*>& trajectories, int turn_limit,
                             const std::vector<double>& ps);

// A metric over prompt variants: the mean of the per-variant values, with their min and max.
struct Spread {
  double mean = 0;
  double min = 0;
  double max = 0;
};

// Each field spread over the variants. Best speedups enter as 0 where a variant has none
// (design.md §3.7: "0 inside means"); the spread is nullopt only when no variant has one.
struct VariantSpread {
  Spread turn_correctness;
  Spread inst_turn_correctness;
  Spread trajectory_rate;
  Spread inst_trajectory_rate;
  std::optional<Spread> best_speedup;
  std::optional<Spread> inst_best_speedup;
  std::vector<Spread> fast_p;
  std::vector<Spread> fast_inst_p;
};

VariantSpread spread_over_variants(const std::vector<WindowMetrics>& per_variant);

struct LimitMetrics {
  int turn_limit = 0;
  std::vector<WindowMetrics> per_variant;  // parallel to GroupMetrics::variants
  VariantSpread over_variants;
  WindowMetrics pooled;  // all trajectories of all variants together
};

// One model × task (definition, workload) × arch.
struct GroupMetrics {
  std::string model;
  std::string arch;
  std::string definition;
  std::string workload;
  std::string workload_name;
  std::vector<std::string> run_dirs;  // distinct, in load order
  std::vector<std::string> variants;  // sorted
  int n_trajectories = 0;
  std::vector<LimitMetrics> limits;  // parallel to MetricsOptions::turn_limits
};

struct MetricsOptions {
  std::vector<int> turn_limits = kDefaultTurnLimits;
  std::vector<double> ps = kDefaultFastPs;
};

// The turn limits a run can fill: a window past the run's planned turns would count turns that
// were never meant to happen as missing failures (a 2-turn run at ≤8 would read 0.25 where every
// turn passed). Limits above `run_turns` become `run_turns`; sorted, unique. `run_turns` ≤ 0
// (unknown) keeps the request.
std::vector<int> limits_within_run(std::vector<int> requested, int run_turns);

// Groups the trajectories and computes everything above; groups sorted by model, task, arch.
std::vector<GroupMetrics> compute_metrics(const std::vector<Trajectory>& trajectories,
                                          const MetricsOptions& options);

Json window_to_json(const WindowMetrics& metrics, const std::vector<double>& ps);
Json group_to_json(const GroupMetrics& group, const MetricsOptions& options);

}  // namespace ptxb
