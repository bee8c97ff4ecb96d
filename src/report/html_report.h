// One self-contained HTML file with inline SVG plots: no scripts, fonts or other
// external resources, so it opens offline and can be committed next to benchmark results.
#pragma once

#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace ptxb {

// Per group (model × task × arch), in a <section data-task="...">, five inline <svg
// data-plot="...">: Fast^Inst_p and Fast_p at the largest turn limit (min–max band over variants
// as a <path class="band">, the variant mean, the pooled value), correct turns by turn index,
// speedup of correct turns by turn index, and the outcome breakdown. Then the report's tables
// (report_tables) as <table id="table-pooled|table-variants|table-outcomes">. docs/report.md.
std::string render_html(const std::vector<GroupMetrics>& groups,
                        const std::vector<Trajectory>& trajectories, const MetricsOptions& options);

}  // namespace ptxb
