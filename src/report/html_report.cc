#include "report/html_report.h"

#include <algorithm>

#include "core/strings.h"
#include "report/report.h"

namespace ptxb {
namespace {

// Plot geometry in SVG user units; every plot shares it so the page reads as a grid.
constexpr double kWidth = 420, kHeight = 240;
constexpr double kLeft = 44, kRight = 12, kTop = 24, kBottom = 32;
constexpr double kPlotWidth = kWidth - kLeft - kRight, kPlotHeight = kHeight - kTop - kBottom;

// Eleven outcome colours, in Outcome order (correct is green, missing grey).
constexpr std::array<const char*, kOutcomeCount> kOutcomeColors = {
    "#9e9e9e", "#6a1b9a", "#e65100", "#c62828", "#ef5350", "#8d6e63",
    "#f9a825", "#000000", "#2e7d32", "#1565c0", "#e0e0e0"};

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

double y_of(double fraction) {
  return kTop + kPlotHeight * (1.0 - std::clamp(fraction, 0.0, 1.0));
}

std::string svg_open(const std::string& title) {
  std::string out = fmt::format(
      "<svg class=\"plot\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" role=\"img\">"
      "<title>{}</title><text x=\"{}\" y=\"14\" font-size=\"12\">{}</text>",
      kWidth, kHeight, kWidth, kHeight, escape(title), escape(title), kLeft, escape(title));
  // Axes with 0 / 0.5 / 1 marks: every plot here has a 0..1 y range (rates).
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>", kLeft,
                     kTop, kTop + kPlotHeight);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>", kLeft,
                     kTop + kPlotHeight, kLeft + kPlotWidth);
  for (double tick : {0.0, 0.5, 1.0})
    out += fmt::format("<text x=\"4\" y=\"{:.1f}\" font-size=\"10\">{:.1f}</text>", y_of(tick) + 3,
                       tick);
  return out;
}

// Fast_p (or Fast^Inst_p) over p: min–max band over variants, the variant mean, the pooled value.
std::string curve_plot(const std::string& title, const std::vector<double>& ps,
                       const std::vector<Spread>& spread, const std::vector<double>& pooled) {
  double lo = ps.front(), hi = ps.back();
  double span = hi > lo ? hi - lo : 1.0;
  auto x_of = [&](double p) { return kLeft + kPlotWidth * (p - lo) / span; };
  std::string out = svg_open(title);
  std::string band = "M";
  for (std::size_t i = 0; i < ps.size(); ++i)
    band += fmt::format("{}{:.2f},{:.2f}", i ? " L" : "", x_of(ps[i]), y_of(spread[i].max));
  for (std::size_t i = ps.size(); i-- > 0;)
    band += fmt::format(" L{:.2f},{:.2f}", x_of(ps[i]), y_of(spread[i].min));
  out += "<path class=\"band\" d=\"" + band + " Z\" fill=\"#90caf9\" fill-opacity=\"0.5\"/>";
  std::string mean, pooled_line;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    mean += fmt::format("{:.2f},{:.2f} ", x_of(ps[i]), y_of(spread[i].mean));
    pooled_line += fmt::format("{:.2f},{:.2f} ", x_of(ps[i]), y_of(pooled[i]));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\">{}</text>", x_of(ps[i]) - 6,
                       kHeight - 16, fmt::format("{}", ps[i]));
  }
  out += "<polyline class=\"mean\" points=\"" + mean + "\" fill=\"none\" stroke=\"#0d47a1\"/>";
  out += "<polyline class=\"pooled\" points=\"" + pooled_line +
         "\" fill=\"none\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>";
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\">p</text></svg>\n",
                     kLeft + kPlotWidth / 2, kHeight - 4);
  return out;
}

// Share of the group's trajectories whose turn i is correct (a missing turn is not correct).
std::string correctness_by_turn_plot(const std::vector<const Trajectory*>& members) {
  int max_turn = 0;
  for (const Trajectory* trajectory : members)
    for (const TurnRecord& turn : trajectory->turns) max_turn = std::max(max_turn, turn.turn);
  std::string out = svg_open("turn correctness by turn index");
  if (max_turn == 0 || members.empty()) return out + "</svg>\n";
  double slot = kPlotWidth / max_turn;
  for (int index = 1; index <= max_turn; ++index) {
    int correct = 0;
    for (const Trajectory* trajectory : members)
      for (const TurnRecord& turn : trajectory->turns)
        correct += turn.turn == index && turn.correct();
    double share = static_cast<double>(correct) / members.size();
    double x = kLeft + slot * (index - 1) + slot * 0.15;
    out += fmt::format(
        "<rect class=\"turn\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" "
        "fill=\"#2e7d32\"><title>turn {}: {}/{}</title></rect>",
        x, y_of(share), slot * 0.7, kTop + kPlotHeight - y_of(share), index, correct,
        members.size());
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\">{}</text>", x, kHeight - 16,
                       index);
  }
  return out + "</svg>\n";
}

// Outcome shares of all turn slots at the largest limit, as one stacked bar with a legend.
std::string outcome_plot(const WindowMetrics& widest) {
  std::string out = svg_open(fmt::format("turn outcomes (≤{} turns)", widest.turn_limit));
  double x = kLeft;
  int legend_row = 0;
  for (std::size_t i = 0; i < kOutcomeCount; ++i) {
    int count = widest.outcomes[i];
    if (count == 0 || widest.n_turns == 0) continue;
    double width = kPlotWidth * count / widest.n_turns;
    std::string name(outcome_name(static_cast<Outcome>(i)));
    out += fmt::format(
        "<rect class=\"outcome\" x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"28\" "
        "fill=\"{}\"><title>{}: {}</title></rect>",
        x, kTop + 4, width, kOutcomeColors[i], name, count);
    x += width;
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>"
        "<text x=\"{}\" y=\"{}\" font-size=\"10\">{} {}</text>",
        kLeft + (legend_row % 2) * 180, kTop + 44 + (legend_row / 2) * 14, kOutcomeColors[i],
        kLeft + (legend_row % 2) * 180 + 14, kTop + 53 + (legend_row / 2) * 14, name, count);
    ++legend_row;
  }
  return out + "</svg>\n";
}

}  // namespace

std::string render_html(const std::vector<GroupMetrics>& groups,
                        const std::vector<Trajectory>& trajectories,
                        const MetricsOptions& options) {
  std::string out =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>PTXBench report</title>"
      "<style>body{font-family:sans-serif;margin:24px}svg{margin:6px;border:1px solid #ddd}"
      "pre{font-size:12px}</style></head><body>\n<h1>PTXBench report</h1>\n"
      "<p>Band: min–max over prompt variants; solid line: mean over variants; dashed: "
      "pooled.</p>\n";
  for (const GroupMetrics& group : groups) {
    std::vector<const Trajectory*> members;
    for (const Trajectory& trajectory : trajectories)
      if (trajectory.key.model == group.model && trajectory.key.arch == group.arch &&
          trajectory.key.definition == group.definition &&
          trajectory.key.workload == group.workload)
        members.push_back(&trajectory);
    const LimitMetrics& widest = group.limits.back();
    out += fmt::format("<section class=\"group\"><h2>{} · {} · {}</h2>\n", escape(group.model),
                       escape(group.workload_name), escape(group.arch));
    out += curve_plot(fmt::format("Fast^Inst_p (≤{} turns)", widest.turn_limit), options.ps,
                      widest.over_variants.fast_inst_p, widest.pooled.fast_inst_p);
    out += curve_plot(fmt::format("Fast_p (≤{} turns)", widest.turn_limit), options.ps,
                      widest.over_variants.fast_p, widest.pooled.fast_p);
    out += correctness_by_turn_plot(members);
    out += outcome_plot(widest.pooled);
    out += "</section>\n";
  }
  out += "<h2>Tables</h2>\n<pre>" + escape(render_markdown(groups, options)) + "</pre>\n";
  out += "</body></html>\n";
  return out;
}

}  // namespace ptxb
