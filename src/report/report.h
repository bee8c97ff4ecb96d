// Renders computed metrics (metrics/metrics.h) for people and plotting scripts: markdown tables
// in the paper's layout, a JSON document, and CSV files whose columns follow the reference
// implementation's plot data so our results can be plotted next to published ones.
// Column definitions: docs/report.md.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "metrics/metrics.h"

namespace ptxb {

// One table of the report, as text cells: rendered as markdown here and as an HTML <table> by
// html_report.cc, so both show the same figures.
struct ReportTable {
  std::string id;     // "pooled", "variants", "outcomes"
  std::string title;  // "Pooled over prompt variants"
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// The pooled table, the per-variant table (with mean/min/max rows) and the outcome counts.
std::vector<ReportTable> report_tables(const std::vector<GroupMetrics>& groups,
                                       const MetricsOptions& options);
// How to read a metric cell ("Cells: target-instruction figure ... triplet.").
std::string table_note(const MetricsOptions& options);

// Markdown tables (also what the terminal shows). Each metric cell is a ≤k triplet over the turn
// limits, the target-instruction figure first and the unrestricted figure in brackets on the row
// below, as in the paper's tables.
std::string render_markdown(const std::vector<GroupMetrics>& groups, const MetricsOptions& options);

// {"turn_limits": [...], "ps": [...], "groups": [group_to_json...]}
Json report_to_json(const std::vector<GroupMetrics>& groups, const MetricsOptions& options);

// Writes into `dir` (created if needed): correctness_rate.csv, best_speedup.csv,
// arch_instruction_correctness.csv, reasoning_tokens_vs_performance.csv and metrics.csv.
Status write_csv_files(const std::string& dir, const std::vector<GroupMetrics>& groups,
                       const std::vector<Trajectory>& trajectories, const MetricsOptions& options);

// The CSV texts themselves (file name → contents), for tests and write_csv_files.
std::vector<std::pair<std::string, std::string>> render_csv_files(
    const std::vector<GroupMetrics>& groups, const std::vector<Trajectory>& trajectories,
    const MetricsOptions& options);

// "0.250", "—" for a missing value; speedups and rates share the 3-decimal format.
std::string format_metric(const std::optional<double>& value);

}  // namespace ptxb
