// The HTML report of the golden runs as a browser shows it: `ptxbench report --html` renders
// testdata/runs/golden_gemm and golden_mha, headless Chromium loads the file once, and the tests
// check the DOM it built (plots, bands, table cells against hand-computed values) and that its
// screenshot shows a drawn page. Skipped, saying why, where Chromium is not installed.
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

#include <cmath>
#include <set>
#include <utility>

#include "../cli/cli_test_util.h"
#include "browser_util.h"
#include "core/fs.h"
#include "metrics/metrics.h"
#include "png_image.h"

namespace ptxb {
namespace {

using testing::Dom;
using testing::DomElement;

const std::string kRuns = std::string(PTXB_TESTDATA_DIR) + "/runs";
constexpr int kWindowWidth = 1400, kWindowHeight = 3000;
const char* const kPlots[] = {"fast_inst_p", "fast_p", "correct_by_turn", "speedup_by_turn",
                              "outcomes"};

const DomElement* section(const Dom& dom, const std::string& task) {
  auto found = dom.find("section", "data-task", task);
  return found.size() == 1 ? found[0] : nullptr;
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
  EXPECT_EQ(dom.find("section").size(), 2u);
  for (const char* task : {"gemm_n7168_k5120_M8192", "mha_with_lse_d128_S4096"}) {
    const DomElement* group = section(dom, task);
    ASSERT_NE(group, nullptr) << task;
    EXPECT_EQ(dom.find("svg", "", "", group).size(), std::size(kPlots)) << task;
    for (const char* plot : kPlots)
      EXPECT_EQ(dom.find("svg", "data-plot", plot, group).size(), 1u) << task << " " << plot;
  }
  EXPECT_EQ(dom.find("svg").size(), 2 * std::size(kPlots));  // no stray plots elsewhere
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
  for (const char* task : {"gemm_n7168_k5120_M8192", "mha_with_lse_d128_S4096"}) {
    const DomElement* group = section(dom, task);
    ASSERT_NE(group, nullptr) << task;
    for (const char* plot : {"fast_inst_p", "fast_p"}) {
      auto svgs = dom.find("svg", "data-plot", plot, group);
      ASSERT_EQ(svgs.size(), 1u);
      auto bands = dom.find("path", "class", "band", svgs[0]);
      ASSERT_EQ(bands.size(), 1u) << task << " " << plot;
      std::string d = bands[0]->attribute("d");
      EXPECT_EQ(d.front(), 'M') << d;
      EXPECT_EQ(d.back(), 'Z') << d;
      auto points = path_points(d);
      EXPECT_EQ(points.size(), 2 * n_ps) << d;
      EXPECT_EQ(dom.find("polyline", "class", "mean", svgs[0]).size(), 1u);
      EXPECT_EQ(dom.find("polyline", "class", "pooled", svgs[0]).size(), 1u);
      double area = polygon_area(points);
      // gemm's two variants differ (at p = 0.5, ≤4: Fast_p 3/12 vs 3/8), so its Fast_p band has
      // width; mha has one variant, so min = max and its band is a zero-area outline.
      if (std::string(task) == "gemm_n7168_k5120_M8192" && std::string(plot) == "fast_p") {
        EXPECT_GT(area, 1.0) << d;
      }
      if (std::string(task) == "mha_with_lse_d128_S4096") {
        EXPECT_NEAR(area, 0.0, 1e-6) << d;
      }
    }
  }
}

void check_per_turn_plots(const Dom& dom) {
  const DomElement* gemm = section(dom, "gemm_n7168_k5120_M8192");
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
  const DomElement* mha = section(dom, "mha_with_lse_d128_S4096");
  ASSERT_NE(mha, nullptr);
  EXPECT_TRUE(dom.find("circle", "class", "speedup", mha).empty());
  EXPECT_NE(dom.text(*mha).find("no correct turn with a measured speedup"), std::string::npos);

  // Outcome bar segments add up to every turn slot (5 trajectories × 4).
  int slots = 0;
  for (const DomElement* segment : dom.find("rect", "class", "outcome", gemm))
    slots += std::stoi(segment->attribute("data-count"));
  EXPECT_EQ(slots, 20);
}

void check_table_cells(const Dom& dom) {
  EXPECT_EQ(table(dom, "pooled"),
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
  EXPECT_EQ(table(dom, "outcomes"), (Rows{{"model-x", "gemm_n7168_k5120_M8192", "sm_90a", "1", "1",
                                           "1", "1", "0", "0", "1", "1", "6", "1", "7", "1"},
                                          {"model-x", "mha_with_lse_d128_S4096", "sm_90a", "0", "0",
                                           "0", "0", "1", "1", "1", "0", "1", "0", "4", "0"}}));

  // Per variant: cluster-multicast's DP turn correctness 1/3, 2/6, 2/12; no-hint's 0/2, 1/4,
  // 2/8; their mean (1/6, 7/24, 5/24) on the `mean` row.
  Rows variants = table(dom, "variants");
  ASSERT_GE(variants.size(), 6u);
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

void check_self_contained(const std::string& html_path, const Dom& dom) {
  // Neither the file we wrote nor the DOM the browser built refers to anything outside it.
  auto written = read_file(html_path, 1 << 22);
  ASSERT_TRUE(written.ok()) << written.error().message;
  for (const std::string* text : {&std::as_const(written.value()), &dom.html()}) {
    for (const char* needle :
         {"http:", "https:", "//", "<script", "<link", "<img", "<iframe", "<object", "<embed",
          "@import", "@font-face", "url(", " src=", " href=", "xlink:"})
      EXPECT_EQ(text->find(needle), std::string::npos) << needle;
  }
  EXPECT_TRUE(dom.find("script").empty());
  EXPECT_EQ(dom.find("style").size(), 1u);  // the inline one
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
TEST(HtmlReportInBrowser, GoldenRunsShowPlotsBandsTablesAndAScreenshot) {
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
  ProcessResult cli = testing::run_cli({"report", kRuns + "/golden_gemm", kRuns + "/golden_mha",
                                        "--turn-limits", "1,2,4", "--html", html_path});
  ASSERT_EQ(cli.exit_code, 0) << cli.stderr_text;
  auto render =
      testing::render_in_chromium(*chromium, html_path, dir.value(), kWindowWidth, kWindowHeight);
  ASSERT_TRUE(render.ok()) << render.error().message;
  Dom dom(render->dom);
  {
    SCOPED_TRACE("one <svg> per plot");
    check_one_svg_per_plot(dom);
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
