#include "report/report.h"

#include <cmath>

#include "core/fs.h"
#include "core/strings.h"
#include "eval/eval_types.h"

namespace ptxb {
namespace {

// The p whose Fast_p the tables show: the paper's headline threshold (parity with the library).
constexpr double kTableFastP = 1.0;

std::string format_value(double value) {
  return fmt::format("{:.3f}", value);
}

// "a / b / c" over the turn limits.
template <typename Getter>
std::string triplet(const std::vector<LimitMetrics>& limits, Getter getter) {
  std::vector<std::string> parts;
  for (const LimitMetrics& limit : limits) parts.push_back(format_metric(getter(limit)));
  return join(parts, " / ");
}

std::optional<std::size_t> table_p_index(const std::vector<double>& ps) {
  for (std::size_t i = 0; i < ps.size(); ++i)
    if (ps[i] == kTableFastP) return i;
  return std::nullopt;
}

// One metric as a pair of cells: (target-instruction figure, unrestricted figure).
struct Column {
  std::string title;
  std::function<std::optional<double>(const WindowMetrics&, bool inst)> value;
  std::function<std::optional<double>(const VariantSpread&, bool inst, int which)> spread;
};

std::optional<double> pick(const Spread& spread, int which) {
  return which == 0 ? spread.mean : which == 1 ? spread.min : spread.max;
}
std::optional<double> pick(const std::optional<Spread>& spread, int which) {
  if (!spread) return std::nullopt;
  return pick(*spread, which);
}

std::vector<Column> table_columns(const std::vector<double>& ps) {
  std::vector<Column> columns = {
      {"turn correctness",
       [](const WindowMetrics& m, bool inst) -> std::optional<double> {
         return inst ? m.inst_turn_correctness : m.turn_correctness;
       },
       [](const VariantSpread& s, bool inst, int which) {
         return pick(inst ? s.inst_turn_correctness : s.turn_correctness, which);
       }},
      {"trajectories with a correct turn",
       [](const WindowMetrics& m, bool inst) -> std::optional<double> {
         return inst ? m.inst_trajectory_rate : m.trajectory_rate;
       },
       [](const VariantSpread& s, bool inst, int which) {
         return pick(inst ? s.inst_trajectory_rate : s.trajectory_rate, which);
       }},
      {"best speedup",
       [](const WindowMetrics& m, bool inst) {
         return inst ? m.inst_best_speedup : m.best_speedup;
       },
       [](const VariantSpread& s, bool inst, int which) {
         return pick(inst ? s.inst_best_speedup : s.best_speedup, which);
       }},
  };
  if (auto index = table_p_index(ps)) {
    std::size_t i = *index;
    columns.push_back({fmt::format("Fast_{}", ps[i]),
                       [i](const WindowMetrics& m, bool inst) -> std::optional<double> {
                         return inst ? m.fast_inst_p[i] : m.fast_p[i];
                       },
                       [i](const VariantSpread& s, bool inst, int which) {
                         return pick(inst ? s.fast_inst_p[i] : s.fast_p[i], which);
                       }});
  }
  return columns;
}

std::string limits_title(const MetricsOptions& options) {
  std::vector<std::string> parts;
  for (int limit : options.turn_limits) parts.push_back(fmt::format("≤{}", limit));
  return join(parts, "/");
}

std::vector<std::string> metric_header(const std::vector<std::string>& identity,
                                       const std::vector<Column>& columns,
                                       const MetricsOptions& options) {
  std::vector<std::string> titles = identity;
  for (const Column& column : columns)
    titles.push_back(fmt::format("{} {}", column.title, limits_title(options)));
  return titles;
}

// Two table rows: the target-instruction triplets, then the unrestricted ones in brackets.
template <typename CellOf>
void append_row_pair(ReportTable& table, const std::vector<std::string>& identity,
                     const std::vector<Column>& columns, CellOf cell_of) {
  std::vector<std::string> first = identity, second(identity.size(), "");
  for (const Column& column : columns) {
    first.push_back(cell_of(column, true));
    second.push_back(fmt::format("({})", cell_of(column, false)));
  }
  table.rows.push_back(std::move(first));
  table.rows.push_back(std::move(second));
}

std::string markdown_row(const std::vector<std::string>& cells) {
  return "| " + join(cells, " | ") + " |\n";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  return "\"" + replace_all(text, "\"", "\"\"") + "\"";
}

std::string csv_line(const std::vector<std::string>& fields) {
  std::vector<std::string> quoted;
  for (const std::string& field : fields) quoted.push_back(csv_field(field));
  return join(quoted, ",") + "\n";
}

// CSV numbers keep full precision (plots, not people, read them); missing values are empty.
std::string csv_number(const std::optional<double>& value) {
  return value ? fmt::format("{}", *value) : "";
}

std::vector<std::string> group_identity(const GroupMetrics& group) {
  return {group.model,         group.arch,       group.workload,
          group.workload_name, group.definition, join(group.run_dirs, ";")};
}

const std::vector<std::string> kIdentityColumns = {"model",         "arch",       "workload",
                                                   "workload_name", "definition", "exp_dir"};

std::vector<std::string> with_identity(std::vector<std::string> columns) {
  columns.insert(columns.begin(), kIdentityColumns.begin(), kIdentityColumns.end());
  return columns;
}

void append_metric_rows(std::string& out, const GroupMetrics& group, int limit,
                        const std::string& scope, const WindowMetrics& m,
                        const std::vector<double>& ps) {
  auto row = [&](const std::string& metric, const std::string& p,
                 const std::optional<double>& value) {
    out += csv_line({group.model, group.arch, group.definition, group.workload, group.workload_name,
                     std::to_string(limit), scope, metric, p, csv_number(value)});
  };
  row("turn_correctness", "", m.turn_correctness);
  row("inst_turn_correctness", "", m.inst_turn_correctness);
  row("trajectory_rate", "", m.trajectory_rate);
  row("inst_trajectory_rate", "", m.inst_trajectory_rate);
  row("best_speedup", "", m.best_speedup);
  row("inst_best_speedup", "", m.inst_best_speedup);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    row("fast_p", fmt::format("{}", ps[i]), m.fast_p[i]);
    row("fast_inst_p", fmt::format("{}", ps[i]), m.fast_inst_p[i]);
  }
}

void append_spread_rows(std::string& out, const GroupMetrics& group, int limit,
                        const VariantSpread& s, const std::vector<double>& ps) {
  for (int which = 0; which < 3; ++which) {
    std::string scope = which == 0 ? "mean" : which == 1 ? "min" : "max";
    auto row = [&](const std::string& metric, const std::string& p,
                   const std::optional<double>& value) {
      out +=
          csv_line({group.model, group.arch, group.definition, group.workload, group.workload_name,
                    std::to_string(limit), scope, metric, p, csv_number(value)});
    };
    row("turn_correctness", "", pick(s.turn_correctness, which));
    row("inst_turn_correctness", "", pick(s.inst_turn_correctness, which));
    row("trajectory_rate", "", pick(s.trajectory_rate, which));
    row("inst_trajectory_rate", "", pick(s.inst_trajectory_rate, which));
    row("best_speedup", "", pick(s.best_speedup, which));
    row("inst_best_speedup", "", pick(s.inst_best_speedup, which));
    for (std::size_t i = 0; i < ps.size(); ++i) {
      row("fast_p", fmt::format("{}", ps[i]), pick(s.fast_p[i], which));
      row("fast_inst_p", fmt::format("{}", ps[i]), pick(s.fast_inst_p[i], which));
    }
  }
}

}  // namespace

std::string format_metric(const std::optional<double>& value) {
  return value ? format_value(*value) : "—";
}

std::string table_note(const MetricsOptions& options) {
  return "Cells: target-instruction figure (correct with dynamic_present target instructions),\n"
         "then the unrestricted figure in brackets; each as a " +
         limits_title(options) + " turns triplet. — = no correct turn.";
}

std::vector<ReportTable> report_tables(const std::vector<GroupMetrics>& groups,
                                       const MetricsOptions& options) {
  std::vector<Column> columns = table_columns(options.ps);
  ReportTable pooled{"pooled",
                     "Pooled over prompt variants",
                     metric_header({"model", "task", "arch", "trajectories"}, columns, options),
                     {}};
  for (const GroupMetrics& group : groups) {
    append_row_pair(
        pooled,
        {group.model, group.workload_name, group.arch, std::to_string(group.n_trajectories)},
        columns, [&](const Column& column, bool inst) {
          return triplet(group.limits, [&](const LimitMetrics& limit) {
            return column.value(limit.pooled, inst);
          });
        });
  }

  ReportTable variants{"variants",
                       "Per prompt variant, with the mean, min and max over variants",
                       metric_header({"model", "task", "arch", "variant"}, columns, options),
                       {}};
  for (const GroupMetrics& group : groups) {
    for (std::size_t v = 0; v < group.variants.size(); ++v) {
      append_row_pair(variants, {group.model, group.workload_name, group.arch, group.variants[v]},
                      columns, [&](const Column& column, bool inst) {
                        return triplet(group.limits, [&](const LimitMetrics& limit) {
                          return column.value(limit.per_variant[v], inst);
                        });
                      });
    }
    // With one variant, mean, min and max would repeat its row three times.
    if (group.variants.size() < 2) continue;
    for (int which = 0; which < 3; ++which) {
      std::string label = which == 0 ? "mean" : which == 1 ? "min" : "max";
      append_row_pair(variants, {group.model, group.workload_name, group.arch, label}, columns,
                      [&](const Column& column, bool inst) {
                        return triplet(group.limits, [&](const LimitMetrics& limit) {
                          return column.spread(limit.over_variants, inst, which);
                        });
                      });
    }
  }

  // Outcomes over the widest window: every turn slot, so a row sums to trajectories × k.
  ReportTable outcomes{
      "outcomes",
      "Turn outcomes (pooled, ≤" + std::to_string(options.turn_limits.back()) + " turns)",
      {"model", "task", "arch"},
      {}};
  for (std::size_t i = 0; i < kOutcomeCount; ++i)
    outcomes.header.emplace_back(outcome_name(static_cast<Outcome>(i)));
  outcomes.header.push_back("unknown checks");
  for (const GroupMetrics& group : groups) {
    const WindowMetrics& widest = group.limits.back().pooled;
    std::vector<std::string> cells = {group.model, group.workload_name, group.arch};
    for (int count : widest.outcomes) cells.push_back(std::to_string(count));
    cells.push_back(std::to_string(widest.n_unknown_checks));
    outcomes.rows.push_back(std::move(cells));
  }
  return {std::move(pooled), std::move(variants), std::move(outcomes)};
}

std::string render_markdown(const std::vector<GroupMetrics>& groups,
                            const MetricsOptions& options) {
  if (groups.empty()) return "No trajectories.\n";
  std::string out = table_note(options) + "\n";
  for (const ReportTable& table : report_tables(groups, options)) {
    out += "\n## " + table.title + "\n\n" + markdown_row(table.header) + "|";
    for (std::size_t i = 0; i < table.header.size(); ++i) out += "---|";
    out += "\n";
    for (const std::vector<std::string>& row : table.rows) out += markdown_row(row);
  }
  return out;
}

Json report_to_json(const std::vector<GroupMetrics>& groups, const MetricsOptions& options) {
  Json json = Json::object();
  json["turn_limits"] = options.turn_limits;
  json["ps"] = options.ps;
  Json list = Json::array();
  for (const GroupMetrics& group : groups) list.push_back(group_to_json(group, options));
  json["groups"] = list;
  return json;
}

std::vector<std::pair<std::string, std::string>> render_csv_files(
    const std::vector<GroupMetrics>& groups, const std::vector<Trajectory>& trajectories,
    const MetricsOptions& options) {
  std::string correctness =
      csv_line(with_identity({"turn_limit", "n_trajectories", "correct", "correctness_rate"}));
  std::string best = csv_line(with_identity({"turn_limit", "n_trajectories", "best_speedup"}));
  std::string inst = csv_line(
      with_identity({"turn_limit", "n_trajectories", "correct_with_arch", "correct_with_arch_rate",
                     "n_correct_turns", "n_unknown_correct_turns"}));
  std::string metrics = csv_line({"model", "arch", "definition", "workload", "workload_name",
                                  "turn_limit", "scope", "metric", "p", "value"});
  for (const GroupMetrics& group : groups) {
    std::vector<std::string> identity = group_identity(group);
    for (const LimitMetrics& limit : group.limits) {
      const WindowMetrics& m = limit.pooled;
      auto row = [&](std::vector<std::string> fields) {
        fields.insert(fields.begin(), identity.begin(), identity.end());
        return csv_line(fields);
      };
      std::string k = std::to_string(limit.turn_limit), n = std::to_string(m.n_trajectories);
      correctness +=
          row({k, n, std::to_string(m.n_trajectories_correct), csv_number(m.trajectory_rate)});
      best += row({k, n, csv_number(m.best_speedup)});
      inst += row({k, n, std::to_string(m.n_trajectories_correct_inst),
                   csv_number(m.inst_trajectory_rate), std::to_string(m.n_correct),
                   std::to_string(m.n_unknown_correct)});
      append_metric_rows(metrics, group, limit.turn_limit, "pooled", m, options.ps);
      for (std::size_t v = 0; v < group.variants.size(); ++v)
        append_metric_rows(metrics, group, limit.turn_limit, "variant:" + group.variants[v],
                           limit.per_variant[v], options.ps);
      append_spread_rows(metrics, group, limit.turn_limit, limit.over_variants, options.ps);
    }
  }

  std::string tokens = csv_line(
      with_identity({"variant", "trajectory_id", "turn", "reasoning_tokens", "correctness",
                     "speedup", "speedup_low", "speedup_high", "target_instructions",
                     "correct_with_arch", "status", "energy_ratio", "also_reference_speedup"}));
  for (const Trajectory& trajectory : trajectories) {
    for (const TurnRecord& turn : trajectory.turns) {
      const TrajectoryKey& key = trajectory.key;
      bool with_arch = turn.correct() && turn.target_instructions == kInstDynamicPresent;
      tokens += csv_line({key.model, key.arch, key.workload, trajectory.workload_name,
                          key.definition, trajectory.run_dir, key.variant, key.trajectory,
                          std::to_string(turn.turn), std::to_string(turn.tokens.reasoning),
                          turn.correct() ? "1" : "0", csv_number(turn.speedup),
                          csv_number(turn.speedup_low), csv_number(turn.speedup_high),
                          turn.target_instructions, with_arch ? "1" : "0", turn.status_name(),
                          csv_number(turn.energy_ratio), csv_number(turn.also_reference_speedup)});
    }
  }
  return {{"correctness_rate.csv", correctness},
          {"best_speedup.csv", best},
          {"arch_instruction_correctness.csv", inst},
          {"reasoning_tokens_vs_performance.csv", tokens},
          {"metrics.csv", metrics}};
}

Status write_csv_files(const std::string& dir, const std::vector<GroupMetrics>& groups,
                       const std::vector<Trajectory>& trajectories, const MetricsOptions& options) {
  PTXB_RETURN_IF_ERROR(make_directories(dir));
  for (const auto& [name, contents] : render_csv_files(groups, trajectories, options))
    PTXB_RETURN_IF_ERROR(write_file_atomic(dir + "/" + name, contents));
  return ok_status();
}

}  // namespace ptxb
