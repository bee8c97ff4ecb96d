// The adversarial suite on a GPU: every entry of testdata/integrity/expected.json through the
// real `ptxbench eval`, its verdict compared with the manifest. Skipped unless
// PTXB_INTEGRITY_SUITE=1: `scripts/gpu_check.sh integrity` sets it on the H200 (with the
// installed binaries, the canary and the output folder) and fits the whole run in one 10-minute
// command.
//
// Environment: PTXB_INTEGRITY_SUITE=1 (run), PTXB_INTEGRITY_CLI (ptxbench; default the one this
// binary was built with), PTXB_INTEGRITY_OUT (results.json, results.md; default a temp dir),
// PTXB_INTEGRITY_SANDBOX=1 (the sandbox is present: run the requires_sandbox entries and the
// sandbox-class reruns without static checks), PTXB_INTEGRITY_CANARY (a secret planted in the
// environment that must not appear in any result), PTXB_INTEGRITY_ONLY (comma-separated ids),
// PTXB_INTEGRITY_BUDGET_S (default 540: what is left when it runs out is reported as not run).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <set>
#include <thread>

#include "../support/tree_paths.h"
#include "core/process.h"
#include "core/strings.h"
#include "integrity_manifest.h"

namespace ptxb::integrity {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string env_or(const char* name, const std::string& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

struct Row {
  std::string id;
  std::string phase;  // "all checks" | "without static checks"
  std::string expected;
  std::string got;
  std::string verdict;  // ok | MISMATCH | skipped | not run
  std::string note;
  double seconds = 0;
  std::string message;
};

// Files write_outside_scratch.cu tries to create; any that exists is a hole.
std::vector<std::string> marker_paths(const std::string& cli) {
  // Next to the runner: beside ptxbench in a build tree, in libexec/ptxbench in an install.
  const std::string bin = fs::path(cli).parent_path().string();
  std::vector<std::string> paths = {
      bin + "/ptxbench_exploit_marker", bin + "/../libexec/ptxbench/ptxbench_exploit_marker",
      "/var/tmp/ptxbench_exploit_marker", "/root/.ptxbench_exploit_marker"};
  return paths;
}

class Suite {
 public:
  Suite() {
    cli_ = env_or("PTXB_INTEGRITY_CLI", tree::cli());
    sandbox_ = env_or("PTXB_INTEGRITY_SANDBOX", "0") == "1";
    canary_ = env_or("PTXB_INTEGRITY_CANARY", "");
    for (const auto& id : split(env_or("PTXB_INTEGRITY_ONLY", ""), ','))
      if (!trim(id).empty()) only_.insert(std::string(trim(id)));
    deadline_ =
        Clock::now() + std::chrono::seconds(std::stoi(env_or("PTXB_INTEGRITY_BUDGET_S", "540")));
  }

  bool selected(const Entry& e) const { return only_.empty() || only_.count(e.id); }
  bool sandbox() const { return sandbox_; }

  // Warms the compile cache for every (file, task, mode) in parallel, so each eval's compile is
  // a cache hit (nvcc is the slow part on a fresh machine).
  void precompile(const Manifest& m) {
    std::vector<std::vector<std::string>> commands;
    std::set<std::string> seen;
    for (const auto& e : m.entries) {
      if (!selected(e)) continue;
      for (bool off : {false, true}) {
        if (off && !e.without_static_checks) continue;
        if (!seen.insert(e.file + e.task + (off ? "off" : "")).second) continue;
        std::vector<std::string> argv = {cli_,   "--tasks-dir", m.tasks_dir, "compile",
                                         e.file, "--task",      e.task,      "--json"};
        if (off) argv.push_back("--test-disable-static-checks");
        commands.push_back(argv);
      }
    }
    const std::size_t jobs = std::max(2u, std::thread::hardware_concurrency());
    for (std::size_t first = 0; first < commands.size(); first += jobs) {
      std::vector<std::future<void>> batch;
      for (std::size_t i = first; i < std::min(commands.size(), first + jobs); ++i)
        batch.push_back(std::async(std::launch::async, [argv = commands[i]] {
          ProcessSpec spec;
          spec.argv = argv;
          spec.timeout = std::chrono::seconds(300);
          spec.output_cap_bytes = 32u << 20;
          (void)SystemProcessRunner().run(spec);
        }));
      for (auto& f : batch) f.get();
    }
  }

  Row evaluate(const Manifest& m, const Entry& e, bool static_off) {
    Row row;
    row.id = e.id;
    row.phase = static_off ? "without static checks" : "all checks";
    if (static_off) {
      std::string accept;
      for (const auto& a : e.without_static_checks->accept)
        accept += (accept.empty() ? "" : " or ") + a.describe();
      row.expected = accept;
    } else {
      row.expected = e.expected.describe();
    }
    if (Clock::now() > deadline_) {
      row.verdict = "not run";
      row.note = "time budget spent";
      return row;
    }
    ProcessSpec spec;
    spec.argv = {cli_, "--tasks-dir", m.tasks_dir, "eval", e.file, "--task", e.task, "--json"};
    spec.argv.insert(spec.argv.end(), e.eval_flags.begin(), e.eval_flags.end());
    if (static_off) spec.argv.push_back("--test-disable-static-checks");
    spec.timeout = std::chrono::seconds(240);
    spec.output_cap_bytes = 64u << 20;
    const auto start = Clock::now();
    auto ran = SystemProcessRunner().run(spec);
    row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (!ran.ok() || ran->timed_out) {
      row.verdict = "MISMATCH";
      row.got = ran.ok() ? "eval timed out" : ran.error().message;
      return row;
    }
    auto json = parse_json(ran->stdout_text, e.id);
    if (!json.ok()) {
      row.verdict = "MISMATCH";
      row.got = "no JSON: " + trim(ran->stderr_text).substr(0, 300);
      return row;
    }
    Observed observed = observe_eval(*json);
    row.got = observed.describe();
    row.message = observed.message.substr(0, 300);
    std::string why = static_off ? mismatch_any(e.without_static_checks->accept, observed)
                                 : mismatch(e.expected, observed);
    if (!canary_.empty() && (ran->stdout_text.find(canary_) != std::string::npos ||
                             ran->stderr_text.find(canary_) != std::string::npos)) {
      why += (why.empty() ? "" : "; ") + std::string("the planted API key reached the result");
    }
    for (const auto& marker : marker_paths(cli_)) {
      if (fs::exists(marker)) {
        why += (why.empty() ? "" : "; ") + ("a file was written outside scratch: " + marker);
        std::error_code ignored;
        fs::remove(marker, ignored);
      }
    }
    row.verdict = why.empty() ? "ok" : "MISMATCH";
    row.note = why;
    return row;
  }

 private:
  std::string cli_;
  bool sandbox_ = false;
  std::string canary_;
  std::set<std::string> only_;
  Clock::time_point deadline_;
};

std::string markdown(const std::vector<Row>& rows, bool sandbox) {
  std::string md = "# PTXBench adversarial suite\n\n";
  md += fmt::format("Sandbox present: {}. Manifest: testdata/integrity/expected.json.\n\n",
                    sandbox ? "yes" : "no (requires_sandbox entries and sandbox reruns skipped)");
  md += "| entry | phase | expected | got | verdict | s | note |\n|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows)
    md += fmt::format("| {} | {} | {} | {} | {} | {:.1f} | {} |\n", r.id, r.phase, r.expected,
                      r.got, r.verdict, r.seconds, replace_all(r.note, "|", "/"));
  return md;
}

TEST(IntegritySuiteOnGpu, EveryEntryGetsItsExpectedVerdict) {
  if (env_or("PTXB_INTEGRITY_SUITE", "") != "1")
    GTEST_SKIP() << "GPU run of the adversarial suite: scripts/gpu_check.sh integrity on the H200";
  auto manifest = load_manifest(tree::testdata_dir() + "/integrity/expected.json");
  ASSERT_TRUE(manifest.ok()) << manifest.error().message;
  Suite suite;
  suite.precompile(*manifest);
  std::vector<Row> rows;
  for (const auto& e : manifest->entries) {
    if (!suite.selected(e)) continue;
    if (e.requires_sandbox && !suite.sandbox()) {
      rows.push_back(Row{e.id, "all checks", e.expected.describe(), "", "skipped",
                         "needs the sandbox", 0, ""});
      continue;
    }
    rows.push_back(suite.evaluate(*manifest, e, false));
    std::cout << rows.back().id << ": " << rows.back().verdict << " (" << rows.back().got << ")"
              << std::endl;
  }
  // The runtime backstops behind the static checks need no sandbox; the sandbox-class reruns do.
  for (const auto& e : manifest->entries) {
    if (!suite.selected(e) || !e.without_static_checks) continue;
    if (e.sandbox_class && !suite.sandbox()) {
      std::string accept;
      for (const auto& a : e.without_static_checks->accept)
        accept += (accept.empty() ? "" : " or ") + a.describe();
      rows.push_back(
          Row{e.id, "without static checks", accept, "", "skipped", "needs the sandbox", 0, ""});
      continue;
    }
    rows.push_back(suite.evaluate(*manifest, e, true));
    std::cout << rows.back().id << " (no static checks): " << rows.back().verdict << " ("
              << rows.back().got << ")" << std::endl;
  }

  const std::string out_dir = env_or("PTXB_INTEGRITY_OUT", fs::temp_directory_path().string());
  Json json = Json::array();
  for (const auto& r : rows)
    json.push_back(Json{{"id", r.id},
                        {"phase", r.phase},
                        {"expected", r.expected},
                        {"got", r.got},
                        {"verdict", r.verdict},
                        {"note", r.note},
                        {"seconds", r.seconds},
                        {"message", r.message}});
  const std::string md = markdown(rows, suite.sandbox());
  EXPECT_TRUE(write_file_atomic(out_dir + "/integrity_results.json", json.dump(2) + "\n").ok());
  EXPECT_TRUE(write_file_atomic(out_dir + "/integrity_results.md", md).ok());
  std::cout << md;
  for (const auto& r : rows)
    EXPECT_TRUE(r.verdict == "ok" || r.verdict == "skipped")
        << r.id << " [" << r.phase << "]: " << r.verdict << " " << r.note;
}

}  // namespace
}  // namespace ptxb::integrity
