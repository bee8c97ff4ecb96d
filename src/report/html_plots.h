// The SVG plots of one group (model × task × arch) in the HTML report. Every plot has labelled
// axes, a plot box (<rect class="plot-area">) and its legend (<g class="legend">) in a strip
// below the x-axis label, so a legend never covers data; the browser test checks the boxes.
#pragma once

#include <string>
#include <vector>

#include "metrics/metrics.h"

namespace ptxb {

std::string html_escape(const std::string& text);

// Fast_p (or Fast^Inst_p) over p as a step function: the value at a sampled p holds until the
// next one. With several prompt variants, their min–max band (<path class="band">) and mean
// (<polyline class="mean">); always the pooled value (<polyline class="pooled">).
std::string fast_p_plot(const std::string& plot, const std::string& title,
                        const std::vector<double>& ps, const std::vector<Spread>& spread,
                        const std::vector<double>& pooled, bool several_variants);

// Share of the group's trajectories whose turn i is correct (and with target instructions).
std::string correctness_by_turn_plot(const std::vector<const Trajectory*>& members, int turn_limit);

// Every correct turn's speedup at its turn index, with the labelled 1× (library parity) line.
std::string speedup_by_turn_plot(const std::vector<const Trajectory*>& members, int turn_limit);

// The outcome mix of all turn slots at the largest limit, as one stacked bar.
std::string outcome_plot(const WindowMetrics& widest);

// Evenly spaced "nice" ticks from 0 to at least `largest`: steps of 1, 2 or 5 × 10^k, 3–6 ticks.
std::vector<double> nice_ticks(double largest);

}  // namespace ptxb
