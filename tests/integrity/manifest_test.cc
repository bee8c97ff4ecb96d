// The adversarial suite without a GPU: the manifest is complete and consistent (files, counts,
// reasons, documentation), and every exploit and legitimate kernel compiles, or is refused as
// FORBIDDEN for the stated reason, with the real toolchain (skipped where nvcc is missing).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <map>
#include <set>
#include <string_view>
#include <thread>

#include "../support/tree_paths.h"
#include "compile/toolchain.h"
#include "core/process.h"
#include "core/strings.h"
#include "eval/integrity_reasons.h"
#include "integrity_manifest.h"

namespace ptxb::integrity {
namespace {

namespace fs = std::filesystem;

const std::string kManifest = tree::testdata_dir() + "/integrity/expected.json";

Manifest load() {
  auto m = load_manifest(kManifest);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : Manifest{};
}

// A reason is known when the verdict table has it with this status (legit: PASSED, no reason).
std::string unknown_outcome(const Outcome& o) {
  if (o.status == "PASSED") return o.reason.empty() ? "" : "PASSED carries no reason";
  auto r = reason::find_verdict_reason(o.reason);
  if (!r) return "unknown reason '" + o.reason + "'";
  if (ptxb_status_name(r->status) != o.status)
    return "reason '" + o.reason + "' is " + std::string(ptxb_status_name(r->status)) + ", not " +
           o.status;
  return "";
}

TEST(IntegrityManifest, EntriesAreCompleteAndConsistent) {
  Manifest m = load();
  ASSERT_FALSE(m.entries.empty());
  EXPECT_TRUE(fs::is_regular_file(m.tasks_dir + "/tasks.json")) << m.tasks_dir;
  std::set<std::string> ids, exploit_files, legit_files;
  int exploit_entries = 0, legit_entries = 0;
  for (const auto& e : m.entries) {
    SCOPED_TRACE(e.id);
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicate id";
    EXPECT_TRUE(fs::is_regular_file(e.file)) << e.file;
    EXPECT_FALSE(e.task.empty());
    EXPECT_EQ(unknown_outcome(e.expected), "");
    ASSERT_TRUE(e.compile.status == "OK" || e.compile.status == "FORBIDDEN") << e.compile.status;
    if (e.compile.status == "FORBIDDEN") {
      EXPECT_EQ(unknown_outcome(e.compile), "");
      // Refused at compile time: that is the evaluation's verdict too.
      EXPECT_EQ(e.expected.status, "FORBIDDEN");
      EXPECT_EQ(e.expected.reason, e.compile.reason);
    }
    EXPECT_TRUE(e.expected.time_used.empty() || e.expected.time_used == "bound" ||
                e.expected.time_used == "cupti")
        << e.expected.time_used;
    if (e.kind == "exploit") {
      ++exploit_entries;
      exploit_files.insert(e.file);
      // Stopped: rejected; or neutralised, PASSED because the harness took the advantage away
      // (the entry names how in neutralised_by), or PASSED with the supervisor's batch bound in
      // place of a forged time (time_used "bound"): it gains nothing either way.
      if (e.expected.status == "PASSED")
        EXPECT_TRUE(!e.neutralised_by.empty() || e.expected.time_used == "bound")
            << "an exploit must be stopped or neutralised";
      else
        EXPECT_TRUE(e.neutralised_by.empty()) << "a neutralised exploit runs to a verdict";
    } else {
      ASSERT_EQ(e.kind, "legit");
      ++legit_entries;
      legit_files.insert(e.file);
      EXPECT_EQ(e.expected.status, "PASSED");
      EXPECT_EQ(e.compile.status, "OK");
    }
    if (e.without_static_checks) {
      EXPECT_FALSE(e.without_static_checks->accept.empty());
      EXPECT_FALSE(e.without_static_checks->mechanism.empty());
      EXPECT_TRUE(e.without_static_checks->stopped_by == "sandbox" ||
                  e.without_static_checks->stopped_by == "runtime check");
      EXPECT_EQ(e.sandbox_class, e.without_static_checks->stopped_by == "sandbox");
      for (const auto& a : e.without_static_checks->accept) {
        EXPECT_EQ(unknown_outcome(a), "");
        EXPECT_NE(a.status, "PASSED");
      }
    }
    // Only the sandbox can stop what no static check sees: such entries say so.
    if (e.requires_sandbox) EXPECT_TRUE(e.sandbox_class);
  }
  // The issue's minimums: 20 exploits (24 files), 8 legitimate kernels.
  EXPECT_GE(exploit_entries, 20);
  EXPECT_GE(exploit_files.size(), 24u);
  EXPECT_GE(legit_entries, 8);
  EXPECT_GE(legit_files.size(), 8u);
  // Every kernel in the folders is in the manifest, and states what it expects at the top.
  for (const char* folder : {"exploits", "legit"}) {
    for (const auto& file : fs::directory_iterator(m.root + "/" + folder)) {
      const std::string path = file.path().string();
      EXPECT_TRUE(exploit_files.count(path) || legit_files.count(path)) << path << " not listed";
      auto text = read_file(path, 1u << 20);
      ASSERT_TRUE(text.ok());
      EXPECT_TRUE(starts_with(*text, "// Adversarial suite")) << path;
      EXPECT_NE(text->find("// Expected"), std::string::npos) << path;
    }
  }
}

// "PASSED with the bound in place of the time": status and time_used are both compared.
TEST(IntegrityManifest, TimeUsedIsReadFromTheBatchBoundAndCompared) {
  const Outcome expected = outcome_from_json(Json{{"status", "PASSED"}, {"time_used", "bound"}});
  auto result_with = [](const Json& integrity) {
    return Json{{"status", "PASSED"}, {"workloads", Json::array({Json{{"integrity", integrity}}})}};
  };
  const Observed bound = observe_eval(result_with({{"batch_bound", {{"time_used", "bound"}}}}));
  EXPECT_EQ(bound.time_used, "bound");
  EXPECT_EQ(mismatch(expected, bound), "");
  const Observed cupti = observe_eval(result_with({{"batch_bound", {{"time_used", "cupti"}}}}));
  EXPECT_NE(mismatch(expected, cupti), "");
  const Observed absent = observe_eval(result_with(nullptr));
  EXPECT_EQ(absent.time_used, "");
  EXPECT_NE(mismatch(expected, absent), "");
  // Without a time_used expectation, the field is not looked at.
  EXPECT_EQ(mismatch(outcome_from_json(Json{{"status", "PASSED"}}), cupti), "");
}

TEST(IntegrityManifest, TheSuiteCoversTheIssuesExploitsAndPaperTasks) {
  Manifest m = load();
  std::set<std::string> ids;
  int paper = 0;
  for (const auto& e : m.entries) {
    ids.insert(e.id);
    if (e.task == "gemm_n7168_k5120") ++paper;
  }
  for (const char* required : {"second_stream",
                               "background_thread",
                               "cache_last_result",
                               "stale_partial_output",
                               "zero_inputs",
                               "constant_output",
                               "cublas_dlopen",
                               "cublas_prototype",
                               "spawn_process",
                               "fake_passed_print",
                               "env_api_key",
                               "network_socket",
                               "write_outside_scratch",
                               "read_harness_files",
                               "exit_in_run",
                               "host_hang",
                               "device_hang",
                               "huge_allocation",
                               "fork_bomb",
                               "proc_write_supervisor",
                               "timing_event_join",
                               "timing_sleep_host",
                               "timing_set_clocks",
                               "runtime_ptx_entry_point",
                               "multi_kernel",
                               "malloc_async_scratch",
                               "tensor_map_cached",
                               "persistent_kernel",
                               "cluster_launch",
                               "pdl_launch"})
    EXPECT_TRUE(ids.count(required)) << required;
  EXPECT_GE(paper, 2);
}

TEST(IntegrityManifest, DocsListEveryIntegrityReasonAndSandboxMechanism) {
  auto doc = read_file(tree::source_dir() + "/docs/integrity.md", 1u << 20);
  ASSERT_TRUE(doc.ok());
  ASSERT_NE(doc->find("## Integrity checks"), std::string::npos);
  for (const auto& r : reason::verdict_reasons())
    if (r.status == PtxbStatus::kRewardHack || r.status == PtxbStatus::kForbidden)
      EXPECT_NE(doc->find("`" + std::string(r.reason) + "`"), std::string::npos) << r.reason;
  for (const auto& e : load().entries)
    if (e.sandbox_class) EXPECT_NE(doc->find("`" + e.id + "`"), std::string::npos) << e.id;
}

struct CompileRun {
  std::string key;
  std::vector<std::string> argv;
  Result<ProcessResult> result = make_error("pending", "not run");
};

// `ptxbench compile` of the kernels, in parallel; the compile cache makes reruns cheap. By
// default only the entries the static checks must reject (what a GPU-less CI can verify): the
// whole suite is 48 nvcc builds, about 6 minutes on 2 cores. `scripts/gpu_check.sh integrity` runs
// every entry on the device (PTXB_INTEGRITY_COMPILE=all, its CLI in PTXB_INTEGRITY_CLI, and
// ptxbench-testing for the reruns without static checks in PTXB_INTEGRITY_TESTING_CLI).
TEST(IntegrityManifest, EveryKernelCompilesOrIsForbiddenAsStated) {
  SystemProcessRunner probe_runner;
  if (!Toolchain::discover(probe_runner).ok()) GTEST_SKIP() << "no CUDA toolchain (nvcc) here";
  const char* scope_env = std::getenv("PTXB_INTEGRITY_COMPILE");
  const bool all = scope_env != nullptr && std::string_view(scope_env) == "all";
  const char* cli_env = std::getenv("PTXB_INTEGRITY_CLI");
  const std::string cli = cli_env != nullptr && *cli_env != '\0' ? cli_env : tree::cli();
  // The static-checks-off reruns need the test-only option of ptxbench-testing.
  const char* testing_env = std::getenv("PTXB_INTEGRITY_TESTING_CLI");
  const std::string testing_cli =
      testing_env != nullptr && *testing_env != '\0' ? testing_env : tree::testing_cli();
  if (!all)
    std::cout
        << "compiling only the entries expected FORBIDDEN at compile time; "
           "PTXB_INTEGRITY_COMPILE=all (scripts/gpu_check.sh integrity) compiles every entry\n";
  Manifest m = load();
  std::map<std::string, const Entry*> by_key;
  std::vector<CompileRun> runs;
  for (const auto& e : m.entries) {
    if (!all && e.compile.status != "FORBIDDEN") continue;
    for (bool disabled : {false, all}) {
      // Entries rerun without the static checks must then compile, so the rerun can load them.
      if (disabled && !(e.without_static_checks && e.compile.status == "FORBIDDEN")) continue;
      const std::string key = e.file + "|" + e.task + (disabled ? "|static-off" : "");
      if (by_key.count(key)) continue;
      by_key[key] = &e;
      CompileRun run;
      run.key = key;
      const std::string& bin = disabled ? testing_cli : cli;
      run.argv = {bin, "--tasks-dir", m.tasks_dir, "compile", e.file, "--task", e.task, "--json"};
      if (disabled) run.argv.push_back("--test-disable-static-checks");
      runs.push_back(std::move(run));
    }
  }
  const std::size_t jobs = std::max(2u, std::thread::hardware_concurrency());
  for (std::size_t first = 0; first < runs.size(); first += jobs) {
    std::vector<std::future<void>> batch;
    for (std::size_t i = first; i < std::min(runs.size(), first + jobs); ++i) {
      batch.push_back(std::async(std::launch::async, [&run = runs[i]] {
        ProcessSpec spec;
        spec.argv = run.argv;
        spec.timeout = std::chrono::seconds(600);
        spec.output_cap_bytes = 32u << 20;
        run.result = SystemProcessRunner().run(spec);
      }));
    }
    for (auto& f : batch) f.get();
  }
  for (const auto& run : runs) {
    SCOPED_TRACE(run.key);
    const Entry& e = *by_key.at(run.key);
    ASSERT_TRUE(run.result.ok()) << run.result.error().message;
    auto json = parse_json(run.result->stdout_text, run.key);
    ASSERT_TRUE(json.ok()) << run.result->stderr_text.substr(0, 2000);
    Observed got = observe_compile(*json);
    const bool static_off = ends_with(run.key, "|static-off");
    const Outcome expected = static_off ? Outcome{"OK", "", "", {}} : e.compile;
    EXPECT_EQ(mismatch(expected, got), "") << got.message;
    if (static_off) EXPECT_FALSE(json->value("forbidden", Json::array()).empty());
  }
}

}  // namespace
}  // namespace ptxb::integrity
