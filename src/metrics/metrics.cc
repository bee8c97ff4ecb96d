#include "metrics/metrics.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "eval/eval_types.h"

namespace ptxb {
namespace {

constexpr std::array<std::string_view, kOutcomeCount> kOutcomeNames = {
    "no_code",       "forbidden",   "compile_error",   "memory_error",
    "runtime_error", "timeout",     "numerical_error", "integrity_failure",
    "correct",       "infra_error", "missing"};

double ratio(int numerator, int denominator) {
  return denominator == 0 ? 0.0 : static_cast<double>(numerator) / denominator;
}

Spread spread_of(const std::vector<double>& values) {
  if (values.empty()) return {};
  Spread spread{0, values.front(), values.front()};
  for (double value : values) {
    spread.mean += value;
    spread.min = std::min(spread.min, value);
    spread.max = std::max(spread.max, value);
  }
  spread.mean /= static_cast<double>(values.size());
  return spread;
}

// Best speedups spread with "none" as 0; nullopt when no variant has a value.
std::optional<Spread> spread_of_best(const std::vector<std::optional<double>>& values) {
  bool any = false;
  std::vector<double> zeroed;
  for (const auto& value : values) {
    any |= value.has_value();
    zeroed.push_back(value.value_or(0.0));
  }
  if (!any) return std::nullopt;
  return spread_of(zeroed);
}

Json optional_json(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json spread_json(const Spread& spread) {
  return {{"mean", spread.mean}, {"min", spread.min}, {"max", spread.max}};
}

Json optional_spread_json(const std::optional<Spread>& spread) {
  return spread ? spread_json(*spread) : Json(nullptr);
}

Json curve_json(const std::vector<double>& ps, const std::vector<double>& values) {
  Json curve = Json::array();
  for (std::size_t i = 0; i < ps.size(); ++i) curve.push_back({{"p", ps[i]}, {"value", values[i]}});
  return curve;
}

Json spread_curve_json(const std::vector<double>& ps, const std::vector<Spread>& values) {
  Json curve = Json::array();
  for (std::size_t i = 0; i < ps.size(); ++i) {
    Json point = spread_json(values[i]);
    point["p"] = ps[i];
    curve.push_back(point);
  }
  return curve;
}

void update_max(std::optional<double>& best, double value) {
  if (!best || value > *best) best = value;
}

}  // namespace

std::string_view outcome_name(Outcome outcome) {
  return kOutcomeNames[static_cast<std::size_t>(outcome)];
}

Outcome classify_turn(const TurnRecord& turn) {
  if (!turn.status) return Outcome::kNoCode;
  switch (*turn.status) {
    case PtxbStatus::kPassed:
      return Outcome::kCorrect;
    case PtxbStatus::kIncorrectShape:
    case PtxbStatus::kIncorrectNumerical:
    case PtxbStatus::kIncorrectDtype:
      return Outcome::kNumericalError;
    case PtxbStatus::kRuntimeError:
      return Outcome::kRuntimeError;
    case PtxbStatus::kCompileError:
      return Outcome::kCompileError;
    case PtxbStatus::kTimeout:
      return Outcome::kTimeout;
    case PtxbStatus::kForbidden:
      return Outcome::kForbidden;
    case PtxbStatus::kMemoryError:
      return Outcome::kMemoryError;
    case PtxbStatus::kRewardHack:
      return Outcome::kIntegrityFailure;
    case PtxbStatus::kInvalidReference:
    case PtxbStatus::kInfraError:
      return Outcome::kInfraError;
  }
  return Outcome::kInfraError;
}

WindowMetrics compute_window(const std::vector<const Trajectory*>& trajectories, int turn_limit,
                             const std::vector<double>& ps) {
  WindowMetrics metrics;
  metrics.turn_limit = turn_limit;
  metrics.n_trajectories = static_cast<int>(trajectories.size());
  metrics.n_turns = metrics.n_trajectories * turn_limit;
  std::vector<int> fast_count(ps.size(), 0), fast_inst_count(ps.size(), 0);

  for (const Trajectory* trajectory : trajectories) {
    int present = 0;
    bool any_correct = false, any_correct_inst = false;
    for (const TurnRecord& turn : trajectory->turns) {
      if (turn.turn > turn_limit) break;  // turns are sorted by index
      ++present;
      Outcome outcome = classify_turn(turn);
      ++metrics.outcomes[static_cast<std::size_t>(outcome)];
      if (outcome == Outcome::kInfraError) ++metrics.n_infra;
      bool unknown = turn.target_instructions == kInstUnknown;
      if (unknown) ++metrics.n_unknown_checks;
      if (!turn.correct()) continue;

      bool inst = turn.target_instructions == kInstDynamicPresent;
      ++metrics.n_correct;
      any_correct = true;
      if (unknown) ++metrics.n_unknown_correct;
      if (inst) {
        ++metrics.n_correct_inst;
        any_correct_inst = true;
      }
      // A correct turn without a measured speedup (no reference available) is correct but takes
      // no part in best speedup or Fast_p: "sᵢ > p" cannot hold for an unknown sᵢ.
      if (!turn.speedup) continue;
      double speedup = *turn.speedup;
      update_max(metrics.best_speedup, speedup);
      if (inst) update_max(metrics.inst_best_speedup, speedup);
      for (std::size_t i = 0; i < ps.size(); ++i) {
        if (speedup > ps[i]) {
          ++fast_count[i];
          if (inst) ++fast_inst_count[i];
        }
      }
    }
    // Turn indices are unique and ≥ 1, so the window holds `present` of its k slots.
    metrics.outcomes[static_cast<std::size_t>(Outcome::kMissing)] += turn_limit - present;
    metrics.n_trajectories_correct += any_correct;
    metrics.n_trajectories_correct_inst += any_correct_inst;
  }

  metrics.turn_correctness = ratio(metrics.n_correct, metrics.n_turns);
  metrics.inst_turn_correctness = ratio(metrics.n_correct_inst, metrics.n_turns);
  metrics.trajectory_rate = ratio(metrics.n_trajectories_correct, metrics.n_trajectories);
  metrics.inst_trajectory_rate = ratio(metrics.n_trajectories_correct_inst, metrics.n_trajectories);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    metrics.fast_p.push_back(ratio(fast_count[i], metrics.n_turns));
    metrics.fast_inst_p.push_back(ratio(fast_inst_count[i], metrics.n_turns));
  }
  return metrics;
}

VariantSpread spread_over_variants(const std::vector<WindowMetrics>& per_variant) {
  VariantSpread spread;
  auto field = [&](auto getter) {
    std::vector<double> values;
    for (const WindowMetrics& metrics : per_variant) values.push_back(getter(metrics));
    return spread_of(values);
  };
  spread.turn_correctness = field([](const WindowMetrics& m) { return m.turn_correctness; });
  spread.inst_turn_correctness =
      field([](const WindowMetrics& m) { return m.inst_turn_correctness; });
  spread.trajectory_rate = field([](const WindowMetrics& m) { return m.trajectory_rate; });
  spread.inst_trajectory_rate =
      field([](const WindowMetrics& m) { return m.inst_trajectory_rate; });
  std::vector<std::optional<double>> best, inst_best;
  for (const WindowMetrics& metrics : per_variant) {
    best.push_back(metrics.best_speedup);
    inst_best.push_back(metrics.inst_best_speedup);
  }
  spread.best_speedup = spread_of_best(best);
  spread.inst_best_speedup = spread_of_best(inst_best);
  std::size_t n_ps = per_variant.empty() ? 0 : per_variant.front().fast_p.size();
  for (std::size_t i = 0; i < n_ps; ++i) {
    spread.fast_p.push_back(field([i](const WindowMetrics& m) { return m.fast_p[i]; }));
    spread.fast_inst_p.push_back(field([i](const WindowMetrics& m) { return m.fast_inst_p[i]; }));
  }
  return spread;
}

std::vector<int> limits_within_run(std::vector<int> requested, int run_turns) {
  if (run_turns > 0)
    for (int& limit : requested) limit = std::min(limit, run_turns);
  std::sort(requested.begin(), requested.end());
  requested.erase(std::unique(requested.begin(), requested.end()), requested.end());
  return requested;
}

std::vector<GroupMetrics> compute_metrics(const std::vector<Trajectory>& trajectories,
                                          const MetricsOptions& options) {
  using GroupId = std::tuple<std::string, std::string, std::string, std::string>;
  // Group → variant → trajectories; std::map keeps groups and variants sorted.
  std::map<GroupId, std::map<std::string, std::vector<const Trajectory*>>> grouped;
  std::map<GroupId, GroupMetrics> headers;
  for (const Trajectory& trajectory : trajectories) {
    const TrajectoryKey& key = trajectory.key;
    GroupId id{key.model, key.definition, key.workload, key.arch};
    grouped[id][key.variant].push_back(&trajectory);
    GroupMetrics& header = headers[id];
    header.model = key.model;
    header.arch = key.arch;
    header.definition = key.definition;
    header.workload = key.workload;
    if (header.workload_name.empty() || header.workload_name == key.workload)
      header.workload_name = trajectory.workload_name;
    if (std::find(header.run_dirs.begin(), header.run_dirs.end(), trajectory.run_dir) ==
        header.run_dirs.end())
      header.run_dirs.push_back(trajectory.run_dir);
    ++header.n_trajectories;
  }

  std::vector<GroupMetrics> groups;
  for (auto& [id, variants] : grouped) {
    GroupMetrics group = std::move(headers[id]);
    std::vector<const Trajectory*> all;
    for (const auto& [variant, members] : variants) {
      group.variants.push_back(variant);
      all.insert(all.end(), members.begin(), members.end());
    }
    for (int limit : options.turn_limits) {
      LimitMetrics limit_metrics;
      limit_metrics.turn_limit = limit;
      for (const auto& [variant, members] : variants)
        limit_metrics.per_variant.push_back(compute_window(members, limit, options.ps));
      limit_metrics.over_variants = spread_over_variants(limit_metrics.per_variant);
      limit_metrics.pooled = compute_window(all, limit, options.ps);
      group.limits.push_back(std::move(limit_metrics));
    }
    groups.push_back(std::move(group));
  }
  return groups;
}

Json window_to_json(const WindowMetrics& metrics, const std::vector<double>& ps) {
  Json json = Json::object();
  json["n_trajectories"] = metrics.n_trajectories;
  json["n_turns"] = metrics.n_turns;
  json["n_correct"] = metrics.n_correct;
  json["n_correct_inst"] = metrics.n_correct_inst;
  json["turn_correctness"] = metrics.turn_correctness;
  json["inst_turn_correctness"] = metrics.inst_turn_correctness;
  json["best_speedup"] = optional_json(metrics.best_speedup);
  json["inst_best_speedup"] = optional_json(metrics.inst_best_speedup);
  json["fast_p"] = curve_json(ps, metrics.fast_p);
  json["fast_inst_p"] = curve_json(ps, metrics.fast_inst_p);
  json["n_trajectories_correct"] = metrics.n_trajectories_correct;
  json["n_trajectories_correct_inst"] = metrics.n_trajectories_correct_inst;
  json["trajectory_rate"] = metrics.trajectory_rate;
  json["inst_trajectory_rate"] = metrics.inst_trajectory_rate;
  Json outcomes = Json::object();
  for (std::size_t i = 0; i < kOutcomeCount; ++i)
    outcomes[std::string(kOutcomeNames[i])] = metrics.outcomes[i];
  json["outcomes"] = outcomes;
  json["n_unknown_checks"] = metrics.n_unknown_checks;
  json["n_unknown_correct"] = metrics.n_unknown_correct;
  json["n_infra"] = metrics.n_infra;
  return json;
}

Json group_to_json(const GroupMetrics& group, const MetricsOptions& options) {
  Json json = Json::object();
  json["model"] = group.model;
  json["arch"] = group.arch;
  json["definition"] = group.definition;
  json["workload"] = group.workload;
  json["workload_name"] = group.workload_name;
  json["run_dirs"] = group.run_dirs;
  json["variants"] = group.variants;
  json["n_trajectories"] = group.n_trajectories;
  Json limits = Json::array();
  for (const LimitMetrics& limit : group.limits) {
    Json entry = Json::object();
    entry["turn_limit"] = limit.turn_limit;
    entry["pooled"] = window_to_json(limit.pooled, options.ps);
    const VariantSpread& spread = limit.over_variants;
    Json over = Json::object();
    over["turn_correctness"] = spread_json(spread.turn_correctness);
    over["inst_turn_correctness"] = spread_json(spread.inst_turn_correctness);
    over["trajectory_rate"] = spread_json(spread.trajectory_rate);
    over["inst_trajectory_rate"] = spread_json(spread.inst_trajectory_rate);
    over["best_speedup"] = optional_spread_json(spread.best_speedup);
    over["inst_best_speedup"] = optional_spread_json(spread.inst_best_speedup);
    over["fast_p"] = spread_curve_json(options.ps, spread.fast_p);
    over["fast_inst_p"] = spread_curve_json(options.ps, spread.fast_inst_p);
    entry["over_variants"] = over;
    Json per_variant = Json::object();
    for (std::size_t i = 0; i < group.variants.size(); ++i)
      per_variant[group.variants[i]] = window_to_json(limit.per_variant[i], options.ps);
    entry["per_variant"] = per_variant;
    limits.push_back(entry);
  }
  json["turn_limits"] = limits;
  return json;
}

}  // namespace ptxb
