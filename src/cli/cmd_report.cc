// `ptxbench report RUN_DIR... [--json] [--csv DIR] [--html FILE]
//                  [--turn-limits 1,4,8] [--fast-p 0,0.5,...]`
// Reads the turn records of one or more run directories (docs/report.md), computes the paper's
// metrics per model × task × arch (design.md §3.7) and prints them as markdown tables, or as JSON;
// --csv also writes the plot-data CSVs, --html a self-contained page with SVG plots.
// Exit codes: 0 done, 1 unreadable run data, 2 usage.
#include <algorithm>
#include <iostream>

#include "cli/command.h"
#include "core/fs.h"
#include "llm/replay_model.h"
#include "metrics/metrics.h"
#include "metrics/turn_record.h"
#include "report/html_report.h"
#include "report/report.h"
#include "report/run_details.h"
#include "report/trajectory_viewer.h"

namespace ptxb::cli {
namespace {

struct ReportFlags {
  std::vector<std::string> run_dirs;
  std::vector<int> turn_limits = kDefaultTurnLimits;
  std::vector<double> ps = kDefaultFastPs;
  std::string csv_dir;
  std::string html_path;
  bool json = false;
};

// Kernels the replay model answered are recorded as references to repository files
// (turnN.kernel.json); the viewer shows them from the solutions folder this build knows.
KernelRefResolver replay_resolver() {
  auto model = std::make_shared<std::unique_ptr<ReplayModel>>();
  return [model](const Json& ref) -> Result<std::string> {
    if (!*model) {
      PTXB_ASSIGN_OR_RETURN(std::string dir, default_replay_dir());
      PTXB_ASSIGN_OR_RETURN(*model, ReplayModel::load(dir));
    }
    const Json* variant = ref.contains("variant") ? &ref["variant"] : nullptr;
    if (!variant || !variant->is_object() || !variant->contains("task") ||
        !(*variant)["task"].is_string() || !variant->contains("turn") ||
        !(*variant)["turn"].is_number_integer())
      return make_error("report", "no variant.task / variant.turn");
    return (*model)->kernel_source((*variant)["task"].get<std::string>(),
                                   (*variant)["turn"].get<int>());
  };
}

}  // namespace

CommandSpec make_report_command() {
  return {
      "report",
      "Metrics of agent runs (turn correctness, best speedup, Fast_p, with and without "
      "target instructions) as tables, JSON or CSV",
      [](CLI::App& app, const GlobalOptions&) -> CommandBody {
        auto flags = std::make_shared<ReportFlags>();
        app.add_option("run_dirs", flags->run_dirs,
                       "Run directories, each holding turns.jsonl (docs/report.md)")
            ->required()
            ->check(CLI::ExistingDirectory);
        app.add_flag("--json", flags->json, "Print every metric as JSON instead of tables");
        app.add_option("--csv", flags->csv_dir,
                       "Also write the plot-data CSV files into this directory");
        app.add_option("--html", flags->html_path,
                       "Also write a self-contained HTML report with SVG plots to this file");
        app.add_option("--turn-limits", flags->turn_limits,
                       "Turn limits k of the ≤k windows, comma-separated (default 1,4,8)")
            ->delimiter(',')
            ->check(number_at_least(1, true));
        app.add_option("--fast-p", flags->ps,
                       "Thresholds p of the Fast_p curves (default 0,0.5,0.8,1,1.2,1.5,2)")
            ->delimiter(',')
            ->check(number_at_least(0, true));
        return [flags]() -> Result<int> {
          MetricsOptions options;
          options.turn_limits = flags->turn_limits;
          options.ps = flags->ps;
          // Sorted and unique, so tables read ≤1/≤4/≤8 whatever order was typed.
          std::sort(options.turn_limits.begin(), options.turn_limits.end());
          options.turn_limits.erase(
              std::unique(options.turn_limits.begin(), options.turn_limits.end()),
              options.turn_limits.end());
          std::sort(options.ps.begin(), options.ps.end());
          options.ps.erase(std::unique(options.ps.begin(), options.ps.end()), options.ps.end());
          if (options.turn_limits.empty() || options.ps.empty())
            return make_error("usage", "--turn-limits and --fast-p need at least one value");

          std::vector<std::string> notes;
          PTXB_ASSIGN_OR_RETURN(std::vector<Trajectory> trajectories,
                                load_run_dirs(flags->run_dirs, &notes));
          for (const std::string& note : notes) std::cerr << "ptxbench: warning: " << note << "\n";
          std::vector<RunProvenance> runs;
          for (const std::string& dir : flags->run_dirs)
            runs.push_back(load_provenance(dir, trajectories));
          int run_turns = run_turn_count(runs, trajectories);
          // Windows past the runs' planned turns would count never-planned turns as
          // failures; the table headers show the limits used (docs/report.md).
          options.turn_limits = limits_within_run(options.turn_limits, run_turns);
          std::vector<GroupMetrics> groups = compute_metrics(trajectories, options);
          if (!flags->csv_dir.empty()) {
            PTXB_RETURN_IF_ERROR(write_csv_files(flags->csv_dir, groups, trajectories, options));
          }
          if (!flags->html_path.empty()) {
            PTXB_RETURN_IF_ERROR(write_file_atomic(
                flags->html_path,
                render_html(groups, trajectories, options,
                            {runs, viewer_data(trajectories, replay_resolver())})));
          }
          if (flags->json)
            print_json(report_to_json(groups, options));
          else
            std::cout << render_markdown(groups, options) << std::flush;
          return 0;
        };
      }};
}

}  // namespace ptxb::cli
