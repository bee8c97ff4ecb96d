// The HTML report of three models as a browser shows it: `ptxbench report --html` renders
// testdata/runs/golden_gemm and golden_mha (model-x, turn records only), the replay model's
// recorded H200 run (bench/results/replay-paper-h100) and the scripted model's run of the report
// demo (bench/results/report-demo/scripted-run, with its kernels), headless Chromium loads it once
// with a probe script appended, and the tests check the DOM it built: the matrix, plots, bands,
// table cells against hand-computed values, legend boxes disjoint from plot boxes (measured by the
// browser's layout), axis labels, the trajectory viewer's navigation; and that its screenshot shows
// a drawn page. Skipped, saying why, where Chromium is not installed.
//
// Hand-computed values (≤1/≤2/≤4 turns; the turns are listed in tests/metrics/metrics_test.cc):
// gemm, 5 trajectories. Correct turns: no-hint t0.2 (0.8, DP), t0.3 (1.0, DP), t1.1 (1.0,
// unknown); cluster-multicast t0.1 (1.0, DP), t0.2 (1.0, DP), t2.2 (1.5, static_absent).
//   turn correctness with target instructions 1/5, 3/10, 4/20; unrestricted 2/5, 5/10, 6/20
//   trajectories with a correct turn: DP 1/5, 2/5, 2/5; unrestricted 2/5, 4/5, 4/5
//   best speedup: DP 1.0 at every limit; unrestricted 1.0, 1.5, 1.5
//   Fast_1 (s > 1 strictly): DP none; unrestricted only the 1.5: 0/5, 1/10, 1/20
// mha, 2 trajectories; one correct turn (t1.1, DP, speedup not measured):
//   turn correctness 1/2, 1/4, 1/8 both ways; trajectories 1/2; best speedup none (—); Fast_1 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "../cli/cli_test_util.h"
#include "browser_util.h"
#include "core/fs.h"
#include "core/json_io.h"
#include "core/strings.h"
#include "metrics/metrics.h"
#include "png_image.h"

namespace ptxb {
namespace {

using testing::Dom;
using testing::DomElement;

const std::string kRuns = std::string(PTXB_TESTDATA_DIR) + "/runs";
const std::string kReplayRun = std::string(PTXB_SOURCE_DIR) + "/bench/results/replay-paper-h100";
const char* const kGoldenTasks[] = {"gemm_n7168_k5120", "mha_with_lse_d128"};
const char* const kReplayTasks[] = {"gemm_n7168_k5120", "mha_bwd_d128", "mha_bwd_d128_causal",
                                    "mha_with_lse_d128", "mha_with_lse_d128_causal"};
const std::string kScriptedRun =
    std::string(PTXB_SOURCE_DIR) + "/bench/results/report-demo/scripted-run";
const char* const kScriptedTasks[] = {"gemm_n7168_k5120", "mha_bwd_d128", "mha_with_lse_d128"};
constexpr std::size_t kGroups =
    std::size(kGoldenTasks) + std::size(kReplayTasks) + std::size(kScriptedTasks);

// Appended to a copy of the report before </body>: runs after the viewer's script, measures the
// layout the browser computed, drives the viewer like a reader, and leaves what it saw as JSON
// in <pre id="probe">, which --dump-dom then carries out.
constexpr const char* kProbeScript = R"JS(<script>
(function () {
  var out = {plots: 0, legends: 0, overlaps: [], nav: []};
  document.querySelectorAll('svg.plot').forEach(function (svg) {
    out.plots++;
    var area = svg.querySelector('rect.plot-area').getBoundingClientRect();
    svg.querySelectorAll('g.legend').forEach(function (g) {
      out.legends++;
      var b = g.getBoundingClientRect();
      if (!(b.right <= area.left || b.left >= area.right || b.bottom <= area.top ||
            b.top >= area.bottom))
        out.overlaps.push(svg.closest('section').dataset.task + ' ' + svg.dataset.plot);
    });
  });
  var panel = document.getElementById('viewer-turn');
  function state() {
    return [panel.dataset.model, panel.dataset.task, panel.dataset.trajectory, panel.dataset.turn,
            panel.querySelectorAll('pre.diff').length, panel.querySelectorAll('pre.source').length,
            panel.querySelectorAll('pre.feedback').length,
            panel.querySelectorAll('table.families tr').length].join('|');
  }
  function choose(id, value) {
    var box = document.getElementById(id);
    box.value = value;
    box.dispatchEvent(new Event('change'));
  }
  out.nav.push(state());
  choose('viewer-model', 'replay');
  out.nav.push(state());
  choose('viewer-task', 'mha_bwd_d128');
  out.nav.push(state());
  document.querySelector('#viewer-turns button[data-turn="1"]').click();
  out.nav.push(state());
  document.querySelector('td.cell[data-model="model-x"][data-task="mha_with_lse_d128"]').click();
  out.nav.push(state());
  choose('viewer-model', 'scripted');
  out.nav.push(state());
  document.querySelector('#viewer-turns button[data-turn="1"]').click();
  out.nav.push(state());
  // The cell's click scrolled the viewer into view; headless Chromium's screenshot wants the
  // page at its top.
  window.scrollTo(0, 0);
  var pre = document.createElement('pre');
  pre.id = 'probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>)JS";
constexpr int kWindowWidth = 1400, kWindowHeight = 3000;
const char* const kPlots[] = {"fast_inst_p", "fast_p", "correct_by_turn", "speedup_by_turn",
                              "outcomes"};

// The group section of `task` for `model` (default: the golden runs' model-x).
const DomElement* section(const Dom& dom, const std::string& task,
                          const std::string& model = "model-x") {
  const DomElement* match = nullptr;
  for (const DomElement* found : dom.find("section", "data-task", task)) {
    if (found->attribute("data-model") != model) continue;
    if (match) return nullptr;
    match = found;
  }
  return match;
}

using Rows = std::vector<std::vector<std::string>>;

// Cell texts of table `id`, row by row (body rows only).
Rows table(const Dom& dom, const std::string& id) {
  Rows rows;
  auto tables = dom.find("table", "id", "table-" + id);
  if (tables.size() != 1) return rows;
  auto bodies = dom.find("tbody", "", "", tables[0]);
  if (bodies.size() != 1) return rows;
  for (const DomElement* row : dom.find("tr", "", "", bodies[0])) {
    rows.emplace_back();
    for (const DomElement* cell : dom.find("td", "", "", row))
      rows.back().push_back(dom.text(*cell));
  }
  return rows;
}

void check_one_svg_per_plot(const Dom& dom) {
  const std::size_t groups = kGroups;
  EXPECT_EQ(dom.find("section", "class", "group").size(), groups);
  for (const char* task : kGoldenTasks) {
    const DomElement* group = section(dom, task);
    ASSERT_NE(group, nullptr) << task;
    EXPECT_EQ(dom.find("svg", "", "", group).size(), std::size(kPlots)) << task;
    for (const char* plot : kPlots)
      EXPECT_EQ(dom.find("svg", "data-plot", plot, group).size(), 1u) << task << " " << plot;
  }
  EXPECT_EQ(dom.find("svg").size(), groups * std::size(kPlots));  // no stray plots elsewhere
}

void check_matrix(const Dom& dom) {
  auto matrix = dom.find("table", "id", "matrix");
  ASSERT_EQ(matrix.size(), 1u);
  // One cell per model × task × arch: model-x has two tasks, replay five, scripted three; the
  // other rows show "not run" under the tasks they did not run (3 + 2).
  auto cells = dom.find("td", "class", "cell", matrix[0]);
  EXPECT_EQ(cells.size(), kGroups);
  std::set<std::string> keys;
  for (const DomElement* cell : cells)
    keys.insert(cell->attribute("data-model") + "/" + cell->attribute("data-task") + "/" +
                cell->attribute("data-arch"));
  EXPECT_EQ(keys.size(), cells.size());
  EXPECT_TRUE(keys.count("replay/mha_bwd_d128_causal/sm_90a"));
  EXPECT_EQ(dom.find("td", "class", "none", matrix[0]).size(), 5u);
  // gemm of model-x: 4/20 turn slots correct with target instructions at ≤4, best 1.00×; its two
  // variants range 2/12 (cluster-multicast) to 2/8 (no-hint).
  for (const DomElement* cell : cells) {
    if (cell->attribute("data-model") != "model-x" ||
        cell->attribute("data-task") != "gemm_n7168_k5120")
      continue;
    std::string text = dom.text(*cell);
    EXPECT_EQ(text.rfind("0.20 · 1.00×", 0), 0u) << text;
    EXPECT_NE(text.find("variants 0.17–0.25"), std::string::npos) << text;
  }
  // Provenance: the replay run's plan and summary.
  auto runs = dom.find("table", "id", "runs");
  ASSERT_EQ(runs.size(), 1u);
  std::string text = dom.text(*runs[0]);
  for (const char* needle : {"NVIDIA H200", "0.1.0+fef2eb6", "2026-11-29T18:02:31Z", "paper-h100"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
}

// Every plot labels its axes (the outcome bar has an x axis only) and the speedup plots label
// their 1× line.
void check_axis_labels(const Dom& dom) {
  for (const DomElement* svg : dom.find("svg", "class", "plot")) {
    std::string plot = svg->attribute("data-plot");
    std::size_t y_labels = 0, x_labels = 0;
    for (const DomElement* label : dom.find("text", "class", "axis-label", svg)) {
      EXPECT_FALSE(dom.text(*label).empty()) << plot;
      y_labels += label->attribute("data-axis") == "y";
      x_labels += label->attribute("data-axis") == "x";
    }
    EXPECT_EQ(x_labels, 1u) << plot;
    EXPECT_EQ(y_labels, plot == "outcomes" ? 0u : 1u) << plot;
    if (plot == "speedup_by_turn") {
      auto parity = dom.find("text", "class", "parity-label", svg);
      ASSERT_EQ(parity.size(), 1u);
      EXPECT_EQ(dom.text(*parity[0]), "1× = library");
    }
  }
}

// The band's outline: the upper edge over every p, then the lower edge back.
std::vector<std::pair<double, double>> path_points(const std::string& d) {
  std::vector<std::pair<double, double>> points;
  for (std::string part : split(d, ' ')) {
    if (part.empty() || part == "Z") continue;
    if (part[0] == 'M' || part[0] == 'L') part = part.substr(1);
    std::vector<std::string> xy = split(part, ',');
    if (xy.size() == 2) points.emplace_back(std::stod(xy[0]), std::stod(xy[1]));
  }
  return points;
}

double polygon_area(const std::vector<std::pair<double, double>>& points) {
  double twice = 0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& [x0, y0] = points[i];
    const auto& [x1, y1] = points[(i + 1) % points.size()];
    twice += x0 * y1 - x1 * y0;
  }
  return std::abs(twice) / 2;
}

void check_band_paths(const Dom& dom) {
  const std::size_t n_ps = kDefaultFastPs.size();
  for (const char* task : kGoldenTasks) {
    const DomElement* group = section(dom, task);
    ASSERT_NE(group, nullptr) << task;
    for (const char* plot : {"fast_inst_p", "fast_p"}) {
      auto svgs = dom.find("svg", "data-plot", plot, group);
      ASSERT_EQ(svgs.size(), 1u);
      auto bands = dom.find("path", "class", "band", svgs[0]);
      EXPECT_EQ(dom.find("polyline", "class", "pooled", svgs[0]).size(), 1u);
      // mha has one variant: no band and no mean line, only the pooled line.
      if (std::string(task) == "mha_with_lse_d128") {
        EXPECT_TRUE(bands.empty()) << plot;
        EXPECT_TRUE(dom.find("polyline", "class", "mean", svgs[0]).empty()) << plot;
        continue;
      }
      ASSERT_EQ(bands.size(), 1u) << task << " " << plot;
      std::string d = bands[0]->attribute("d");
      EXPECT_EQ(d.front(), 'M') << d;
      EXPECT_EQ(d.back(), 'Z') << d;
      // Step edges: each p but the first adds a vertex at the previous value, so each edge has
      // 2·|p| − 1 vertices.
      auto points = path_points(d);
      EXPECT_EQ(points.size(), 2 * (2 * n_ps - 1)) << d;
      EXPECT_EQ(dom.find("polyline", "class", "mean", svgs[0]).size(), 1u);
      // gemm's two variants differ (at p = 0.5, ≤4: Fast_p 3/12 vs 3/8), so its Fast_p band has
      // area.
      if (std::string(plot) == "fast_p") {
        EXPECT_GT(polygon_area(points), 1.0) << d;
      }
    }
  }
}

void check_per_turn_plots(const Dom& dom) {
  const DomElement* gemm = section(dom, "gemm_n7168_k5120");
  ASSERT_NE(gemm, nullptr);
  std::vector<std::string> bars, inst_bars;
  for (const DomElement* bar : dom.find("rect", "class", "turn", gemm))
    bars.push_back(dom.text(*bar));
  for (const DomElement* bar : dom.find("rect", "class", "turn-inst", gemm))
    inst_bars.push_back(dom.text(*bar));
  EXPECT_EQ(bars,
            (std::vector<std::string>{"turn 1: 2/5", "turn 2: 3/5", "turn 3: 1/5", "turn 4: 0/5"}));
  EXPECT_EQ(inst_bars,
            (std::vector<std::string>{
                "turn 1 with target instructions: 1/5", "turn 2 with target instructions: 2/5",
                "turn 3 with target instructions: 1/5", "turn 4 with target instructions: 0/5"}));
  // Six correct turns with a speedup; REWARD_HACK's 9× is not among them.
  std::multiset<std::string> speedups;
  for (const DomElement* point : dom.find("circle", "class", "speedup", gemm))
    speedups.insert(point->attribute("data-turn") + "@" + point->attribute("data-speedup"));
  EXPECT_EQ(speedups, (std::multiset<std::string>{"1@1", "1@1", "2@0.8", "2@1", "2@1.5", "3@1"}));
  const DomElement* mha = section(dom, "mha_with_lse_d128");
  ASSERT_NE(mha, nullptr);
  EXPECT_TRUE(dom.find("circle", "class", "speedup", mha).empty());
  EXPECT_NE(dom.text(*mha).find("no correct turn with a measured speedup"), std::string::npos);

  // Outcome bar segments add up to every turn slot (5 trajectories × 4).
  int slots = 0;
  for (const DomElement* segment : dom.find("rect", "class", "outcome", gemm))
    slots += std::stoi(segment->attribute("data-count"));
  EXPECT_EQ(slots, 20);
}

Rows first_rows(Rows rows, std::size_t n) {
  rows.resize(std::min(rows.size(), n));
  return rows;
}

void check_table_cells(const Dom& dom) {
  // model-x sorts first; the replay and scripted groups follow (two rows each).
  EXPECT_EQ(table(dom, "pooled").size(), 2 * kGroups);
  EXPECT_EQ(first_rows(table(dom, "pooled"), 4),
            (Rows{{"model-x", "gemm_n7168_k5120_M8192", "sm_90a", "5", "0.200 / 0.300 / 0.200",
                   "0.200 / 0.400 / 0.400", "1.000 / 1.000 / 1.000", "0.000 / 0.000 / 0.000"},
                  {"", "", "", "", "(0.400 / 0.500 / 0.300)", "(0.400 / 0.800 / 0.800)",
                   "(1.000 / 1.500 / 1.500)", "(0.000 / 0.100 / 0.050)"},
                  {"model-x", "mha_with_lse_d128_S4096", "sm_90a", "2", "0.500 / 0.250 / 0.125",
                   "0.500 / 0.500 / 0.500", "— / — / —", "0.000 / 0.000 / 0.000"},
                  {"", "", "", "", "(0.500 / 0.250 / 0.125)", "(0.500 / 0.500 / 0.500)",
                   "(— / — / —)", "(0.000 / 0.000 / 0.000)"}}));

  // Outcomes at ≤4: gemm no_code 1, forbidden 1, compile 1, memory 1, numerical 1, integrity 1,
  // correct 6, infra 1, missing 7 (20 slots), one unknown check; mha runtime 1, timeout 1,
  // numerical (shape) 1, correct 1, missing 4 (8 slots).
  EXPECT_EQ(first_rows(table(dom, "outcomes"), 2),
            (Rows{{"model-x", "gemm_n7168_k5120_M8192", "sm_90a", "1", "1", "1", "1", "0", "0", "1",
                   "1", "6", "1", "7", "1"},
                  {"model-x", "mha_with_lse_d128_S4096", "sm_90a", "0", "0", "0", "0", "1", "1",
                   "1", "0", "1", "0", "4", "0"}}));

  // Per variant: cluster-multicast's DP turn correctness 1/3, 2/6, 2/12; no-hint's 0/2, 1/4,
  // 2/8; their mean (1/6, 7/24, 5/24) on the `mean` row.
  // gemm: two variants and mean, min, max (10 rows); every other group: one variant and no
  // mean/min/max rows repeating it (2 rows each).
  Rows variants = table(dom, "variants");
  ASSERT_EQ(variants.size(), 10u + 2 * (kGroups - 1));
  EXPECT_EQ(variants[12][3], "base");  // replay's gemm, after model-x's mha (rows 10, 11)
  EXPECT_EQ(variants[0][3], "cluster-multicast");
  EXPECT_EQ(variants[0][4], "0.333 / 0.333 / 0.167");
  EXPECT_EQ(variants[1][4], "(0.333 / 0.500 / 0.250)");
  EXPECT_EQ(variants[2][3], "no-hint");
  EXPECT_EQ(variants[2][4], "0.000 / 0.250 / 0.250");
  EXPECT_EQ(variants[4][3], "mean");
  EXPECT_EQ(variants[4][4], "0.167 / 0.292 / 0.208");
  // Headers name the windows.
  auto headers = dom.find("th", "", "", dom.find("table", "id", "table-pooled").at(0));
  ASSERT_EQ(headers.size(), 8u);
  EXPECT_EQ(dom.text(*headers[4]), "turn correctness ≤1/≤2/≤4");
}

// The viewer's data block holds kernels and feedback texts, which may quote anything; the rest
// of the file, and every element the browser built, must not refer outside the file.
void check_self_contained(const std::string& html_path, const Dom& dom) {
  auto written = read_file(html_path, 1 << 24);
  ASSERT_TRUE(written.ok()) << written.error().message;
  std::string page = written.value();
  const std::string open = "<script type=\"application/json\" id=\"viewer-data\">";
  auto data_begin = page.find(open);
  ASSERT_NE(data_begin, std::string::npos);
  auto data_end = page.find("</script>", data_begin);
  ASSERT_NE(data_end, std::string::npos);
  page.erase(data_begin, data_end - data_begin);
  for (const char* needle :
       {"http:", "https:", "//", "<link", "<img", "<iframe", "<object", "<embed", "@import",
        "@font-face", "url(", " src=", " href=", "xlink:", "fetch(", "XMLHttpRequest"})
    EXPECT_EQ(page.find(needle), std::string::npos) << needle;
  for (const DomElement& element : dom.elements()) {
    for (const char* attribute : {"src", "href", "xlink:href", "srcset", "action", "data"})
      EXPECT_TRUE(element.attribute(attribute).empty()) << element.name << " " << attribute;
    for (const char* tag : {"link", "img", "iframe", "object", "embed", "image", "use"})
      EXPECT_NE(element.name, tag);
  }
  // Our two inline scripts (the data block and the viewer) and the probe the test appended.
  EXPECT_EQ(dom.find("script").size(), 3u);
  EXPECT_EQ(dom.find("style").size(), 1u);  // the inline one
}

// What the probe script measured and did (kProbeScript).
void check_layout_and_viewer(const Dom& dom) {
  auto probe = dom.find("pre", "id", "probe");
  ASSERT_EQ(probe.size(), 1u) << "the probe script did not run";
  auto result = parse_json(dom.text(*probe[0]), "probe");
  ASSERT_TRUE(result.ok()) << result.error().message;
  const Json& out = result.value();
  EXPECT_EQ(out["plots"], kGroups * std::size(kPlots));
  EXPECT_GT(out["legends"].get<int>(), 0);
  EXPECT_EQ(out["overlaps"], Json::array()) << "legends covering a plot box";
  // model|task|trajectory|turn|diffs|sources|feedbacks|family rows, after each step:
  std::vector<std::string> nav = out["nav"].get<std::vector<std::string>>();
  ASSERT_EQ(nav.size(), 7u);
  // 1. Opened on the first trajectory (model-x gemm, cluster-multicast t0), at its last turn;
  //    the golden runs have turn records only: no kernel, feedback or counts.
  EXPECT_EQ(nav[0].rfind("model-x|gemm_n7168_k5120|t0|", 0), 0u) << nav[0];
  EXPECT_TRUE(ends_with(nav[0], "|0|0|0|0")) << nav[0];
  // 2. Model replay: its first task (gemm), last turn 2, with its feedback and a header row plus
  //    GMMA and TMA rows of target-instruction counts. (Its kernels are repository files, shown
  //    only while the repository still holds the evaluated bytes: not checked here.)
  EXPECT_EQ(nav[1].rfind("replay|gemm_n7168_k5120|replay__gemm_n7168_k5120__base__t0|2|", 0), 0u)
      << nav[1];
  EXPECT_TRUE(ends_with(nav[1], "|1|3")) << nav[1];
  // 3. Task mha_bwd_d128: its trajectory at turn 2. 4. The turn-1 tab.
  EXPECT_EQ(nav[2].rfind("replay|mha_bwd_d128|replay__mha_bwd_d128__base__t0|2|", 0), 0u) << nav[2];
  EXPECT_EQ(nav[3].rfind("replay|mha_bwd_d128|replay__mha_bwd_d128__base__t0|1|0|", 0), 0u)
      << nav[3];
  // 5. The matrix cell of model-x × mha_with_lse_d128: its first trajectory.
  EXPECT_EQ(nav[4].rfind("model-x|mha_with_lse_d128|", 0), 0u) << nav[4];
  // 6. Model scripted (kernels in its run directory): gemm turn 2 with the diff to turn 1, the
  //    kernel and the feedback; the fake evaluator records no target-instruction counts.
  EXPECT_EQ(nav[5], "scripted|gemm_n7168_k5120|scripted__gemm_n7168_k5120__base__t0|2|1|1|1|0");
  // 7. Its turn 1: no previous kernel, no diff.
  EXPECT_EQ(nav[6], "scripted|gemm_n7168_k5120|scripted__gemm_n7168_k5120__base__t0|1|0|1|1|0");
}

void check_screenshot(const std::string& png) {
  auto image = testing::decode_png(png);
  ASSERT_TRUE(image.ok()) << image.error().message;
  EXPECT_EQ(image->width, kWindowWidth);
  EXPECT_EQ(image->height, kWindowHeight);
  std::size_t not_white = 0, correct_green = 0;
  std::set<uint32_t> colours;
  for (int y = 0; y < image->height; ++y) {
    for (int x = 0; x < image->width; ++x) {
      const uint8_t* rgb = image->at(x, y);
      uint32_t colour = (rgb[0] << 16) | (rgb[1] << 8) | rgb[2];
      colours.insert(colour);
      not_white += colour != 0xffffff;
      correct_green += colour == 0x2e7d32;  // the "correct" bars and outcome segments
    }
  }
  // A blank or failed render is one colour, and text alone is grey anti-aliasing. Measured with
  // Chromium 156 (2026-11-29): 7 % of the pixels drawn, ~1250 colours, ~14400 green pixels;
  // the bounds leave room for other fonts, which change the text's share and colours.
  std::size_t total = static_cast<std::size_t>(image->width) * image->height;
  EXPECT_GT(not_white, total / 40) << not_white << " of " << total;
  EXPECT_GT(colours.size(), 100u);
  EXPECT_GT(correct_green, 5000u);
}

// One test and one browser run: ctest runs every test in a process of its own, and Chromium's
// start-up is most of the cost (5–8 s on a loaded 2-core machine).
TEST(HtmlReportInBrowser, ThreeModelsMatrixPlotsTablesViewerAndAScreenshot) {
  auto chromium = testing::find_chromium();
  if (!chromium) {
    GTEST_SKIP() << "chromium is not on PATH: install the Debian package `chromium` "
                    "(scripts/setup.sh does) to render the HTML report in a browser";
  }
  auto dir = make_temp_directory("ptxb-html-browser");
  ASSERT_TRUE(dir.ok()) << dir.error().message;
  struct RemoveOnExit {
    std::string path;
    ~RemoveOnExit() { remove_tree(path); }
  } cleanup{dir.value()};
  std::string html_path = dir.value() + "/report.html";
  ProcessResult cli =
      testing::run_cli({"report", kRuns + "/golden_gemm", kRuns + "/golden_mha", kReplayRun,
                        kScriptedRun, "--turn-limits", "1,2,4", "--html", html_path});
  ASSERT_EQ(cli.exit_code, 0) << cli.stderr_text;
  auto page = read_file(html_path, 1 << 24);
  ASSERT_TRUE(page.ok()) << page.error().message;
  std::string probed = page.value();
  auto body_end = probed.rfind("</body>");
  ASSERT_NE(body_end, std::string::npos);
  probed.insert(body_end, kProbeScript);
  std::string probe_path = dir.value() + "/probe.html";
  ASSERT_TRUE(write_file_atomic(probe_path, probed).ok());
  auto render =
      testing::render_in_chromium(*chromium, probe_path, dir.value(), kWindowWidth, kWindowHeight);
  ASSERT_TRUE(render.ok()) << render.error().message;
  Dom dom(render->dom);
  {
    SCOPED_TRACE("one <svg> per plot");
    check_one_svg_per_plot(dom);
  }
  {
    SCOPED_TRACE("matrix and provenance");
    check_matrix(dom);
  }
  {
    SCOPED_TRACE("axis labels");
    check_axis_labels(dom);
  }
  {
    SCOPED_TRACE("layout and viewer navigation");
    check_layout_and_viewer(dom);
  }
  {
    SCOPED_TRACE("min-max band paths");
    check_band_paths(dom);
  }
  {
    SCOPED_TRACE("per-turn plots");
    check_per_turn_plots(dom);
  }
  {
    SCOPED_TRACE("table cells");
    check_table_cells(dom);
  }
  {
    SCOPED_TRACE("self-contained");
    check_self_contained(html_path, dom);
  }
  {
    SCOPED_TRACE("screenshot");
    check_screenshot(render->screenshot_png);
  }
}

}  // namespace
}  // namespace ptxb
