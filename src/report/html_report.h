// One self-contained HTML file: the model × task matrix, the runs' provenance, per group the SVG
// plots (report/html_plots.h), the tables, and the trajectory viewer (report/trajectory_viewer.h).
// Nothing comes from elsewhere (no fonts, stylesheets, images or script files), so it opens
// offline and can be committed next to benchmark results. docs/report.md.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "metrics/metrics.h"
#include "report/run_details.h"

namespace ptxb {

// What the page shows beyond the metrics; all optional.
struct HtmlReportInputs {
  std::vector<RunProvenance> runs;
  // viewer_data(); null: the page has no trajectory viewer.
  Json viewer;
};

// At the top, <table id="matrix">: one <td class="cell" data-model data-task data-arch> per
// model × task × arch with the target-instruction turn correctness and best speedup at the
// largest turn limit (the spread over prompt variants when there are several). Then the runs
// (<table id="runs">, with a warning where every turn's GPU stages were skipped), per group a
// <section class="group"> of five plots, the report's tables (report_tables) as
// <table id="table-pooled|table-variants|table-outcomes">, and the viewer.
std::string render_html(const std::vector<GroupMetrics>& groups,
                        const std::vector<Trajectory>& trajectories, const MetricsOptions& options,
                        const HtmlReportInputs& inputs = {});

}  // namespace ptxb
