// One self-contained HTML file with inline SVG plots (issue 8): no scripts, fonts or other
// external resources, so it opens offline and can be committed next to benchmark results.
#pragma once

#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace ptxb {

// Per group: Fast_p and Fast^Inst_p curves at the largest turn limit (mean over variants as a
// line, the min–max band over variants as a filled path of class "band", pooled as a dashed
// line), turn correctness by turn index, the outcome breakdown, and the markdown tables in a
// <pre> block.
std::string render_html(const std::vector<GroupMetrics>& groups,
                        const std::vector<Trajectory>& trajectories, const MetricsOptions& options);

}  // namespace ptxb
