#include "report/html_plots.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/strings.h"
#include "eval/eval_types.h"

namespace ptxb {
namespace {

// Plot geometry in SVG user units, shared by every plot so the page reads as a grid. Below the
// plot box: tick labels, the x-axis label, then the legend strip.
constexpr double kWidth = 420, kHeight = 270;
constexpr double kLeft = 52, kRight = 14, kTop = 24, kPlotHeight = 170;
constexpr double kPlotWidth = kWidth - kLeft - kRight, kPlotBottom = kTop + kPlotHeight;
constexpr double kLegendTop = kPlotBottom + 40;

// Eleven outcome colours, in Outcome order (correct is green, missing grey).
constexpr std::array<const char*, kOutcomeCount> kOutcomeColors = {
    "#9e9e9e", "#6a1b9a", "#e65100", "#c62828", "#ef5350", "#8d6e63",
    "#f9a825", "#000000", "#2e7d32", "#1565c0", "#e0e0e0"};
constexpr const char* kCorrectColor = "#2e7d32";
constexpr const char* kInstColor = "#0d47a1";
constexpr const char* kBandColor = "#90caf9";

double y_of(double value, double top) {
  return kTop + kPlotHeight * (1.0 - std::clamp(value / top, 0.0, 1.0));
}

std::string tick_label(double value) {
  std::string text = fmt::format("{:.2f}", value);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string svg_open(const std::string& plot, const std::string& title) {
  return fmt::format(
      "<svg class=\"plot\" data-plot=\"{}\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "role=\"img\"><title>{}</title>"
      "<text x=\"{}\" y=\"14\" font-size=\"12\" font-weight=\"bold\">{}</text>"
      "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#eee\"/>",
      plot, kWidth, kHeight, kWidth, kHeight, html_escape(title), kLeft, html_escape(title), kLeft,
      kTop, kPlotWidth, kPlotHeight);
}

// Axes, y ticks with grid lines, and both axis labels (<text class="axis-label">).
std::string axes(const std::vector<double>& y_ticks, double top, const std::string& y_label,
                 const std::string& x_label, const std::string& unit = "") {
  std::string out = fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#444\"/>",
      kLeft, kTop, kPlotBottom, kLeft + kPlotWidth);
  for (double tick : y_ticks) {
    double y = y_of(tick, top);
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#f0f0f0\"/>"
        "<text class=\"tick\" x=\"{}\" y=\"{:.1f}\" font-size=\"10\" "
        "text-anchor=\"end\">{}{}</text>",
        kLeft + 1, y, kLeft + kPlotWidth, y, kLeft - 4, y + 3, tick_label(tick), unit);
  }
  out += fmt::format(
      "<text class=\"axis-label\" data-axis=\"y\" x=\"0\" y=\"0\" font-size=\"11\" "
      "text-anchor=\"middle\" transform=\"translate(13,{:.1f}) rotate(-90)\">{}</text>",
      kTop + kPlotHeight / 2, html_escape(y_label));
  out += fmt::format(
      "<text class=\"axis-label\" data-axis=\"x\" x=\"{:.1f}\" y=\"{}\" font-size=\"11\" "
      "text-anchor=\"middle\">{}</text>",
      kLeft + kPlotWidth / 2, kPlotBottom + 30, html_escape(x_label));
  return out;
}

std::string x_tick(double x, const std::string& label) {
  return fmt::format(
      "<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" font-size=\"10\" "
      "text-anchor=\"middle\">{}</text>",
      x, kPlotBottom + 13, html_escape(label));
}

// Legend entries side by side in the strip below the axes; `slot` counts from the left.
std::string legend_entry(int slot, const std::string& swatch, const std::string& label) {
  double x = kLeft + (slot % 3) * 120, y = kLegendTop + (slot / 3) * 14;
  return fmt::format(
      "<g class=\"legend\" transform=\"translate({:.1f},{:.1f})\">{}"
      "<text x=\"24\" y=\"9\" font-size=\"10\">{}</text></g>",
      x, y, swatch, html_escape(label));
}

std::string swatch_rect(const char* colour, double opacity = 1.0) {
  return fmt::format("<rect width=\"18\" height=\"9\" fill=\"{}\" fill-opacity=\"{}\"/>", colour,
                     opacity);
}

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

}  // namespace

std::string html_escape(const std::string& text) {
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

std::vector<double> nice_ticks(double largest) {
  if (!(largest > 0)) return {0, 0.5, 1};
  double magnitude = std::pow(10.0, std::floor(std::log10(largest)));
  double step = magnitude;
  for (double factor : {0.2, 0.5, 1.0, 2.0}) {
    // The first step that needs at most five intervals to reach `largest`.
    if (largest / (magnitude * factor) <= 5.0 + 1e-9) {
      step = magnitude * factor;
      break;
    }
  }
  std::vector<double> ticks;
  for (int i = 0; ticks.empty() || ticks.back() < largest - 1e-9; ++i) ticks.push_back(step * i);
  return ticks;
}

std::string fast_p_plot(const std::string& plot, const std::string& title,
                        const std::vector<double>& ps, const std::vector<Spread>& spread,
                        const std::vector<double>& pooled, bool several_variants) {
  double lo = ps.front(), hi = ps.back();
  double span = hi > lo ? hi - lo : 1.0;
  auto x_of = [&](double p) { return kLeft + kPlotWidth * (p - lo) / span; };
  std::string out =
      svg_open(plot, title) +
      axes({0, 0.25, 0.5, 0.75, 1}, 1.0, "share of turn slots", "speedup threshold p (× library)");
  for (double p : ps) out += x_tick(x_of(p), tick_label(p));
  // A step function: each sampled value holds from its p up to the next p.
  auto steps = [&](auto value_at) {
    std::vector<std::pair<double, double>> points;
    for (std::size_t i = 0; i < ps.size(); ++i) {
      double y = y_of(value_at(i), 1.0);
      if (i > 0) points.emplace_back(x_of(ps[i]), y_of(value_at(i - 1), 1.0));
      points.emplace_back(x_of(ps[i]), y);
    }
    return points;
  };
  auto polyline = [](const std::vector<std::pair<double, double>>& points) {
    std::string text;
    for (const auto& [x, y] : points) text += fmt::format("{:.2f},{:.2f} ", x, y);
    return trim(text);
  };
  int slot = 0;
  if (several_variants) {
    auto upper = steps([&](std::size_t i) { return spread[i].max; });
    auto lower = steps([&](std::size_t i) { return spread[i].min; });
    std::string band = "M";
    for (std::size_t i = 0; i < upper.size(); ++i)
      band += fmt::format("{}{:.2f},{:.2f}", i ? " L" : "", upper[i].first, upper[i].second);
    for (std::size_t i = lower.size(); i-- > 0;)
      band += fmt::format(" L{:.2f},{:.2f}", lower[i].first, lower[i].second);
    out += fmt::format(
        "<path class=\"band\" d=\"{} Z\" fill=\"{}\" fill-opacity=\"0.5\" stroke=\"{}\" "
        "stroke-width=\"0.5\"/>",
        band, kBandColor, kBandColor);
    out += fmt::format(
        "<polyline class=\"mean\" points=\"{}\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"1.5\"/>",
        polyline(steps([&](std::size_t i) { return spread[i].mean; })), kInstColor);
    out += legend_entry(slot++, swatch_rect(kBandColor, 0.5), "min–max over variants");
    out += legend_entry(
        slot++,
        fmt::format("<line x1=\"0\" y1=\"5\" x2=\"18\" y2=\"5\" stroke=\"{}\"/>", kInstColor),
        "mean over variants");
  }
  out += "<polyline class=\"pooled\" points=\"" +
         polyline(steps([&](std::size_t i) { return pooled[i]; })) +
         "\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.5\" stroke-dasharray=\"4 3\"/>";
  out += legend_entry(
      slot, "<line x1=\"0\" y1=\"5\" x2=\"18\" y2=\"5\" stroke=\"#333\" stroke-dasharray=\"4 3\"/>",
      several_variants ? "pooled" : "all trajectories");
  return out + "</svg>\n";
}

std::string correctness_by_turn_plot(const std::vector<const Trajectory*>& members,
                                     int turn_limit) {
  std::string out = svg_open("correct_by_turn", "correct turns by turn index") +
                    axes({0, 0.25, 0.5, 0.75, 1}, 1.0, "share of trajectories", "turn");
  std::vector<int> correct(turn_limit + 1, 0), with_inst(turn_limit + 1, 0);
  for_each_window_turn(members, turn_limit, [&](const Trajectory&, const TurnRecord& turn) {
    correct[turn.turn] += turn.correct();
    with_inst[turn.turn] += has_target_instructions(turn);
  });
  double slot = kPlotWidth / turn_limit;
  std::size_t n = std::max<std::size_t>(members.size(), 1);
  for (int index = 1; index <= turn_limit; ++index) {
    double x = kLeft + slot * (index - 1) + slot * 0.15, width = slot * 0.35;
    double share = static_cast<double>(correct[index]) / n;
    double inst_share = static_cast<double>(with_inst[index]) / n;
    out += fmt::format(
        "<rect class=\"turn\" data-turn=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
        "height=\"{:.2f}\" fill=\"{}\"><title>turn {}: {}/{}</title></rect>",
        index, x, y_of(share, 1.0), width, kPlotBottom - y_of(share, 1.0), kCorrectColor, index,
        correct[index], members.size());
    out += fmt::format(
        "<rect class=\"turn-inst\" data-turn=\"{}\" x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" "
        "height=\"{:.2f}\" fill=\"{}\"><title>turn {} with target instructions: {}/{}</title>"
        "</rect>",
        index, x + width, y_of(inst_share, 1.0), width, kPlotBottom - y_of(inst_share, 1.0),
        kInstColor, index, with_inst[index], members.size());
    out += x_tick(x + width, std::to_string(index));
  }
  out += legend_entry(0, swatch_rect(kCorrectColor), "correct");
  out += legend_entry(1, swatch_rect(kInstColor), "correct + target instr.");
  return out + "</svg>\n";
}

std::string speedup_by_turn_plot(const std::vector<const Trajectory*>& members, int turn_limit) {
  double largest = 0;
  for_each_window_turn(members, turn_limit, [&](const Trajectory&, const TurnRecord& turn) {
    if (turn.correct() && turn.speedup) largest = std::max(largest, *turn.speedup);
  });
  // At least up to 1.5× so the parity line never sits on the top edge.
  std::vector<double> ticks = nice_ticks(std::max(1.5, largest));
  double top = ticks.back();
  std::string out = svg_open("speedup_by_turn", "speedup of correct turns by turn index") +
                    axes(ticks, top, "speedup (× library)", "turn", "×");
  double slot = kPlotWidth / turn_limit;
  auto x_of = [&](int index) { return kLeft + slot * (index - 0.5); };
  for (int index = 1; index <= turn_limit; ++index)
    out += x_tick(x_of(index), std::to_string(index));
  out += fmt::format(
      "<line class=\"parity\" x1=\"{}\" y1=\"{:.2f}\" x2=\"{}\" y2=\"{:.2f}\" stroke=\"#888\" "
      "stroke-dasharray=\"2 2\"/><text class=\"parity-label\" x=\"{}\" y=\"{:.2f}\" "
      "font-size=\"10\" fill=\"#666\" text-anchor=\"end\">1× = library</text>",
      kLeft, y_of(1.0, top), kLeft + kPlotWidth, y_of(1.0, top), kLeft + kPlotWidth - 2,
      y_of(1.0, top) - 3);
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
            inst ? kInstColor : "#fff", kInstColor, html_escape(trajectory.key.variant),
            html_escape(trajectory.key.trajectory), turn.turn, *turn.speedup,
            html_escape(turn.target_instructions));
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

std::string outcome_plot(const WindowMetrics& widest) {
  std::string title =
      fmt::format("turn outcomes (≤{}, all {})", count_noun(widest.turn_limit, "turn"),
                  count_noun(widest.n_turns, "slot"));
  std::string out = fmt::format(
      "<svg class=\"plot\" data-plot=\"outcomes\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\" role=\"img\"><title>{2}</title>"
      "<text x=\"{3}\" y=\"14\" font-size=\"12\" font-weight=\"bold\">{2}</text>",
      kWidth, kHeight, html_escape(title), kLeft);
  double bar_top = kTop + 8, bar_height = 28;
  out += fmt::format(
      "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
      "stroke=\"#eee\"/>",
      kLeft, bar_top, kPlotWidth, bar_height);
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
    double legend_y = bar_top + bar_height + 40 + (legend_row / 2) * 14;
    out += fmt::format(
        "<g class=\"legend\"><rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\" "
        "stroke=\"#999\" stroke-width=\"0.5\"/><text x=\"{}\" y=\"{}\" font-size=\"10\">{} {}"
        "</text></g>",
        legend_x, legend_y, kOutcomeColors[i], legend_x + 14, legend_y + 9, name, count);
    ++legend_row;
  }
  for (double tick : {0.0, 0.25, 0.5, 0.75, 1.0})
    out += fmt::format(
        "<text class=\"tick\" x=\"{:.1f}\" y=\"{}\" font-size=\"10\" "
        "text-anchor=\"middle\">{}</text>",
        kLeft + kPlotWidth * tick, bar_top + bar_height + 12, tick_label(tick));
  out += fmt::format(
      "<text class=\"axis-label\" data-axis=\"x\" x=\"{:.1f}\" y=\"{}\" font-size=\"11\" "
      "text-anchor=\"middle\">share of turn slots</text>",
      kLeft + kPlotWidth / 2, bar_top + bar_height + 26);
  return out + "</svg>\n";
}

}  // namespace ptxb
