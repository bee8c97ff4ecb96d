#include "report/html_report.h"

#include <algorithm>
#include <cmath>

#include "core/strings.h"
#include "eval/eval_types.h"
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
constexpr const char* kCorrectColor = "#2e7d32";
constexpr const char* kInstColor = "#0d47a1";
constexpr const char* kBandColor = "#90caf9";

// The page's only styling, inline: a report must open offline and look the same anywhere, so
// nothing (fonts included) may come from elsewhere.
constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
    "svg{margin:6px;border:1px solid #ddd;background:#fff}"
    "table{border-collapse:collapse;margin:8px 0 20px;font-size:12px}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:nowrap}"
    "th{background:#f0f0f0}p.note{white-space:pre-line;font-size:13px}";

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

// Vertical position of `value` on an axis running from 0 (bottom) to `top` (top of the plot).
double y_of(double value, double top = 1.0) {
  return kTop + kPlotHeight * (1.0 - std::clamp(value / top, 0.0, 1.0));
}

// The frame shared by every plot. `plot` names it for tests and readers of the DOM
// (data-plot="fast_p"); the title is both the visible heading and the accessible name.
std::string svg_open(const std::string& plot, const std::string& title) {
  return fmt::format(
      "<svg class=\"plot\" data-plot=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\"><title>{}</title>"
      "<text x=\"{}\" y=\"14\" font-size=\"12\" font-weight=\"bold\">{}</text>",
      plot, kWidth, kHeight, kWidth, kHeight, escape(title), kLeft, escape(title));
}

// Left and bottom axes with labelled ticks on the y axis from 0 to `top`.
std::string axes(const std::vector<double>& y_ticks, double top, const std::string& x_label) {
  std::string out =
      fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>", kLeft,
                  kTop, kTop + kPlotHeight);
  out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>", kLeft,
                     kTop + kPlotHeight, kLeft + kPlotWidth);
  for (double tick : y_ticks)
    out += fmt::format("<text x=\"4\" y=\"{:.1f}\" font-size=\"10\">{:.1f}</text>",
                       y_of(tick, top) + 3, tick);
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"10\">{}</text>", kLeft + kPlotWidth / 2,
                     kHeight - 4, escape(x_label));
  return out;
}

// A legend entry in the top-right corner; `row` counts down from the top.
std::string legend_entry(int row, const std::string& swatch, const std::string& label) {
  double x = kLeft + kPlotWidth - 130, y = kTop + 4 + row * 13;
  return fmt::format(
      "<g class=\"legend\" transform=\"translate({:.1f},{:.1f})\">{}"
      "<text x=\"24\" y=\"9\" font-size=\"10\">{}</text></g>",
      x, y, swatch, escape(label));
}

// Fast_p (or Fast^Inst_p) over p, the paper's Figure 2 form: the min–max band over prompt
// variants, the variant mean, and the value pooled over all trajectories.
std::string curve_plot(const std::string& plot, const std::string& title,
                       const std::vector<double>& ps, const std::vector<Spread>& spread,
                       const std::vector<double>& pooled) {
  double lo = ps.front(), hi = ps.back();
  double span = hi > lo ? hi - lo : 1.0;
  auto x_of = [&](double p) { return kLeft + kPlotWidth * (p - lo) / span; };
  std::string out = svg_open(plot, title) + axes({0.0, 0.5, 1.0}, 1.0, "p");
  // Upper edge left to right, lower edge back: one closed outline per band.
  std::string band = "M";
  for (std::size_t i = 0; i < ps.size(); ++i)
    band += fmt::format("{}{:.2f},{:.2f}", i ? " L" : "", x_of(ps[i]), y_of(spread[i].max));
  for (std::size_t i = ps.size(); i-- > 0;)
    band += fmt::format(" L{:.2f},{:.2f}", x_of(ps[i]), y_of(spread[i].min));
  out += fmt::format(
      "<path class=\"band\" d=\"{} Z\" fill=\"{}\" fill-opacity=\"0.5\" stroke=\"{}\" "
      "stroke-width=\"0.5\"/>",
      band, kBandColor, kBandColor);
  std::string mean, pooled_line;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    mean += fmt::format("{:.2f},{:.2f} ", x_of(ps[i]), y_of(spread[i].mean));
    pooled_line += fmt::format("{:.2f},{:.2f} ", x_of(ps[i]), y_of(pooled[i]));
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\">{}</text>", x_of(ps[i]) - 6,
                       kHeight - 16, ps[i]);
  }
  out += fmt::format(
      "<polyline class=\"mean\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\"/>",
      trim(mean), kInstColor);
  out += "<polyline class=\"pooled\" points=\"" + trim(pooled_line) +
         "\" fill=\"none\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>";
  out += legend_entry(0,
                      fmt::format("<rect width=\"18\" height=\"9\" fill=\"{}\" "
                                  "fill-opacity=\"0.5\"/>",
                                  kBandColor),
                      "min–max over variants");
  out += legend_entry(
      1, fmt::format("<line x1=\"0\" y1=\"5\" x2=\"18\" y2=\"5\" stroke=\"{}\"/>", kInstColor),
      "mean over variants");
  out += legend_entry(
      2, "<line x1=\"0\" y1=\"5\" x2=\"18\" y2=\"5\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>",
      "pooled");
  return out + "</svg>\n";
}

// Turns 1..turn_limit of each trajectory, in the window the metrics use.
template <typename Visit>
void for_each_window_turn(const std::vector<const Trajectory*>& members, int turn_limit,
                          Visit visit) {
  for (const Trajectory* trajectory : members)
    for (const TurnRecord& turn : trajectory->turns)
      if (turn.turn <= turn_limit) visit(*trajectory, turn);
}

bool has_target_instructions(const TurnRecord& turn) {
  return turn.correct() && turn.target_instructions == kInstDynamicPresent;
}

// Share of the group's trajectories whose turn i is correct, and correct with the target
// instructions executed (a missing turn is neither).
std::string correctness_by_turn_plot(const std::vector<const Trajectory*>& members,
                                     int turn_limit) {
  std::string out = svg_open("correct_by_turn", "correct turns by turn index") +
                    axes({0.0, 0.5, 1.0}, 1.0, "turn");
  if (members.empty()) return out + "</svg>\n";
  std::vector<int> correct(turn_limit + 1, 0), with_inst(turn_limit + 1, 0);
  for_each_window_turn(members, turn_limit, [&](const Trajectory&, const TurnRecord& turn) {
    correct[turn.turn] += turn.correct();
    with_inst[turn.turn] += has_target_instructions(turn);
  });
  double slot = kPlotWidth / turn_limit;
  for (int index = 1; index <= turn_limit; ++index) {
    double x = kLeft + slot * (index - 1) + slot * 0.15, width = slot * 0.35;
    double share = static_cast<double>(correct[index]) / members.size();
    double inst_share = static_cast<double>(with_inst[index]) / members.size();
    out += fmt::format(
        "<rect class=\"turn\" data-turn=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
        "height=\"{:.2f}\" fill=\"{}\"><title>turn {}: {}/{}</title></rect>",
        index, x, y_of(share), width, kTop + kPlotHeight - y_of(share), kCorrectColor, index,
        correct[index], members.size());
    out += fmt::format(
        "<rect class=\"turn-inst\" data-turn=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
        "height=\"{:.2f}\" fill=\"{}\"><title>turn {} with target instructions: {}/{}</title>"
        "</rect>",
        index, x + width, y_of(inst_share), width, kTop + kPlotHeight - y_of(inst_share),
        kInstColor, index, with_inst[index], members.size());
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\">{}</text>", x + width - 3,
                       kHeight - 16, index);
  }
  out += legend_entry(
      0, fmt::format("<rect width=\"18\" height=\"9\" fill=\"{}\"/>", kCorrectColor), "correct");
  out += legend_entry(1, fmt::format("<rect width=\"18\" height=\"9\" fill=\"{}\"/>", kInstColor),
                      "correct + target instr.");
  return out + "</svg>\n";
}

// Every correct turn's measured speedup at its turn index: filled when the target instructions
// were executed, hollow otherwise. A failed turn's speedup is left out, as in the metrics (a
// REWARD_HACK turn may report 9×).
std::string speedup_by_turn_plot(const std::vector<const Trajectory*>& members, int turn_limit) {
  double largest = 0;
  for_each_window_turn(members, turn_limit, [&](const Trajectory&, const TurnRecord& turn) {
    if (turn.correct() && turn.speedup) largest = std::max(largest, *turn.speedup);
  });
  // At least 0..2 so parity (1×) sits mid-plot; otherwise the next multiple of 0.5 above.
  double top = std::max(2.0, std::ceil(largest * 2.0) / 2.0);
  std::string out = svg_open("speedup_by_turn", "speedup of correct turns by turn index") +
                    axes({0.0, top / 2, top}, top, "turn");
  double slot = kPlotWidth / turn_limit;
  auto x_of = [&](int index) { return kLeft + slot * (index - 0.5); };
  for (int index = 1; index <= turn_limit; ++index)
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\">{}</text>", x_of(index) - 3,
                       kHeight - 16, index);
  out += fmt::format(
      "<line class=\"parity\" x1=\"{}\" y1=\"{:.2f}\" x2=\"{}\" y2=\"{:.2f}\" stroke=\"#888\" "
      "stroke-dasharray=\"2 2\"/>",
      kLeft, y_of(1.0, top), kLeft + kPlotWidth, y_of(1.0, top));
  int points = 0;
  for_each_window_turn(
      members, turn_limit, [&](const Trajectory& trajectory, const TurnRecord& turn) {
        if (!turn.correct() || !turn.speedup) return;
        bool inst = has_target_instructions(turn);
        // Trajectories spread sideways within the slot so equal speedups stay distinguishable.
        double jitter = slot * 0.3 * (static_cast<double>(points % 7) / 6.0 - 0.5);
        out += fmt::format(
            "<circle class=\"speedup\" data-turn=\"{}\" data-speedup=\"{}\" cx=\"{:.2f}\" "
            "cy=\"{:.2f}\" r=\"4\" fill=\"{}\" stroke=\"{}\" stroke-width=\"1.5\">"
            "<title>{} {} turn {}: {:.3f}× ({})</title></circle>",
            turn.turn, *turn.speedup, x_of(turn.turn) + jitter, y_of(*turn.speedup, top),
            inst ? kInstColor : "#fff", kInstColor, escape(trajectory.key.variant),
            escape(trajectory.key.trajectory), turn.turn, *turn.speedup,
            escape(turn.target_instructions));
        ++points;
      });
  if (points == 0)
    out += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"#666\">no correct turn "
        "with a measured speedup</text>",
        kLeft + 20, kTop + kPlotHeight / 4);
  out += legend_entry(
      0, fmt::format("<circle cx=\"9\" cy=\"5\" r=\"4\" fill=\"{0}\" stroke=\"{0}\"/>", kInstColor),
      "with target instr.");
  out += legend_entry(
      1, fmt::format("<circle cx=\"9\" cy=\"5\" r=\"4\" fill=\"#fff\" stroke=\"{}\"/>", kInstColor),
      "without");
  return out + "</svg>\n";
}

// Outcome shares of all turn slots at the largest limit, as one stacked bar with a legend.
std::string outcome_plot(const WindowMetrics& widest) {
  std::string out = svg_open(
      "outcomes", fmt::format("turn outcomes (≤{}, all {})", count_noun(widest.turn_limit, "turn"),
                              count_noun(widest.n_turns, "slot")));
  double bar_top = kTop + 4, bar_height = 28;
  double x = kLeft;
  int legend_row = 0;
  for (std::size_t i = 0; i < kOutcomeCount; ++i) {
    int count = widest.outcomes[i];
    if (count == 0 || widest.n_turns == 0) continue;
    double width = kPlotWidth * count / widest.n_turns;
    std::string name(outcome_name(static_cast<Outcome>(i)));
    out += fmt::format(
        "<rect class=\"outcome\" data-outcome=\"{}\" data-count=\"{}\" x=\"{:.2f}\" y=\"{}\" "
        "width=\"{:.2f}\" height=\"{}\" fill=\"{}\"><title>{}: {}</title></rect>",
        name, count, x, bar_top, width, bar_height, kOutcomeColors[i], name, count);
    x += width;
    double legend_x = kLeft + (legend_row % 2) * 180;
    double legend_y = bar_top + bar_height + 24 + (legend_row / 2) * 14;
    out += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\" stroke=\"#999\" "
        "stroke-width=\"0.5\"/><text x=\"{}\" y=\"{}\" font-size=\"10\">{} {}</text>",
        legend_x, legend_y, kOutcomeColors[i], legend_x + 14, legend_y + 9, name, count);
    ++legend_row;
  }
  // Share ticks under the bar.
  for (double tick : {0.0, 0.5, 1.0})
    out += fmt::format("<text x=\"{:.1f}\" y=\"{}\" font-size=\"10\">{:.1f}</text>",
                       kLeft + kPlotWidth * tick - 6, bar_top + bar_height + 12, tick);
  return out + "</svg>\n";
}

std::string html_table(const ReportTable& table) {
  std::string out = fmt::format("<h3>{}</h3>\n<table id=\"table-{}\" class=\"metrics\"><thead><tr>",
                                escape(table.title), table.id);
  for (const std::string& title : table.header) out += "<th>" + escape(title) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const std::vector<std::string>& row : table.rows) {
    out += "<tr>";
    for (const std::string& cell : row) out += "<td>" + escape(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

}  // namespace

std::string render_html(const std::vector<GroupMetrics>& groups,
                        const std::vector<Trajectory>& trajectories,
                        const MetricsOptions& options) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>PTXBench report</title><style>{}</style></head><body>\n<h1>PTXBench report</h1>\n"
      "<p>Per model × task × arch. Fast_p: share of turn slots that are correct with a speedup "
      "over the library above p; Fast^Inst_p: the same, with the target instructions executed. "
      "The band spans the prompt variants (min to max), the solid line is their mean, the "
      "dashed line pools all trajectories.</p>\n",
      kStyle);
  int turn_limit = options.turn_limits.back();
  for (const GroupMetrics& group : groups) {
    std::vector<const Trajectory*> members;
    for (const Trajectory& trajectory : trajectories)
      if (trajectory.key.model == group.model && trajectory.key.arch == group.arch &&
          trajectory.key.definition == group.definition &&
          trajectory.key.workload == group.workload)
        members.push_back(&trajectory);
    const LimitMetrics& widest = group.limits.back();
    out += fmt::format(
        "<section class=\"group\" data-model=\"{}\" data-task=\"{}\" data-arch=\"{}\">"
        "<h2>{} · {} · {}</h2>\n<p>{}; prompt variants: {}</p>\n",
        escape(group.model), escape(group.workload_name), escape(group.arch), escape(group.model),
        escape(group.workload_name), escape(group.arch),
        count_noun(static_cast<long long>(group.n_trajectories), "trajectory"),
        escape(join(group.variants, ", ")));
    out += curve_plot("fast_inst_p",
                      fmt::format("Fast^Inst_p (≤{})", count_noun(widest.turn_limit, "turn")),
                      options.ps, widest.over_variants.fast_inst_p, widest.pooled.fast_inst_p);
    out += curve_plot("fast_p", fmt::format("Fast_p (≤{})", count_noun(widest.turn_limit, "turn")),
                      options.ps, widest.over_variants.fast_p, widest.pooled.fast_p);
    out += correctness_by_turn_plot(members, turn_limit);
    out += speedup_by_turn_plot(members, turn_limit);
    out += outcome_plot(widest.pooled);
    out += "</section>\n";
  }
  out += "<h2>Tables</h2>\n";
  if (groups.empty()) return out + "<p>No trajectories.</p>\n</body></html>\n";
  out += "<p class=\"note\">" + escape(table_note(options)) + "</p>\n";
  for (const ReportTable& table : report_tables(groups, options)) out += html_table(table);
  return out + "</body></html>\n";
}

}  // namespace ptxb
