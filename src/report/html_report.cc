#include "report/html_report.h"

#include <algorithm>
#include <set>

#include "core/strings.h"
#include "report/html_plots.h"
#include "report/report.h"
#include "report/trajectory_viewer.h"

namespace ptxb {
namespace {

// The page's only styling, inline: a report must open offline and look the same anywhere.
constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}"
    "svg{margin:6px;border:1px solid #ddd;background:#fff}"
    "table{border-collapse:collapse;margin:8px 0 20px;font-size:12px}"
    "th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;white-space:nowrap}"
    "th{background:#f0f0f0}p.note{white-space:pre-line;font-size:13px}"
    "p.warning{background:#fff3e0;border-left:4px solid #e65100;padding:6px 10px}"
    "#matrix td.cell{text-align:center;min-width:150px;cursor:pointer;font-size:13px}"
    "#matrix td.cell .sub{font-size:11px;color:#333}#matrix td.none{color:#999}"
    "section.group h2{font-size:17px;margin:24px 0 4px}"
    ".controls label{margin-right:14px}.turn-tabs{margin:10px 0}"
    ".turn-tab{margin-right:6px;padding:3px 8px;border:1px solid #aaa;background:#f7f7f7}"
    ".turn-tab.current{background:#0d47a1;color:#fff}.turn-tab.passed{border-color:#2e7d32}"
    "pre{background:#fafafa;border:1px solid #ddd;padding:6px;font-size:11px;max-height:480px;"
    "overflow:auto}pre .add{background:#e8f5e9;display:block}"
    "pre .del{background:#ffebee;display:block}pre .same{display:block;color:#555}";

// White to green by target-instruction turn correctness, the matrix's headline figure.
std::string heat_colour(double share) {
  share = std::clamp(share, 0.0, 1.0);
  auto channel = [&](int from, int to) {
    return static_cast<int>(from + (to - from) * share + 0.5);
  };
  return fmt::format("#{:02x}{:02x}{:02x}", channel(255, 102), channel(255, 187),
                     channel(255, 106));
}

std::string matrix_cell(const GroupMetrics& group) {
  const LimitMetrics& widest = group.limits.back();
  const WindowMetrics& m = widest.pooled;
  std::string speed = m.inst_best_speedup ? fmt::format("{:.2f}×", *m.inst_best_speedup) : "—";
  std::string detail = fmt::format(
      "{} · {} · {}: target-instruction turn correctness {} (unrestricted {}), best speedup with "
      "target instructions {} (unrestricted {}), ≤{} turns, {}",
      group.model, group.definition, group.arch, format_metric(m.inst_turn_correctness),
      format_metric(m.turn_correctness), format_metric(m.inst_best_speedup),
      format_metric(m.best_speedup), widest.turn_limit,
      count_noun(group.n_trajectories, "trajectory"));
  std::string band;
  if (group.variants.size() > 1) {
    const VariantSpread& s = widest.over_variants;
    band = fmt::format("<div class=\"sub variants\">variants {:.2f}–{:.2f}",
                       s.inst_turn_correctness.min, s.inst_turn_correctness.max);
    if (s.inst_best_speedup)
      band += fmt::format(" · {:.2f}–{:.2f}×", s.inst_best_speedup->min, s.inst_best_speedup->max);
    band += "</div>";
    detail +=
        fmt::format("; over {} variants: {}", group.variants.size(), join(group.variants, ", "));
  }
  return fmt::format(
      "<td class=\"cell\" data-model=\"{}\" data-task=\"{}\" data-arch=\"{}\" "
      "style=\"background:{}\" title=\"{}\"><b>{:.2f}</b> · {}"
      "<div class=\"sub\">unrestricted {:.2f} · {}</div>{}</td>",
      html_escape(group.model), html_escape(group.definition), html_escape(group.arch),
      heat_colour(m.inst_turn_correctness), html_escape(detail), m.inst_turn_correctness, speed,
      m.turn_correctness,
      m.best_speedup ? fmt::format("{:.2f}×", *m.best_speedup) : std::string("—"), band);
}

std::string render_matrix(const std::vector<GroupMetrics>& groups) {
  std::set<std::string> models;
  std::set<std::pair<std::string, std::string>> columns;  // (task, arch)
  for (const GroupMetrics& group : groups) {
    models.insert(group.model);
    columns.insert({group.definition, group.arch});
  }
  int limit = groups.empty() ? 0 : groups.front().limits.back().turn_limit;
  std::string out = fmt::format(
      "<h2>Models × tasks</h2>\n<p>Each cell: turn correctness with the target instructions "
      "executed (bold; the colour) and the best speedup over the library among those turns, "
      "within ≤{} turns, pooled over prompt variants; below, the same without the "
      "target-instruction requirement, and the range over prompt variants where there are "
      "several. Click a cell to open its trajectories below.</p>\n"
      "<table id=\"matrix\"><thead><tr><th>model</th>",
      limit);
  for (const auto& [task, arch] : columns)
    out += "<th>" + html_escape(task) + "<br>" + html_escape(arch) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const std::string& model : models) {
    out += "<tr><th>" + html_escape(model) + "</th>";
    for (const auto& [task, arch] : columns) {
      auto found = std::find_if(groups.begin(), groups.end(), [&](const GroupMetrics& g) {
        return g.model == model && g.definition == task && g.arch == arch;
      });
      // Several workloads of one task would be several groups: the matrix shows the first and
      // the sections below show each.
      out += found == groups.end() ? "<td class=\"none\">not run</td>" : matrix_cell(*found);
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string render_runs(const std::vector<RunProvenance>& runs, const MetricsOptions& options) {
  if (runs.empty()) return "";
  std::string out =
      "<h2>Runs</h2>\n<table id=\"runs\"><thead><tr><th>run directory</th><th>date</th>"
      "<th>GPU</th><th>harness</th><th>suite</th><th>planned turns</th><th>recorded turns</th>"
      "<th>GPU stages skipped</th></tr></thead><tbody>\n";
  std::string warnings;
  for (const RunProvenance& run : runs) {
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td></tr>\n",
        html_escape(run.run_dir), html_escape(run.date.empty() ? "—" : run.date),
        html_escape(run.gpu.empty() ? "none reported" : run.gpu),
        html_escape(run.harness_version.empty() ? "—" : run.harness_version),
        html_escape(run.suite.empty() ? "—" : run.suite),
        run.planned_turns ? std::to_string(*run.planned_turns) : "—", run.recorded_turns,
        run.gpu_skipped_turns);
    if (run.recorded_turns > 0 && run.gpu_skipped_turns == run.recorded_turns)
      warnings += fmt::format(
          "<p class=\"warning\" data-run=\"{0}\">Every turn of {0} was evaluated without a GPU "
          "(gpu_skipped): nothing was run, so its correctness and speedups of 0 say nothing "
          "about the model. Run it again on a GPU.</p>\n",
          html_escape(run.run_dir));
    else if (run.gpu_skipped_turns > 0)
      warnings += fmt::format(
          "<p class=\"warning\" data-run=\"{}\">{} of {} had the GPU stages skipped and count "
          "as failures.</p>\n",
          html_escape(run.run_dir), count_noun(run.gpu_skipped_turns, "turn"), run.recorded_turns);
    for (const std::string& note : run.notes)
      warnings += "<p class=\"note\">" + html_escape(run.run_dir + ": " + note) + "</p>\n";
  }
  out += "</tbody></table>\n" + warnings;
  std::vector<std::string> limits;
  for (int k : options.turn_limits) limits.push_back("≤" + std::to_string(k));
  out += "<p class=\"note\">Turn limits shown: " + join(limits, " / ") + ".</p>\n";
  return out;
}

std::string html_table(const ReportTable& table) {
  std::string out = fmt::format("<h3>{}</h3>\n<table id=\"table-{}\" class=\"metrics\"><thead><tr>",
                                html_escape(table.title), table.id);
  for (const std::string& title : table.header) out += "<th>" + html_escape(title) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const std::vector<std::string>& row : table.rows) {
    out += "<tr>";
    for (const std::string& cell : row) out += "<td>" + html_escape(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string render_group(const GroupMetrics& group, const std::vector<Trajectory>& trajectories,
                         const MetricsOptions& options) {
  std::vector<const Trajectory*> members;
  for (const Trajectory& trajectory : trajectories)
    if (trajectory.key.model == group.model && trajectory.key.arch == group.arch &&
        trajectory.key.definition == group.definition && trajectory.key.workload == group.workload)
      members.push_back(&trajectory);
  const LimitMetrics& widest = group.limits.back();
  bool several = group.variants.size() > 1;
  std::string out = fmt::format(
      "<section class=\"group\" data-model=\"{}\" data-task=\"{}\" data-workload=\"{}\" "
      "data-arch=\"{}\"><h2>{} · {} · {}</h2>\n<p>workload {}; {}; prompt {}: {}</p>\n",
      html_escape(group.model), html_escape(group.definition), html_escape(group.workload_name),
      html_escape(group.arch), html_escape(group.definition), html_escape(group.model),
      html_escape(group.arch), html_escape(group.workload_name),
      count_noun(group.n_trajectories, "trajectory"), several ? "variants" : "variant",
      html_escape(join(group.variants, ", ")));
  std::string turns = count_noun(widest.turn_limit, "turn");
  out +=
      fast_p_plot("fast_inst_p", fmt::format("{}: Fast^Inst_p (≤{})", group.definition, turns),
                  options.ps, widest.over_variants.fast_inst_p, widest.pooled.fast_inst_p, several);
  out += fast_p_plot("fast_p", fmt::format("{}: Fast_p (≤{})", group.definition, turns), options.ps,
                     widest.over_variants.fast_p, widest.pooled.fast_p, several);
  out += correctness_by_turn_plot(members, options.turn_limits.back());
  out += speedup_by_turn_plot(members, options.turn_limits.back());
  out += outcome_plot(widest.pooled);
  return out + "</section>\n";
}

}  // namespace

std::string render_html(const std::vector<GroupMetrics>& groups,
                        const std::vector<Trajectory>& trajectories, const MetricsOptions& options,
                        const HtmlReportInputs& inputs) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>PTXBench report</title><style>{}</style></head><body>\n<h1>PTXBench report</h1>\n",
      kStyle);
  if (groups.empty()) {
    out += render_runs(inputs.runs, options);
    return out + "<p>No trajectories.</p>\n</body></html>\n";
  }
  out += render_matrix(groups);
  out += render_runs(inputs.runs, options);
  out +=
      "<h2>Per model × task × arch</h2>\n<p>Fast_p: share of turn slots that are correct with a "
      "speedup over the library above p; Fast^Inst_p: the same, with the target instructions "
      "executed. With several prompt variants the band spans them (min to max) and the solid "
      "line is their mean; the dashed line pools all trajectories.</p>\n";
  for (const GroupMetrics& group : groups) out += render_group(group, trajectories, options);
  out += "<h2>Tables</h2>\n<p class=\"note\">" + html_escape(table_note(options)) + "</p>\n";
  for (const ReportTable& table : report_tables(groups, options)) out += html_table(table);
  if (!inputs.viewer.is_null()) out += render_viewer(inputs.viewer);
  return out + "</body></html>\n";
}

}  // namespace ptxb
