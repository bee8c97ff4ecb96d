// The evaluator's status paths with fakes for the GPU, the runner processes and the profilers
// (supervisor/eval_backend.h): every verdict the supervisor can reach, without a GPU.
#include "supervisor/evaluator.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <thread>

#include "analysis/ncu_work.h"
#include "analysis/source_context.h"
#include "core/fs.h"
#include "core/strings.h"
#include "eval/feedback.h"
#include "protocol/self_contained_spec.h"
#include "sandbox/blocked_syscall.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"
#include "supervisor/profile_plan.h"
#include "tasks/registry.h"

namespace ptxb {
namespace {

using std::chrono::milliseconds;

std::string testdata(const std::string& path) {
  auto text = read_file(std::string(PTXB_TESTDATA_DIR) + "/" + path, 16u << 20);
  EXPECT_TRUE(text.ok()) << path;
  return text.ok() ? *text : "";
}

constexpr std::uint64_t kSecret = 20261228;

// A passing comparison of the GEMM's output C, which tests then spoil field by field.
OutputCheck passing_check(int set, int trial) {
  OutputCheck c;
  c.output = "C";
  c.set = set;
  c.trial = trial;
  c.num_elements = 100;
  return c;
}

struct FakeDevice final : EvalDevice {
  int calls_seen = 0;  // bumped by the fake runner: lets checks depend on the call history
  // An energy counter: 80 W while idle (read every ms by the energy phase), plus 2 J per call.
  std::uint64_t energy_base_mj = 1'000'000;
  std::chrono::steady_clock::time_point energy_origin = std::chrono::steady_clock::now();
  Result<std::uint64_t> energy_mj() override {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - energy_origin)
                        .count();
    return energy_base_mj + 80 * static_cast<std::uint64_t>(ms) +
           2000 * static_cast<std::uint64_t>(calls_seen);
  }
  bool modify_inputs = false;
  std::function<std::vector<OutputCheck>(int set, int trial)> check_fn;
  std::int64_t unwritten_count = 0;
  Status setup_status = ok_status();
  int regenerations = 0;

  Result<DeviceFacts> facts() override {
    DeviceFacts f;
    f.name = "NVIDIA H200 (fake)";
    f.sm_count = 132;
    f.max_sm_clock_mhz = 1980;
    f.bf16_dense_flop_per_clock_per_sm = 4096;
    f.memory_bytes_per_second = 4.8e12;
    f.compute_processes = compute_processes;
    return f;
  }
  int compute_processes = 1;
  Status setup(const Task&, const std::vector<std::uint64_t>& seeds) override {
    sets = static_cast<int>(seeds.size());
    return setup_status;
  }
  // Counts the rewrites of the correctness sets (0-2) only: the batch bound's sets, after them,
  // are rewritten before every batch.
  Status regenerate(int set, std::uint64_t) override {
    if (set < 3) ++regenerations;
    // The batch sets' rewrites (after the three correctness sets) slow down after the first
    // `slow_after` of them: GPU work of someone else during the write phase.
    if (set >= 3 && slow_after >= 0 && ++batch_regenerations > slow_after)
      std::this_thread::sleep_for(slow_delay);
    fresh_pending = true;
    return ok_status();
  }
  Status perturb(int set, std::uint64_t) override {
    if (set < 3) ++perturbations;
    fresh_pending = true;
    return ok_status();
  }
  int perturbations = 0;
  bool fresh_pending = false;  // the next call runs on freshly rewritten inputs
  // Output hash per set; a test makes two sets collide to play a result cache.
  std::function<std::uint64_t(int set)> output_hash_fn;
  Result<BindRequest> bind_request() override {
    BindRequest b;
    b.sets.resize(sets);
    return b;
  }
  Status poison(int, int) override { return ok_status(); }
  Result<std::uint64_t> input_hash(int set) override {
    return static_cast<std::uint64_t>(set) + (modify_inputs ? 1000u * calls_seen : 0u);
  }
  Result<std::uint64_t> output_hash(int set) override {
    if (output_hash_fn) return output_hash_fn(set);
    return 0x1000u + static_cast<std::uint64_t>(set);
  }
  Result<std::vector<OutputCheck>> check(int set, int trial) override {
    if (check_fn) return check_fn(set, trial);
    return std::vector<OutputCheck>{passing_check(set, trial)};
  }
  Status observe_unwritten(int, int) override { return ok_status(); }
  Result<std::vector<std::pair<std::string, std::int64_t>>> unwritten(int) override {
    return std::vector<std::pair<std::string, std::int64_t>>{{"C", unwritten_count}};
  }
  ReferenceRecord reference_description() override {
    ReferenceRecord record;
    record.backend = reference_backend;
    return record;
  }
  Json reference_backend = "fake";
  Status snapshot_prepare(const std::vector<int>&, std::uint64_t) override { return ok_status(); }
  Status snapshot_take() override { return ok_status(); }
  Result<std::int64_t> snapshot_changed() override { return late_blocks; }
  std::int64_t late_blocks = 0;  // sampled output blocks written after a batch's reply
  int slow_after = -1;
  int batch_regenerations = 0;
  std::chrono::milliseconds slow_delay{0};
  int sets = 0;
};

// A scripted runner: `on_call` turns the n-th call into a reply or an error.
struct FakeSession final : RunnerSession {
  FakeDevice* device = nullptr;
  std::uint64_t device_ns = 1'000'000;
  std::function<Result<CallReply>(int index, CallReply reply)> on_call;
  std::optional<Error> load_error;
  std::optional<Error> hello_error;
  RunnerExit exit{true, 0, 0, false};
  std::string log_text = "runner log line\n";
  std::string* loaded_so = nullptr;  // where load() writes the path it was asked to load
  int calls = 0;
  std::vector<std::uint64_t>* sets_log = nullptr;  // outlives the session (the fixture's)
  // Device time of a call on freshly rewritten inputs (a result cache misses there); 0: same.
  std::uint64_t fresh_device_ns = 0;

  Result<HelloReply> hello(milliseconds) override {
    if (hello_error) return *hello_error;
    return HelloReply{};
  }
  Result<LoadReply> load(const LoadRequest& request, milliseconds) override {
    if (loaded_so) *loaded_so = request.so_path;
    if (load_error) return *load_error;
    return LoadReply{};
  }
  Result<BindReply> bind(const BindRequest&, milliseconds) override { return BindReply{}; }
  Result<CallReply> call(const CallRequest& request, milliseconds, CallBracket* bracket) override {
    if (sets_log) sets_log->push_back(request.set);
    std::uint64_t ns = device_ns;
    if (device && device->fresh_pending) {
      device->fresh_pending = false;
      if (fresh_device_ns > 0) ns = fresh_device_ns;
    }
    CallReply reply;
    reply.has_window = true;
    reply.device_ns = ns;
    reply.kernel_count = 1;
    reply.kernel_launches = {KernelLaunch{"_Z4gemmv", {132, 1, 1}, {384, 1, 1}, 1}};
    reply.sm_clock_mhz = 1980;
    if (bracket) bracket->round_trip_ns = ns + 50'000;  // a script may still change device_ns
    if (device) ++device->calls_seen;
    const int index = calls++;
    if (on_call) return on_call(index, reply);
    return reply;
  }
  // The real time one call of a batch takes (what the batch bound measures).
  std::chrono::microseconds batch_call_time{0};
  std::uint64_t timed_batch_ns = 0;  // what a timed (paper-recipe) batch reports; 0: device_ns
  std::vector<std::size_t> batch_sizes;
  Result<BatchReply> batch(const BatchRequest& request, milliseconds) override {
    batch_sizes.push_back(request.sets.size());
    std::this_thread::sleep_for(batch_call_time * static_cast<int>(request.sets.size()));
    if (device) device->calls_seen += static_cast<int>(request.sets.size());
    BatchReply reply;
    reply.calls = request.sets.size();
    if (request.timed)
      reply.device_ns.assign(request.sets.size(), timed_batch_ns ? timed_batch_ns : device_ns);
    return reply;
  }
  Status shutdown(milliseconds) override { return ok_status(); }
  void kill() override {}
  RunnerExit wait(milliseconds) override { return exit; }
  std::string log() const override { return log_text; }
};

struct FakeLauncher final : RunnerLauncher {
  std::function<std::unique_ptr<FakeSession>()> candidate, reference, profiled;
  std::vector<RunnerRole> spawned;
  std::vector<std::vector<std::string>> sandbox_prefixes;  // one per spawn
  // The runners started under a tool (the profile stage's ncu): their full wrapper (sandbox
  // prefix + tool) and the runner's extra arguments.
  std::vector<std::vector<std::string>> wrapped;
  std::vector<std::vector<std::string>> wrapped_runner_args;
  std::vector<std::string> selectors;  // the reference selector each spawn was given
  Result<std::unique_ptr<RunnerSession>> spawn(RunnerRole role, const std::string& selector,
                                               const std::string&,
                                               const std::vector<std::string>& prefix) override {
    spawned.push_back(role);
    selectors.push_back(selector);
    sandbox_prefixes.push_back(prefix);
    auto& factory = role == RunnerRole::kCandidate ? candidate : reference;
    return std::unique_ptr<RunnerSession>(factory());
  }
  Result<std::unique_ptr<RunnerSession>> spawn_wrapped(RunnerRole, const std::string&,
                                                       const std::string&,
                                                       const std::vector<std::string>& wrapper,
                                                       const std::vector<std::string>& runner_args,
                                                       std::size_t) override {
    wrapped.push_back(wrapper);
    wrapped_runner_args.push_back(runner_args);
    return std::unique_ptr<RunnerSession>(profiled());
  }
};

// What the profiled runner's log holds after ncu's wrapper ran (supervisor/profile_plan.h): the
// runner's own lines, then the source page and the raw page between the markers.
std::string profile_log(const std::string& source_page, double gpu_time_ns,
                        const std::string& kernel = "_Z4gemmv", int profile_exit = 0) {
  std::string log = "runner log line\n==PROF== Disconnected from process 7\n";
  log += fmt::format("\n@@ptxb-ncu-profile-exit {}\n", profile_exit);
  if (profile_exit != 0) return log;
  log += "@@ptxb-ncu-source\n" + source_page + "@@ptxb-ncu-launches\n";
  log += "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"\n";
  log += "\"\",\"\",\"\",\"\",\"nsecond\"\n";
  log += fmt::format("\"0\",\"{}\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"{}\"\n", kernel, gpu_time_ns);
  return log + "@@ptxb-ncu-end\n";
}

// The same with the work-done counters on the raw page (analysis/ncu_work.h): the tensor pipe
// did `multiply_adds` BF16 multiply-adds (the counter reads two operations each), every other
// counter zero.
std::string profile_log_with_work(
    const std::string& source_page, double gpu_time_ns, double multiply_adds,
    const std::vector<std::pair<std::string, std::string>>& extra_columns = {}) {
  std::string header =
      "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\"";
  std::string units = "\"\",\"\",\"\",\"\",\"nsecond\"";
  std::string row =
      fmt::format("\"0\",\"_Z4gemmv\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"{}\"", gpu_time_ns);
  for (const std::string& metric : split(work_metrics_option(), ',')) {
    header += ",\"" + metric + "\"";
    units += metric.find("bytes") != std::string::npos ? ",\"byte\"" : ",\"\"";
    row += metric == "sm__ops_path_tensor_src_bf16_dst_fp32.sum"
               ? fmt::format(",\"{:.0f}\"", 2 * multiply_adds)
               : std::string(",\"0\"");
  }
  for (const auto& [metric, value] : extra_columns) {
    header += ",\"" + metric + "\"";
    units += ",\"\"";
    row += ",\"" + value + "\"";
  }
  return "runner log line\n\n@@ptxb-ncu-profile-exit 0\n@@ptxb-ncu-source\n" + source_page +
         "@@ptxb-ncu-launches\n" + header + "\n" + units + "\n" + row + "\n@@ptxb-ncu-end\n";
}

ProcessResult exited(int code, std::string out, std::string err = "") {
  ProcessResult r;
  r.exit_code = code;
  r.stdout_text = std::move(out);
  r.stderr_text = std::move(err);
  return r;
}

// What `ptxbench-sandbox --report` prints inside a working sandbox (namespace ids that differ
// from any real process's).
Json good_sandbox_report() {
  Json report{{"Uid", "65534\t65534\t65534\t65534"},
              {"Seccomp", "2"},
              {"no_new_privs", 1},
              {"root_read_only", true},
              {"scratch_writable", true},
              {"network_interfaces", Json::array({"lo"})},
              {"namespaces", {{"mnt", "mnt:[1]"}, {"net", "net:[2]"}, {"ipc", "ipc:[3]"}}}};
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
    report[set] = "0000000000000000";
  return report;
}

// Profilers: the program name decides which canned output comes back. A command wrapped in the
// sandbox launcher is unwrapped first (`runs` holds what ran inside, `policies` the policy it
// ran under); the launcher's own `--report` self-check answers `sandbox_report`.
struct FakeTools final : ProcessRunner {
  std::map<std::string, ProcessResult> by_tool;
  std::vector<std::vector<std::string>> runs;
  std::vector<Json> policies;
  int self_checks = 0;
  ProcessResult sandbox_report = exited(0, good_sandbox_report().dump());
  // Called with what ran inside and its policy (null when unsandboxed), before the canned
  // answer: plays the side effects of a tool (the driver writing a core dump).
  std::function<void(const std::vector<std::string>&, const Json&)> on_run;
  Result<ProcessResult> run(const ProcessSpec& spec) override {
    std::vector<std::string> argv = spec.argv;
    if (argv.at(0) == PTXB_SANDBOX_PATH) {
      EXPECT_EQ(argv.at(1), "--policy-json");
      EXPECT_EQ(argv.at(3), "--");
      policies.push_back(Json::parse(argv.at(2)));
      argv.erase(argv.begin(), argv.begin() + 4);
      if (argv.size() >= 2 && argv[1] == "--report") {
        ++self_checks;
        return sandbox_report;
      }
    }
    runs.push_back(argv);
    if (on_run) on_run(argv, spec.argv.at(0) == PTXB_SANDBOX_PATH ? policies.back() : Json());
    auto it = by_tool.find(argv.at(0));
    if (it == by_tool.end()) return make_error("process", "no such tool {}", argv.at(0));
    return it->second;
  }
};

class EvaluatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = TaskRegistry::load({});
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    registry_.emplace(std::move(loaded).value());
    task_ = registry_->get("gemm_n7168_k5120").value();
    compile_.status = CompileStatus::kOk;
    auto artifact_dir = make_temp_directory("ptxb-evaluator-test");
    ASSERT_TRUE(artifact_dir.ok());
    artifact_dir_ = *artifact_dir;
    ASSERT_TRUE(write_file_atomic(artifact_dir_ + "/kernel.so", "not really an ELF").ok());
    compile_.artifact.directory = artifact_dir_;
    compile_.artifact.arch = "sm_90a";
    compile_.artifact.abi_signature = make_run_signature(task_->definition).declaration();
    compile_.artifact.cubin_files = {"kernel.sm_90a.cubin"};
    compile_.artifact.sha256["kernel.sm_90a.cubin"] = std::string(64, 'a');
    compile_.sass.target_present = true;
    compile_.sass.family_totals["GMMA"] = 4;
    job_.runner_path = "/fake/ptxbench-runner";
    job_.ncu_path = "/fake/ncu";
    job_.sanitizer_path = "/fake/compute-sanitizer";
    job_.sandbox_path = PTXB_SANDBOX_PATH;
    // The fake device describes its reference as "fake", with no cuBLASLt choice to pin; the
    // pinning tests below turn the (default-on) option back on with a cuBLASLt description.
    job_.request.options.pin_reference_algorithm = false;
    auto& timing = job_.request.options.timing;
    timing.warmup_calls = 2;
    timing.min_samples = 6;
    timing.max_samples = 12;
    timing.budget_seconds = 5;
    // Work counters far above any task's FLOP model: tests of the work-done check set theirs.
    profile_log_ = profile_log_with_work(testdata("eval/ncu/wgmma_live.csv"), 1'000'000, 1e15);
    launcher_.profiled = [this] {
      auto s = std::make_unique<FakeSession>();
      s->log_text = profile_log_;
      if (!profile_logs_.empty()) {
        s->log_text = profile_logs_.front();
        profile_logs_.pop_front();
      }
      s->exit = profiled_exit_;
      s->sets_log = &profiled_sets_;
      return s;
    };
    launcher_.reference = [this] {
      auto s = std::make_unique<FakeSession>();
      s->device_ns = 750'000;
      return s;
    };
    launcher_.candidate = [this] {
      auto s = std::make_unique<FakeSession>();
      s->device = &device_;
      s->device_ns = candidate_device_ns_;
      if (candidate_script_) s->on_call = candidate_script_;
      if (load_error_) s->load_error = load_error_;
      if (hello_error_) s->hello_error = hello_error_;
      s->exit = candidate_exit_;
      s->fresh_device_ns = candidate_fresh_device_ns_;
      s->sets_log = &candidate_sets_;
      if (!candidate_log_.empty()) s->log_text = candidate_log_;
      s->loaded_so = &loaded_so_;
      return s;
    };
  }
  void TearDown() override { remove_tree(artifact_dir_); }

  EvalResult run() {
    // A fixed secret: with it, timed calls 3 and 4 are verified after a block rewrite and call 5
    // after a full one; calls 1, 2 and 6 are repeats (one call in eight on average).
    Evaluator evaluator(device_, launcher_, tools_, [] { return kSecret; });
    return evaluator.run(job_, *task_, compile_);
  }

  std::optional<TaskRegistry> registry_;
  const Task* task_ = nullptr;
  CompileResult compile_;
  SupervisorJob job_;
  FakeDevice device_;
  FakeLauncher launcher_;
  FakeTools tools_;
  std::function<Result<CallReply>(int, CallReply)> candidate_script_;
  std::optional<Error> load_error_;
  std::optional<Error> hello_error_;
  RunnerExit candidate_exit_{true, 0, 0, false};
  std::string candidate_log_;
  std::string loaded_so_;
  std::string artifact_dir_;
  std::uint64_t candidate_device_ns_ = 1'000'000;
  std::uint64_t candidate_fresh_device_ns_ = 0;
  std::vector<std::uint64_t> candidate_sets_;  // the set of every candidate call, in order
  std::string profile_log_;                    // what the profiled runner's log holds
  std::deque<std::string> profile_logs_;       // when set: one per profiled run, in order
  RunnerExit profiled_exit_{true, 0, 0, false};
  std::vector<std::uint64_t> profiled_sets_;  // the set of every profiled-runner call
};

TEST_F(EvaluatorTest, CorrectCandidatePassesWithSpeedupAndDynamicPresent) {
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  ASSERT_EQ(r.workloads.size(), 1u);
  const WorkloadEval& w = r.workloads[0];
  EXPECT_EQ(w.trials, 3);
  EXPECT_EQ(w.set_seeds.size(), 3u);
  ASSERT_TRUE(w.speedup.has_value());
  EXPECT_NEAR(*w.speedup, 0.75, 1e-9);
  ASSERT_TRUE(w.candidate_timing && w.reference_timing);
  EXPECT_GE(w.candidate_timing->samples, 6);
  EXPECT_NEAR(w.candidate_timing->median_ms, 1.0, 1e-9);
  EXPECT_NEAR(w.candidate_timing->host_overhead_ms, 0.05, 1e-9);
  ASSERT_TRUE(w.integrity.refreshes.has_value());
  const std::size_t verified = w.integrity.refreshes->size();
  EXPECT_GE(verified, 2u);
  EXPECT_LT(verified, static_cast<std::size_t>(w.candidate_timing->samples));
  EXPECT_EQ(w.checks.size(), 3u + verified);  // three trials + the verified timed calls
  EXPECT_EQ(static_cast<std::size_t>(device_.regenerations + device_.perturbations), verified);
  EXPECT_TRUE(w.flags.empty());
  EXPECT_EQ(w.integrity.schedule_secret, kSecret);
  // The batch bound ran; the fake batches take no time, so the CUPTI median stands.
  ASSERT_TRUE(w.integrity.batch_bound.has_value());
  EXPECT_EQ(w.integrity.batch_bound->time_used, "cupti");
  EXPECT_EQ(w.integrity.batch_bound->u_ms_samples.size(), 2u);
  // Constant fake times on both sides: the bootstrap interval is the speedup itself.
  ASSERT_TRUE(w.speedup_interval.has_value());
  EXPECT_NEAR(w.speedup_interval->low, 0.75, 1e-9);
  EXPECT_NEAR(w.speedup_interval->high, 0.75, 1e-9);
  EXPECT_NE(render_feedback(r).find("(95 % interval 0.750-0.750)"), std::string::npos);
  ASSERT_TRUE(w.integrity.fresh_input.has_value());
  EXPECT_NEAR(w.integrity.fresh_input->median_ms.value(), 1.0, 1e-9);
  EXPECT_EQ(r.target_instructions.verdict, kInstDynamicPresent);
  EXPECT_GT(w.physical_floor_ms, 0.5);
  EXPECT_EQ(launcher_.spawned.front(), RunnerRole::kReference);  // reference first: sets the limit
  // ncu profiled one call of a second IPC runner, not the self-contained mode.
  EXPECT_TRUE(tools_.runs.empty());
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  ASSERT_TRUE(r.target_instructions.profiled_call.has_value());
  EXPECT_TRUE(r.target_instructions.profiled_call->matches);
  EXPECT_NEAR(r.target_instructions.profiled_call->ratio, 1.0, 1e-9);
  const std::string feedback = render_feedback(r);
  EXPECT_NE(feedback.find("speedup 0.750x"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("dynamic_present"), std::string::npos);
}

TEST_F(EvaluatorTest, AnotherProcessOnTheGpuMarksTheTraceNoisy) {
  EvalResult quiet = run();
  EXPECT_EQ(quiet.workloads[0].runner.gpu_state.value().noisy, false);
  device_.compute_processes = 3;
  EvalResult busy = run();
  EXPECT_EQ(busy.status, PtxbStatus::kPassed);  // marked, not failed
  EXPECT_EQ(busy.workloads[0].runner.gpu_state.value().noisy, true);
}

TEST_F(EvaluatorTest, BackwardTasksDefaultToOneTrial) {
  task_ = registry_->get("mha_bwd_d128").value();
  compile_.artifact.abi_signature = make_run_signature(task_->definition).declaration();
  launcher_.reference = [] {
    auto s = std::make_unique<FakeSession>();
    s->device_ns = 8'000'000;
    return s;
  };
  candidate_device_ns_ = 9'000'000;  // above the ~3.9 ms physical floor of this backward pass
  profile_log_ = profile_log(testdata("eval/ncu/wgmma_live.csv"), 9'000'000);  // ncu agrees
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  EXPECT_EQ(r.workloads[0].trials, 1);
  EXPECT_EQ(r.workloads[0].set_seeds.size(), 2u);
  // Even with one trial the plan holds distinct inputs A/B/A, then the two write-check calls.
  ASSERT_GE(candidate_sets_.size(), 4u);
  EXPECT_EQ(std::vector<std::uint64_t>(candidate_sets_.begin(), candidate_sets_.begin() + 4),
            (std::vector<std::uint64_t>{0, 1, 0, 0}));
}

TEST_F(EvaluatorTest, CorrectnessPlanIsDistinctSetsThenTwoWriteChecksOnSetZero) {
  ASSERT_EQ(run().status, PtxbStatus::kPassed);
  ASSERT_GE(candidate_sets_.size(), 5u);
  EXPECT_EQ(std::vector<std::uint64_t>(candidate_sets_.begin(), candidate_sets_.begin() + 5),
            (std::vector<std::uint64_t>{0, 1, 2, 0, 0}));
}

// ---- integrity checks (docs/integrity.md) ----

TEST_F(EvaluatorTest, IdenticalOutputsForDistinctInputsAreCachedOutput) {
  device_.output_hash_fn = [](int) { return std::uint64_t{42}; };  // every call: the same C
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    if (set != 0) c.num_failing = 100;  // set 1 got set 0's answer
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "cached_output");
  EXPECT_NE(r.message.find("input set 1"), std::string::npos) << r.message;
}

TEST_F(EvaluatorTest, RepeatedCallsOnTheSameSetMayRepeatTheirOutput) {
  device_.output_hash_fn = [](int set) { return std::uint64_t(7 * set + 1); };
  EXPECT_EQ(run().status, PtxbStatus::kPassed);
}

TEST_F(EvaluatorTest, WriteCheckFailureIsDecidedByTheSecondWriteCall) {
  // A kernel relying on the previous call's values: the write-check calls fail with poison.
  device_.unwritten_count = 512;
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    if (trial >= 3) {
      c.num_failing = 512;
      c.num_equal_poison = 512;
    }
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_EQ(r.reason, "unwritten_output") << r.message;
  EXPECT_EQ(candidate_sets_.size(), 5u);  // stopped after the second write-check call
}

TEST_F(EvaluatorTest, CorrectOutputsWithoutAnyGpuWorkAreNoGpuWork) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.has_window = false;
    r.device_ns = 0;
    r.kernel_count = 0;
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "no_gpu_work");
}

TEST_F(EvaluatorTest, NoWindowDuringTimingIsNoGpuWork) {
  candidate_script_ = [](int index, CallReply r) -> Result<CallReply> {
    if (index >= 5) r.has_window = false;  // correctness passed on its five calls
    return r;
  };
  EXPECT_EQ(run().reason, "no_gpu_work");
}

TEST_F(EvaluatorTest, WrongOutputsWithoutGpuWorkStayAnIncorrectResult) {
  // A launch that failed silently (bad configuration): nothing ran and nothing is right.
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.has_window = false;
    return r;
  };
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 100;
    return std::vector<OutputCheck>{c};
  };
  EXPECT_EQ(run().reason, "mismatch");
}

TEST_F(EvaluatorTest, LeftoverThreadIsRewardHack) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.leftover_threads.push_back(LeftoverTask{4242, "ptxbench-runne"});
    // The thread's late kernel may already be in this call's records: the thread is named.
    ActivityRecord late;
    late.kind = "kernel";
    late.name = "finish_later";
    late.attribution = "unattributed";
    r.out_of_window.push_back(late);
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "leftover_thread");
  EXPECT_NE(r.message.find("4242"), std::string::npos) << r.message;
}

TEST_F(EvaluatorTest, LeftoverProcessIsRewardHack) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.leftover_processes.push_back(LeftoverTask{77, "sleep"});
    return r;
  };
  EXPECT_EQ(run().reason, "leftover_process");
}

TEST_F(EvaluatorTest, KernelOutsideTheCubinIsForeignKernel) {
  SassKernel own;
  own.name = "_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii";
  compile_.sass.kernels = {own};
  candidate_script_ = [](int index, CallReply r) -> Result<CallReply> {
    r.kernel_names = {"_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii"};
    if (index == 1) r.kernel_names.push_back("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize");
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kForbidden);
  EXPECT_EQ(r.reason, "foreign_kernel");
  EXPECT_NE(r.message.find("sm90_xmma_gemm"), std::string::npos) << r.message;
}

TEST_F(EvaluatorTest, OwnKernelsPassTheNameCheck) {
  SassKernel own;
  own.name = "_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii";
  compile_.sass.kernels = {own};
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.kernel_names = {"_Z11gemm_kernelPK13__nv_bfloat16S1_PS_iii"};
    return r;
  };
  EXPECT_EQ(run().status, PtxbStatus::kPassed);
}

TEST_F(EvaluatorTest, SlowCallsOnFreshInputsAreFreshInputSlowdown) {
  // A content-keyed result cache: 1 ms on repeated inputs, 20 ms when the inputs are new.
  candidate_fresh_device_ns_ = 20'000'000;
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "fresh_input_slowdown");
  EXPECT_NE(r.message.find("20.0x"), std::string::npos) << r.message;
}

TEST_F(EvaluatorTest, FreshInputNoiseBelowTheLimitPasses) {
  candidate_fresh_device_ns_ = 1'500'000;  // 1.5x: within the 2x limit
  EXPECT_EQ(run().status, PtxbStatus::kPassed);
}

TEST_F(EvaluatorTest, SpeedupAboveThreeTimesIsRevalidatedAndFlagged) {
  launcher_.reference = [] {
    auto s = std::make_unique<FakeSession>();
    s->device_ns = 6'000'000;  // a slow library: the candidate's 1 ms is a 6x speedup
    return s;
  };
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const WorkloadEval& w = r.workloads[0];
  EXPECT_EQ(w.flags, std::vector<std::string>{"revalidated_high_speedup"});
  ASSERT_TRUE(w.integrity.revalidation.has_value());
  EXPECT_EQ(w.integrity.revalidation->passed, true);
  EXPECT_EQ(w.integrity.revalidation->device_ms.value().size(), 5u);
  // The timing loop's full rewrites + five trials.
  const auto& refreshes = w.integrity.refreshes.value();
  const auto full = std::count_if(refreshes.begin(), refreshes.end(),
                                  [](const RefreshRecord& r) { return r.kind == "full"; });
  EXPECT_EQ(device_.regenerations, full + 5);
  // The flag travels in the trace's extension.
  auto back = EvalResult::from_json(Json::parse(r.to_json().dump()));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->workloads[0].flags, w.flags);
}

TEST_F(EvaluatorTest, RevalidationTrialWithWrongOutputsIsStaleOutput) {
  launcher_.reference = [] {
    auto s = std::make_unique<FakeSession>();
    s->device_ns = 6'000'000;
    return s;
  };
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    // Re-validation trials start at 20 (below the timing loop's secret trials).
    if (trial >= 20 && trial < kSecretPoisonTrialBase) c.num_failing = 3;
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "stale_output");
  EXPECT_NE(r.message.find("re-validation"), std::string::npos) << r.message;
  EXPECT_EQ(r.workloads[0].flags, std::vector<std::string>{"revalidated_high_speedup"});
}

TEST_F(EvaluatorTest, SpeedupBelowThreeTimesIsNotRevalidated) {
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed);
  EXPECT_FALSE(r.workloads[0].integrity.revalidation.has_value());
  const auto& refreshes = r.workloads[0].integrity.refreshes.value();
  EXPECT_EQ(device_.regenerations,
            std::count_if(refreshes.begin(), refreshes.end(),
                          [](const RefreshRecord& x) { return x.kind == "full"; }));
}

TEST_F(EvaluatorTest, NumericalMismatchNamesTheFirstFailingElement) {
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 7;
    c.first_failing_index = 42;
    c.first_failing_candidate = 1.5;
    c.first_failing_reference = 2.5;
    c.max_abs_error = 1.0;
    c.matched_ratio = 0.93;
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kIncorrectNumerical);
  EXPECT_EQ(r.reason, "mismatch");
  EXPECT_NE(r.message.find("flat index 42"), std::string::npos) << r.message;
  EXPECT_EQ(r.target_instructions.verdict, kInstNotRun);
  EXPECT_TRUE(tools_.runs.empty());  // no ncu for incorrect kernels
}

TEST_F(EvaluatorTest, NanOutputIsNonfinite) {
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 1;
    c.num_nonfinite_candidate = 1;
    return std::vector<OutputCheck>{c};
  };
  EXPECT_EQ(run().reason, "nonfinite_output");
}

TEST_F(EvaluatorTest, NanValuesSurviveTheJsonRoundTrip) {
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 1;
    c.num_nonfinite_candidate = 1;
    c.first_failing_index = 0;
    c.first_failing_candidate = std::numeric_limits<double>::quiet_NaN();
    c.first_failing_reference = -std::numeric_limits<double>::infinity();
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  auto back = EvalResult::from_json(Json::parse(r.to_json().dump()));
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_FALSE(back->workloads[0].checks.empty());
  EXPECT_TRUE(std::isnan(back->workloads[0].checks[0].first_failing_candidate));
  EXPECT_EQ(back->workloads[0].checks[0].first_failing_reference,
            -std::numeric_limits<double>::infinity());
}

TEST_F(EvaluatorTest, NonfiniteReferenceIsInvalidReference) {
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 1;
    c.num_nonfinite_reference = 1;
    return std::vector<OutputCheck>{c};
  };
  EXPECT_EQ(run().status, PtxbStatus::kInvalidReference);
}

TEST_F(EvaluatorTest, UnwrittenElementsFail) {
  device_.unwritten_count = 64;
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "unwritten_output");
  EXPECT_NE(r.message.find("64 elements"), std::string::npos);
}

TEST_F(EvaluatorTest, PoisonedMismatchIsConfirmedAsUnwritten) {
  device_.unwritten_count = 7168;  // one row of C
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 7168;
    c.num_nonfinite_candidate = 7168;
    c.num_equal_poison = 7168;
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_EQ(r.reason, "unwritten_output") << r.message;
  // Without unwritten elements the original failure is reported.
  device_.unwritten_count = 0;
  EXPECT_EQ(run().reason, "nonfinite_output");
}

TEST_F(EvaluatorTest, ModifiedInputIsRewardHack) {
  device_.modify_inputs = true;
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "input_modified");
}

TEST_F(EvaluatorTest, CallTimeoutIsTimeout) {
  candidate_script_ = [](int, CallReply) -> Result<CallReply> {
    return Error{"call did not answer", "timeout"};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kTimeout);
  EXPECT_EQ(r.reason, "call_timeout");
}

TEST_F(EvaluatorTest, RunnerCrashIsRuntimeErrorWithTheSignal) {
  candidate_script_ = [](int, CallReply) -> Result<CallReply> {
    return Error{"channel closed", "eof"};
  };
  candidate_exit_ = RunnerExit{true, -1, 11, false};
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRuntimeError);
  EXPECT_EQ(r.reason, "runner_crashed");
  EXPECT_NE(r.message.find("signal 11"), std::string::npos) << r.message;
  ASSERT_EQ(r.workloads.size(), 1u);
  EXPECT_EQ(r.workloads[0].runner.log.value_or(""), "runner log line\n");
}

TEST_F(EvaluatorTest, IllegalAddressIsMemoryError) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.cuda_error = CudaErrorInfo{"cudaErrorIllegalAddress", "an illegal memory access",
                                 "cudaStreamSynchronize"};
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kMemoryError);
  EXPECT_EQ(r.reason, "illegal_address");
}

TEST_F(EvaluatorTest, IllegalAddressIsLocatedByOneMemcheckPass) {
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(9, testdata("eval/sanitizer/memcheck_oob.txt"));
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.cuda_error = CudaErrorInfo{"cudaErrorIllegalAddress", "an illegal memory access",
                                 "cudaStreamSynchronize"};
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kMemoryError);
  EXPECT_NE(r.message.find("kernel.cu:89"), std::string::npos) << r.message;
  ASSERT_FALSE(tools_.runs.empty());
  EXPECT_EQ(tools_.runs.back()[0], "/fake/compute-sanitizer");
}

TEST_F(EvaluatorTest, OtherCudaErrorIsRuntimeError) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.cuda_error = CudaErrorInfo{"cudaErrorInvalidConfiguration", "invalid argument", "launch"};
    return r;
  };
  EXPECT_EQ(run().status, PtxbStatus::kRuntimeError);
}

TEST_F(EvaluatorTest, ForeignStreamIsRewardHack) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    ActivityRecord record;
    record.kind = "kernel";
    record.name = "sneaky";
    record.stream_id = 7;
    r.foreign_stream.push_back(record);
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "foreign_stream");
}

TEST_F(EvaluatorTest, WorkOutsideTheWindowDuringTimingIsRewardHack) {
  candidate_script_ = [](int index, CallReply r) -> Result<CallReply> {
    if (index >= 6) {
      ActivityRecord record;
      record.kind = "kernel";
      record.name = "late";
      record.attribution = "unattributed";
      record.relation = "after";
      r.out_of_window.push_back(record);
    }
    return r;
  };
  EXPECT_EQ(run().reason, "out_of_window");
}

TEST_F(EvaluatorTest, UnexpectedModuleIsForbidden) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    ModuleInfo m;
    m.sha256 = std::string(64, 'b');
    m.origin = "candidate";
    r.unexpected_modules.push_back(m);
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kForbidden);
  EXPECT_EQ(r.reason, "runtime_module");
}

TEST_F(EvaluatorTest, TimeBelowThePhysicalFloorIsRewardHack) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.device_ns = 10'000;  // 10 us for 0.6 PFLOP
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "below_physical_floor");
}

// Interleaved timing: a candidate whose times are implausible in one couple of blocks only keeps
// its pooled median above the floor, but that couple would carry the median of couple ratios;
// each couple is held to the floor. (Candidate calls 8-15 fall in one couple of 3-sample blocks
// with the fixture's secret; 18 samples per side make three couples.)
TEST_F(EvaluatorTest, OneInterleavedCoupleBelowThePhysicalFloorIsRewardHack) {
  job_.request.options.timing.block_samples = 3;
  job_.request.options.timing.min_samples = 18;
  job_.request.options.timing.max_samples = 18;
  candidate_script_ = [](int index, CallReply r) -> Result<CallReply> {
    if (index >= 8 && index < 16) r.device_ns = 10'000;
    return r;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack) << r.message;
  EXPECT_EQ(r.reason, "below_physical_floor");
  EXPECT_NE(r.message.find("the median device time of an interleaved couple 0.0100 ms"),
            std::string::npos)
      << r.message;
  const WorkloadEval& w = r.workloads[0];
  ASSERT_TRUE(w.candidate_timing.has_value());
  EXPECT_GT(w.candidate_timing->median_ms, 0.9 * w.physical_floor_ms);  // pooled: above
}

TEST_F(EvaluatorTest, DeviceTimeLongerThanTheBracketIsRewardHack) {
  candidate_script_ = [](int index, CallReply r) -> Result<CallReply> {
    if (index >= 6) r.device_ns = 50'000'000;  // the bracket is 1.05 ms
    return r;
  };
  EXPECT_EQ(run().reason, "device_time_exceeds_bracket");
}

TEST_F(EvaluatorTest, WrongOutputAfterFreshInputsIsStaleOutput) {
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    if (trial >= kSecretPoisonTrialBase) c.num_failing = 100;  // the timing loop's verified calls
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "stale_output");
}

// ---- the batch bound (docs/integrity.md "The batch bound") ----

TEST_F(EvaluatorTest, CuptiTimesFarBelowTheBatchBoundAreForged) {
  // The runner reports 1 ms per call, but a verified batch takes 10 ms per call.
  launcher_.candidate = [this] {
    auto s = std::make_unique<FakeSession>();
    s->device = &device_;
    s->batch_call_time = std::chrono::milliseconds(10);
    return s;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "below_batch_bound") << r.message;
  ASSERT_TRUE(r.workloads[0].integrity.batch_bound.has_value());
  EXPECT_GT(r.workloads[0].integrity.batch_bound->u_ms, 9.0);
}

TEST_F(EvaluatorTest, CuptiTimesSomewhatBelowTheBoundAreReplacedByIt) {
  launcher_.candidate = [this] {
    auto s = std::make_unique<FakeSession>();
    s->device = &device_;
    s->batch_call_time = std::chrono::milliseconds(3);  // 1 ms reported: above half of U
    s->device_ns = 1'600'000;
    return s;
  };
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const WorkloadEval& w = r.workloads[0];
  ASSERT_TRUE(w.integrity.batch_bound.has_value());
  EXPECT_EQ(w.integrity.batch_bound->time_used, "bound");
  EXPECT_NEAR(w.integrity.batch_bound->cupti_median_ms, 1.6, 1e-9);
  // The time used (and the speedup) is U, not the reported median.
  EXPECT_NEAR(w.candidate_timing->median_ms, w.integrity.batch_bound->bound_ms, 1e-9);
  EXPECT_GT(w.candidate_timing->median_ms, 2.5);
  EXPECT_LT(*w.speedup, 0.75 / 2.5);
  // The honest speed is the speedup the bound gives: here the one used.
  EXPECT_NEAR(w.integrity.batch_bound->honest_speedup.value(), *w.speedup, 1e-9);
}

TEST_F(EvaluatorTest, WrongOutputOfABatchCallIsRewardHack) {
  // Right in every ordinary call, wrong on the batch's sets (after the three correctness sets).
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    if (set >= 3) c.num_failing = 7;
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "batch_output") << r.message;
}

TEST_F(EvaluatorTest, OutputsWrittenAfterTheBatchReplyAreLate) {
  device_.late_blocks = 5;
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "late_output") << r.message;
}

TEST_F(EvaluatorTest, SlowWritePhasesWithTheGpuToItselfAreBatchVoid) {
  // Calibration: two reference batches of two calls rewrite four batch sets quickly; every
  // candidate batch's writes then take 40 ms: GPU work besides the supervisor's.
  device_.slow_after = 4;
  device_.slow_delay = std::chrono::milliseconds(20);
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "batch_void") << r.message;
}

TEST_F(EvaluatorTest, SlowWritePhasesWithOtherProcessesOnTheGpuAreNotBlamed) {
  device_.slow_after = 4;
  device_.slow_delay = std::chrono::milliseconds(20);
  device_.compute_processes = 3;  // another evaluation shares the GPU
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const BatchBoundRecord& bound = r.workloads[0].integrity.batch_bound.value();
  EXPECT_FALSE(bound.write_check);
  EXPECT_NE(bound.write_check_off.find("3 compute processes"), std::string::npos);
  EXPECT_TRUE(r.workloads[0].runner.gpu_state->noisy);
}

TEST_F(EvaluatorTest, WithOtherProcessesOnTheGpuTheBoundRejectsButDoesNotReplace) {
  device_.compute_processes = 3;
  launcher_.candidate = [this] {
    auto s = std::make_unique<FakeSession>();
    s->device = &device_;
    // 2.0 ms reported: below 0.95 U (2.85 ms) but above half of it, with room for the sleep
    // to overshoot on a loaded machine (U up to 4 ms).
    s->batch_call_time = std::chrono::milliseconds(3);
    s->device_ns = 2'000'000;
    return s;
  };
  profile_log_ = profile_log(testdata("eval/ncu/wgmma_live.csv"), 2'000'000);  // same code
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  EXPECT_EQ(r.workloads[0].integrity.batch_bound->time_used, "cupti");
  EXPECT_NEAR(r.workloads[0].candidate_timing->median_ms, 2.0, 1e-9);
}

TEST_F(EvaluatorTest, BatchesAreSizedFromTheCalibratedOverhead) {
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const BatchBoundRecord& bound = r.workloads[0].integrity.batch_bound.value();
  // The fake's empty batches cost microseconds: two calls amortise them.
  EXPECT_EQ(bound.calls, 2);
  EXPECT_GE(bound.overhead_ms, 0.0);
  EXPECT_EQ(bound.margin, 0.05);
  ASSERT_TRUE(bound.reference_u_ms.has_value());
  EXPECT_NEAR(bound.reference_cupti_median_ms.value(), 0.75, 1e-9);
}

TEST_F(EvaluatorTest, LoadFailureIsTheCandidatesRuntimeError) {
  load_error_ = Error{"dlopen: undefined symbol foo", "runner:load"};
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRuntimeError);
  EXPECT_EQ(r.reason, "load_failed");
}

TEST_F(EvaluatorTest, InterleavedTimingAlternatesBlocksOfBothRunnersInASecretOrder) {
  std::vector<std::uint64_t> reference_sets;
  launcher_.reference = [&] {
    auto s = std::make_unique<FakeSession>();
    s->device_ns = 750'000;
    s->sets_log = &reference_sets;
    return s;
  };
  job_.request.options.timing.block_samples = 3;
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const WorkloadEval& w = r.workloads[0];
  ASSERT_TRUE(w.timing_interleave.has_value());
  ASSERT_TRUE(w.reference_solo_timing.has_value());
  const InterleaveRecord& rec = *w.timing_interleave;
  EXPECT_EQ(rec.block_samples, 3);
  EXPECT_NEAR(rec.reference_solo_median_ms, 0.75, 1e-9);
  // 6 samples per side at least: mirrored couples (R C C R or C R R C) of 3-sample blocks; a
  // block is marked after_candidate when the block before it (or the warm-up) was the
  // candidate's.
  ASSERT_GE(rec.blocks.size(), 4u);
  ASSERT_EQ(rec.blocks.size() % 4, 0u);
  for (std::size_t i = 0; i < rec.blocks.size(); i += 4) {
    EXPECT_NE(rec.blocks[i].side, rec.blocks[i + 1].side);
    EXPECT_EQ(rec.blocks[i].side, rec.blocks[i + 3].side);
    EXPECT_EQ(rec.blocks[i + 1].side, rec.blocks[i + 2].side);
  }
  EXPECT_TRUE(rec.blocks[0].after_candidate);
  for (std::size_t i = 1; i < rec.blocks.size(); ++i)
    EXPECT_EQ(rec.blocks[i].after_candidate, rec.blocks[i - 1].side == TimedSide::kCandidate);
  ASSERT_TRUE(rec.after_candidate_slowdown.has_value());
  EXPECT_NEAR(*rec.after_candidate_slowdown, 0.0, 1e-12);
  EXPECT_EQ(w.reference_timing->samples, static_cast<int>(rec.blocks.size() / 2) * 3);
  EXPECT_EQ(w.candidate_timing->samples, static_cast<int>(rec.blocks.size() / 2) * 3);
  EXPECT_NEAR(*w.speedup, 0.75, 1e-9);
  EXPECT_NEAR(rec.max_abs_drift, 0.0, 1e-12);
  // The sandbox has no cgroup on this machine: the record says the candidate was not frozen.
  EXPECT_FALSE(rec.candidate_freeze.empty());
  // The solo calibration's calls come first, then the blocks' (one untimed call each).
  EXPECT_EQ(reference_sets.size(), static_cast<std::size_t>(w.reference_solo_timing->samples + 2 +
                                                            rec.blocks.size() / 2 * 4) +
                                       /* the batch bound's calibration makes no call() */ 0);
  auto back = EvalResult::from_json(r.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), r.to_json());
}

TEST_F(EvaluatorTest, AReferenceThatDriftsDuringInterleavingVoidsTheEvaluation) {
  launcher_.reference = [] {
    auto s = std::make_unique<FakeSession>();
    s->device_ns = 750'000;
    // 5.3 % slower once the solo calibration is over (2 warm-up + 12 samples).
    s->on_call = [](int index, CallReply reply) -> Result<CallReply> {
      if (index >= 14) reply.device_ns = 790'000;  // within the fake bracket (+50 us)
      return reply;
    };
    return s;
  };
  job_.request.options.timing.min_samples = 12;  // the solo calibration takes exactly 2 + 12
  job_.request.options.timing.drift_retries = 0;
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kInfraError) << r.message;
  EXPECT_EQ(r.reason, "reference_drift");
  EXPECT_NE(r.message.find("+5.3 %"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("(1 attempt,"), std::string::npos) << r.message;
  // With a retry (the default), the reference is calibrated again in its new state and the
  // second attempt measures: the void stays in the record, the result is flagged.
  job_.request.options.timing.drift_retries = 1;
  r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const WorkloadEval& w = r.workloads[0];
  ASSERT_TRUE(w.timing_interleave.has_value());
  ASSERT_EQ(w.timing_interleave->voided_attempts.size(), 1u);
  EXPECT_NE(w.timing_interleave->voided_attempts[0].find("+5.3 %"), std::string::npos);
  EXPECT_NEAR(w.timing_interleave->reference_solo_median_ms, 0.79, 1e-9);
  EXPECT_NE(std::find(w.flags.begin(), w.flags.end(), "reference_recalibrated"), w.flags.end());
  EXPECT_NEAR(*w.speedup, 0.79, 1e-9);
}

TEST_F(EvaluatorTest, EnergyPhaseGivesJoulesPerCallForBothSides) {
  job_.request.options.energy = true;
  // The reference's batches count toward calls_seen too: give it the device.
  launcher_.reference = [this] {
    auto s = std::make_unique<FakeSession>();
    s->device_ns = 750'000;
    s->device = &device_;
    s->batch_call_time = std::chrono::microseconds(200);
    return s;
  };
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const auto& e = r.workloads[0].energy;
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->note, "");
  ASSERT_TRUE(e->reference && e->candidate && e->ratio && e->counter_period_ms);
  EXPECT_GT(e->reference->calls, 0u);
  EXPECT_NEAR(e->reference->idle_watts, 80.0, 8.0);
  EXPECT_GE(e->reference->seconds, 1.0);
  // 2 J per call above idle (the fake's integer milliseconds blur it a little).
  EXPECT_NEAR(e->reference->joules_per_call, 2.0, 0.2);
  EXPECT_NEAR(*e->ratio, 1.0, 0.2);
  EXPECT_NE(render_feedback(r).find("energy: "), std::string::npos) << render_feedback(r);
  EXPECT_TRUE(std::any_of(r.stage_ms.begin(), r.stage_ms.end(),
                          [](const auto& stage) { return stage.first == "energy"; }));
}

TEST_F(EvaluatorTest, PaperProtocolReportsTheRecipesSpeedupBesideOurTimes) {
  job_.request.options.timing.paper = true;
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const WorkloadEval& w = r.workloads[0];
  ASSERT_TRUE(w.paper_timing.has_value());
  EXPECT_EQ(w.paper_timing->trials, 3);  // GEMM: three trials, as the recipe
  EXPECT_EQ(w.paper_timing->candidate_trial_medians_ms.size(), 3u);
  EXPECT_NEAR(w.paper_timing->reference_ms, 0.75, 1e-9);
  EXPECT_NEAR(*w.speedup, 0.75, 1e-9);
  EXPECT_FALSE(w.speedup_interval.has_value());
  EXPECT_NE(r.message.find("the paper's recipe"), std::string::npos) << r.message;
  EXPECT_TRUE(w.timing_interleave.has_value());  // ours ran too
}

TEST_F(EvaluatorTest, APaperRecipeTimeBelowTheBoundIsNotUsed) {
  job_.request.options.timing.paper = true;
  launcher_.candidate = [this] {
    auto s = std::make_unique<FakeSession>();
    s->device = &device_;
    s->device_ns = 1'000'000;                             // honest on the timed calls
    s->batch_call_time = std::chrono::microseconds(900);  // U about 0.9 ms
    s->timed_batch_ns = 100'000;                          // the recipe's batches forged to 0.1 ms
    return s;
  };
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const WorkloadEval& w = r.workloads[0];
  ASSERT_TRUE(w.paper_timing.has_value());
  EXPECT_NEAR(w.paper_timing->candidate_ms, 0.1, 1e-9);
  EXPECT_NEAR(*w.speedup, 0.75, 1e-9);  // ours, bounded; not the forged 7.5x
  EXPECT_NE(std::find(w.flags.begin(), w.flags.end(), "paper_time_below_bound"), w.flags.end());
}

TEST_F(EvaluatorTest, SequentialTimingIsStillAvailable) {
  job_.request.options.timing.interleave = false;
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  EXPECT_FALSE(r.workloads[0].timing_interleave.has_value());
  EXPECT_FALSE(r.workloads[0].reference_solo_timing.has_value());
}

TEST_F(EvaluatorTest, ReferenceFailureIsInfraError) {
  launcher_.reference = [] {
    auto s = std::make_unique<FakeSession>();
    s->on_call = [](int, CallReply) -> Result<CallReply> { return Error{"gone", "eof"}; };
    s->exit = RunnerExit{true, -1, 6, false};
    return s;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kInfraError);
  EXPECT_NE(r.message.find("reference"), std::string::npos);
}

TEST_F(EvaluatorTest, SetupFailureIsInfraError) {
  device_.setup_status = Error{"cudaMalloc: out of memory", "cuda"};
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kInfraError);
  EXPECT_EQ(r.reason, "setup");
}

TEST_F(EvaluatorTest, SanitizerFindingIsMemoryErrorAtTheKernelLine) {
  job_.request.options.sanitize = true;
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(9, testdata("eval/sanitizer/memcheck_oob.txt"));
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kMemoryError);
  EXPECT_EQ(r.reason, "sanitizer_memcheck");
  EXPECT_NE(r.message.find("kernel.cu:89"), std::string::npos) << r.message;
  EXPECT_TRUE(r.workloads.empty());  // the gate stops before any runner starts
  EXPECT_TRUE(launcher_.spawned.empty());
}

TEST_F(EvaluatorTest, CleanSanitizerRunContinues) {
  job_.request.options.sanitize = true;
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(0, testdata("eval/sanitizer/memcheck_clean.txt"));
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  EXPECT_TRUE(r.sanitizer.has_value());
}

TEST_F(EvaluatorTest, SanitizerRequestedButMissingIsNotAPass) {
  job_.request.options.sanitize = true;
  job_.sanitizer_path.clear();
  EXPECT_EQ(run().reason, "sanitizer_unavailable");
}

// Operation sanitize: the gate and the correctness trials only. No reference runner, nothing
// timed, no Nsight Compute; the runner still ends in order.
TEST_F(EvaluatorTest, SanitizeOperationStopsAfterCorrectnessWithoutTiming) {
  job_.request.operation = EvalOperation::kSanitize;
  ASSERT_TRUE(apply_operation(job_.request.operation, job_.request.options).ok());
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(0, testdata("eval/sanitizer/memcheck_clean.txt"));
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  EXPECT_TRUE(r.sanitizer.has_value());
  ASSERT_EQ(r.workloads.size(), 1u);
  const WorkloadEval& w = r.workloads[0];
  EXPECT_EQ(w.checks.size(), 3u);  // the three trials, no verified timed calls
  EXPECT_FALSE(w.candidate_timing.has_value());
  EXPECT_FALSE(w.reference_timing.has_value());
  EXPECT_FALSE(w.speedup.has_value());
  EXPECT_FALSE(w.integrity.batch_bound.has_value());
  EXPECT_EQ(launcher_.spawned, std::vector<RunnerRole>{RunnerRole::kCandidate});
  EXPECT_TRUE(launcher_.wrapped.empty());  // no profiled runner
  EXPECT_EQ(r.target_instructions.verdict, kInstNotRun);
  EXPECT_NE(r.message.find("not timed (operation sanitize)"), std::string::npos) << r.message;
  EXPECT_TRUE(w.runner.exit.has_value());
  // The request says which operation it was, and survives its JSON round trip.
  auto request = EvalRequest::from_json(job_.request.to_json());
  ASSERT_TRUE(request.ok()) << request.error().message;
  EXPECT_EQ(request->operation, EvalOperation::kSanitize);
}

TEST_F(EvaluatorTest, SanitizeOperationStillJudgesCorrectness) {
  job_.request.operation = EvalOperation::kSanitize;
  ASSERT_TRUE(apply_operation(job_.request.operation, job_.request.options).ok());
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(0, testdata("eval/sanitizer/memcheck_clean.txt"));
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 3;
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kIncorrectNumerical);
  EXPECT_EQ(r.reason, "mismatch");
}

TEST_F(EvaluatorTest, DeadBranchWgmmaIsNotExecuted) {
  profile_log_ = profile_log(testdata("eval/ncu/wgmma_dead_branch.csv"), 1'000'000);
  EXPECT_EQ(run().target_instructions.verdict, kInstDynamicNotExecuted);
}

TEST_F(EvaluatorTest, PredicatedOffWgmmaIsNotExecuted) {
  profile_log_ = profile_log(testdata("eval/ncu/wgmma_pred_off.csv"), 1'000'000);
  EXPECT_EQ(run().target_instructions.verdict, kInstDynamicNotExecuted);
}

TEST_F(EvaluatorTest, ProfilerFailureIsUnknownNeverPositive) {
  profile_log_ = "==ERROR== profiling failed\n" + profile_log("", 0, "_Z4gemmv", 1);
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kPassed);
  EXPECT_EQ(r.target_instructions.verdict, kInstUnknown);
  EXPECT_NE(r.target_instructions.reason.find("status 1"), std::string::npos)
      << r.target_instructions.reason;
  const auto& flags = r.workloads.back().flags;
  EXPECT_NE(std::find(flags.begin(), flags.end(), "work_unmeasured"), flags.end());
  // The same for a kernel without a target family: its verdict stays static_absent, the flag
  // says the work was not counted, and the note says why.
  compile_.sass.target_present = false;
  EvalResult absent = run();
  EXPECT_EQ(absent.status, PtxbStatus::kPassed);
  EXPECT_EQ(absent.target_instructions.verdict, kInstStaticAbsent);
  const auto& absent_flags = absent.workloads.back().flags;
  EXPECT_NE(std::find(absent_flags.begin(), absent_flags.end(), "work_unmeasured"),
            absent_flags.end());
  EXPECT_NE(absent.target_instructions.work_done_note.find("status 1"), std::string::npos)
      << absent.target_instructions.work_done_note;
  compile_.sass.target_present = true;
  // A report cut short (no end marker) is unknown too.
  profile_log_ = "runner log line\n";
  EvalResult cut = run();
  EXPECT_EQ(cut.status, PtxbStatus::kPassed);
  EXPECT_EQ(cut.target_instructions.verdict, kInstUnknown);
}

TEST_F(EvaluatorTest, ProfiledCallIsAChosenTimedPathCallOfASecondRunner) {
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  // The runner under ncu: a sandbox prefix with the profiler policy, then the ncu wrapper, and
  // the runner without CUPTI (ncu owns it in that process).
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  const std::vector<std::string>& wrapper = launcher_.wrapped[0];
  ASSERT_GE(wrapper.size(), 8u);
  EXPECT_EQ(wrapper[0], PTXB_SANDBOX_PATH);
  const Json policy = Json::parse(wrapper[2]);
  EXPECT_EQ(policy["seccomp"], "profiler");
  EXPECT_EQ(wrapper[4], "/bin/sh");
  EXPECT_NE(wrapper[6].find("'/fake/ncu'"), std::string::npos);
  EXPECT_EQ(launcher_.wrapped_runner_args[0], std::vector<std::string>{"--no-cupti"});
  // The same call sequence as timing: warm-up + the candidate calls, rotating over the sets.
  const ProfiledCallRecord& call = r.target_instructions.profiled_call.value();
  const int warmup = job_.request.options.timing.warmup_calls;
  EXPECT_EQ(call.warmup_calls, warmup);
  EXPECT_EQ(call.calls, warmup + kProfileCandidateCalls);
  EXPECT_GT(call.call, warmup);
  EXPECT_LE(call.call, call.calls);
  EXPECT_EQ(call.launch_skip, call.call - 1);  // one kernel per call
  EXPECT_NE(wrapper[6].find(fmt::format("'--launch-skip' '{}'", call.launch_skip)),
            std::string::npos);
  ASSERT_EQ(profiled_sets_.size(), static_cast<std::size_t>(call.calls));
  for (std::size_t i = 0; i < profiled_sets_.size(); ++i)
    EXPECT_EQ(profiled_sets_[i], i % r.workloads[0].set_seeds.size());
  EXPECT_NEAR(call.timed_median_ms, 1.0, 1e-9);
  EXPECT_NEAR(call.gpu_time_ms, 1.0, 1e-9);
  auto back = TargetInstructionCheck::from_json(r.target_instructions.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->profiled_call->call, call.call);
  EXPECT_EQ(back->profiled_call->band_high, call.band_high);
}

TEST_F(EvaluatorTest, ProfiledCallFasterThanTheTimedOnesIsProfileMismatch) {
  // wgmma under the profiler, FFMA in every timed call: 0.026x the timed median.
  profile_log_ = profile_log(testdata("eval/ncu/wgmma_live.csv"), 26'000);
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(r.reason, "profile_mismatch");
  EXPECT_EQ(r.workloads.at(0).status, PtxbStatus::kRewardHack);
  EXPECT_NE(r.target_instructions.verdict, kInstDynamicPresent);
  EXPECT_FALSE(r.target_instructions.profiled_call.value().matches);
}

TEST_F(EvaluatorTest, ProfiledKernelNotTimedIsProfileMismatch) {
  profile_log_ = profile_log(testdata("eval/ncu/wgmma_live.csv"), 1'000'000, "_Z9otherwgmmav");
  EvalResult r = run();
  EXPECT_EQ(r.reason, "profile_mismatch");
  EXPECT_NE(r.target_instructions.verdict, kInstDynamicPresent);
}

TEST_F(EvaluatorTest, NoNcuFlagIsNotRunAndStaticAbsentSkipsTheProfiler) {
  job_.request.options.ncu = false;
  EXPECT_EQ(run().target_instructions.verdict, kInstNotRun);
  job_.request.options.ncu = true;
  compile_.sass.target_present = false;
  tools_.runs.clear();
  launcher_.wrapped.clear();
  // Without a target family the verdict is decided, but the call is still profiled for the work
  // it did: counters only, no source page.
  EvalResult r = run();
  EXPECT_EQ(r.target_instructions.verdict, kInstStaticAbsent);
  EXPECT_TRUE(tools_.runs.empty());
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  const std::string& script = launcher_.wrapped[0].at(launcher_.wrapped[0].size() - 2);
  EXPECT_EQ(script.find("--page source"), std::string::npos) << script;
  EXPECT_EQ(script.find("inst_executed,"), std::string::npos) << script;
  EXPECT_FALSE(r.target_instructions.dynamic.has_value());
}

// The paper GEMM needs 2*8192*7168*5120 flops = 601.3 GFLOP (tasks/cost_model.h).
TEST_F(EvaluatorTest, WorkDoneJudgesTheProfiledCallsArithmetic) {
  const double gemm_multiply_adds = 8192.0 * 7168 * 5120;
  profile_log_ =
      profile_log_with_work(testdata("eval/ncu/wgmma_live.csv"), 1'000'000, gemm_multiply_adds);
  EvalResult full = run();
  ASSERT_EQ(full.status, PtxbStatus::kPassed) << full.message;
  ASSERT_TRUE(full.target_instructions.work_done.has_value())
      << full.target_instructions.work_done_note;
  EXPECT_NEAR(full.target_instructions.work_done->fraction, 1.0, 1e-9);
  EXPECT_EQ(full.target_instructions.verdict, kInstDynamicPresent);

  // A quarter of the multiply-adds: the outputs passed, the work was skipped.
  profile_log_ =
      profile_log_with_work(testdata("eval/ncu/wgmma_live.csv"), 1'000'000, gemm_multiply_adds / 4);
  EvalResult skipped = run();
  EXPECT_EQ(skipped.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(skipped.reason, "insufficient_work");
  EXPECT_NE(skipped.message.find("601.3 GFLOP"), std::string::npos) << skipped.message;
  EXPECT_NE(skipped.message.find("150.3 GFLOP"), std::string::npos) << skipped.message;

  // Counters missing from the profile: not judged, and the note says why.
  profile_log_ = profile_log(testdata("eval/ncu/wgmma_live.csv"), 1'000'000);
  EvalResult unmeasured = run();
  EXPECT_EQ(unmeasured.status, PtxbStatus::kPassed);
  EXPECT_FALSE(unmeasured.target_instructions.work_done.has_value());
  EXPECT_NE(unmeasured.target_instructions.work_done_note.find("sm__ops_path_tensor"),
            std::string::npos)
      << unmeasured.target_instructions.work_done_note;
}

// A call of two kernels of which only one holds a target family (the backward's shape: a
// helper beside the tensor-core kernel): the helper is timed but not replayed by ncu.
class FocusedProfileTest : public EvaluatorTest {
 protected:
  void SetUp() override {
    EvaluatorTest::SetUp();
    compile_.sass.target_arch = "sm_90a";
    compile_.sass.kernels = {SassKernel{"_Z4gemmv", "sm_90a", 100, {{"HGMMA", 4}}, {{"GMMA", 4}}},
                             SassKernel{"_Z6helperv", "sm_90a", 10, {{"FFMA", 2}}, {}}};
    candidate_script_ = [](int, CallReply reply) -> Result<CallReply> {
      reply.kernel_count = 2;
      reply.kernel_launches = {KernelLaunch{"_Z4gemmv", {132, 1, 1}, {384, 1, 1}, 1, 900'000},
                               KernelLaunch{"_Z6helperv", {132, 1, 1}, {384, 1, 1}, 1, 100'000}};
      return reply;
    };
  }
  // The raw page of a whole-call profile: the target kernel's row, then the helper's.
  static std::string with_helper_row(std::string log) {
    std::string row = "\"1\",\"_Z6helperv\",\"(384, 1, 1)\",\"(132, 1, 1)\",\"100000\"";
    for (std::size_t i = 0; i < split(work_metrics_option(), ',').size(); ++i) row += ",\"0\"";
    log.insert(log.rfind("@@ptxb-ncu-end"), row + "\n");
    return log;
  }
  std::string wrapper_text(std::size_t i) const {
    std::string text;
    for (const std::string& arg : launcher_.wrapped.at(i)) text += arg + " ";
    return text;
  }
  static constexpr double kGemmMultiplyAdds = 8192.0 * 7168 * 5120;
};

TEST_F(FocusedProfileTest, OnlyTheTargetKernelIsProfiledAndHeldToItsOwnTime) {
  profile_log_ =
      profile_log_with_work(testdata("eval/ncu/wgmma_live.csv"), 945'000, kGemmMultiplyAdds);
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  EXPECT_EQ(r.target_instructions.verdict, kInstDynamicPresent);
  ASSERT_TRUE(r.target_instructions.profiled_call.has_value());
  const ProfiledCallRecord& call = *r.target_instructions.profiled_call;
  EXPECT_EQ(call.scope, "target_kernels");
  EXPECT_EQ(call.kernels, 1);
  EXPECT_NEAR(call.timed_median_ms, 0.9, 1e-9);  // the target kernel's CUPTI time per call
  EXPECT_NEAR(call.ratio, 1.05, 1e-9);
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  EXPECT_NE(wrapper_text(0).find("'regex:^(_Z4gemmv)$'"), std::string::npos) << wrapper_text(0);
  EXPECT_NE(wrapper_text(0).find("'--launch-count' '1'"), std::string::npos);
  EXPECT_TRUE(r.target_instructions.focus_note.empty());
  // The profiler hints read every kernel: the call is profiled whole.
  launcher_.wrapped.clear();
  job_.request.options.profiler_hints = true;
  profile_log_ = with_helper_row(profile_log_);
  EvalResult hinted = run();
  ASSERT_EQ(hinted.status, PtxbStatus::kPassed) << hinted.message;
  EXPECT_EQ(hinted.target_instructions.profiled_call->scope, "call");
  EXPECT_NE(wrapper_text(0).find("'--launch-count' '2'"), std::string::npos);
  // --ncu-source-page, the method before the focused plan, profiles the call whole too.
  launcher_.wrapped.clear();
  job_.request.options.profiler_hints = false;
  job_.request.options.ncu_source_page = true;
  EvalResult legacy = run();
  ASSERT_EQ(legacy.status, PtxbStatus::kPassed) << legacy.message;
  EXPECT_EQ(legacy.target_instructions.profiled_call->scope, "call");
  EXPECT_NE(wrapper_text(0).find("'--launch-count' '2'"), std::string::npos);
}

TEST_F(FocusedProfileTest, TooLittleWorkInTheTargetKernelsProfilesTheWholeCall) {
  // The tensor-core kernel did a quarter of the GEMM; the helper the rest (a legitimate split
  // that the focused profile cannot see): the whole call is profiled and passes.
  const std::string quarter =
      profile_log_with_work(testdata("eval/ncu/wgmma_live.csv"), 945'000, kGemmMultiplyAdds / 4);
  std::string whole = with_helper_row(
      profile_log_with_work(testdata("eval/ncu/wgmma_live.csv"), 900'000, kGemmMultiplyAdds));
  profile_logs_ = {quarter, whole};
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  ASSERT_EQ(launcher_.wrapped.size(), 2u);
  EXPECT_NE(wrapper_text(1).find("'--launch-count' '2'"), std::string::npos);
  EXPECT_EQ(r.target_instructions.profiled_call->scope, "call");
  EXPECT_NE(r.target_instructions.focus_note.find("150.3 GFLOP"), std::string::npos)
      << r.target_instructions.focus_note;
  ASSERT_TRUE(r.target_instructions.work_done.has_value());
  EXPECT_NEAR(r.target_instructions.work_done->fraction, 1.0, 1e-9);
  // Short in both: the whole call's verdict.
  launcher_.wrapped.clear();
  profile_logs_ = {quarter, with_helper_row(quarter)};
  EvalResult skipped = run();
  EXPECT_EQ(skipped.status, PtxbStatus::kRewardHack);
  EXPECT_EQ(skipped.reason, "insufficient_work");
  EXPECT_EQ(launcher_.wrapped.size(), 2u);
}

// With the compile stage's listing (kernel.sass) beside the artifact, the source counters come
// per address on the raw page (analysis/ncu_pc_source.h): ncu imports one page, not two. The
// golden pair is the probe of bench/ncu_passes.sh as the H200 profiled it.
TEST_F(EvaluatorTest, SourceCountersComeFromTheRawPageWhenTheListingIsThere) {
  ASSERT_TRUE(
      write_file_atomic(artifact_dir_ + "/kernel.sass", testdata("eval/ncu/probe_h200.sass")).ok());
  compile_.sass.kernels.clear();
  for (const char* name : {"_Z4workILi1EEvPfi", "_Z4workILi2EEvPfi", "_Z4workILi3EEvPfi"})
    compile_.sass.kernels.push_back(SassKernel{name, "sm_90a"});
  candidate_device_ns_ = 6'600'000;
  candidate_script_ = [](int, CallReply reply) -> Result<CallReply> {
    reply.kernel_count = 3;
    reply.kernel_launches.clear();
    for (const char* name : {"_Z4workILi1EEvPfi", "_Z4workILi2EEvPfi", "_Z4workILi3EEvPfi"})
      reply.kernel_launches.push_back(KernelLaunch{name, {65536, 1, 1}, {256, 1, 1}, 1, 2'200'000});
    return reply;
  };
  profile_log_ =
      "runner log line\n\n@@ptxb-ncu-profile-exit 0\n@@ptxb-ncu-source\n"
      "@@ptxb-ncu-launches\n" +
      testdata("eval/ncu/raw_h200_probe_instances.csv") + "@@ptxb-ncu-end\n";
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  std::string wrapper;
  for (const std::string& arg : launcher_.wrapped[0]) wrapper += arg + " ";
  EXPECT_NE(wrapper.find("--print-metric-instances details"), std::string::npos);
  EXPECT_EQ(wrapper.find("--page source"), std::string::npos);
  ASSERT_TRUE(r.target_instructions.dynamic.has_value()) << r.target_instructions.reason;
  EXPECT_EQ(r.target_instructions.verdict, kInstDynamicNotExecuted);  // FFMA only
  EXPECT_EQ(r.target_instructions.counts_from, "raw_page");
  ASSERT_TRUE(r.target_instructions.profiled_call.has_value());
  EXPECT_TRUE(r.target_instructions.profiled_call->matches)
      << r.target_instructions.profiled_call->mismatch;
  // Without the listing the source page is imported, as before.
  remove_tree(artifact_dir_ + "/kernel.sass");
  launcher_.wrapped.clear();
  EvalResult without = run();
  EXPECT_NE(without.target_instructions.counts_from.find("source_page (no listing: "),
            std::string::npos)
      << without.target_instructions.counts_from;
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  wrapper.clear();
  for (const std::string& arg : launcher_.wrapped[0]) wrapper += arg + " ";
  EXPECT_NE(wrapper.find("--page source"), std::string::npos);
  EXPECT_EQ(wrapper.find("--print-metric-instances"), std::string::npos);
  // A function that calls another: callees run at addresses outside the kernel's own, so the
  // source page gives the counts.
  ASSERT_TRUE(
      write_file_atomic(artifact_dir_ + "/kernel.sass", testdata("eval/ncu/probe_h200.sass")).ok());
  compile_.sass.kernels[0].opcode_histogram["CALL"] = 1;
  EvalResult calls = run();
  EXPECT_NE(calls.target_instructions.counts_from.find("CALL"), std::string::npos)
      << calls.target_instructions.counts_from;
}

// Profiler hints (EvalOptions::profiler_hints): the one profiled call also collects the hints'
// metrics, the result keeps them, and the feedback turns them into sentences. Without the
// option ncu is not asked for them.
TEST_F(EvaluatorTest, ProfilerHintsComeFromTheProfiledCall) {
  const double gemm_multiply_adds = 8192.0 * 7168 * 5120;
  profile_log_ = profile_log_with_work(
      testdata("eval/ncu/wgmma_live.csv"), 1'000'000, gemm_multiply_adds,
      {{"sm__throughput.avg.pct_of_peak_sustained_elapsed", "91.5"},
       {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "38.2"},
       {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio", "0.6"},
       {"smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio", "1.8"}});
  job_.request.options.profiler_hints = true;
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  const std::string wrapper = join(launcher_.wrapped[0], " ");
  EXPECT_NE(wrapper.find("sm__throughput.avg.pct_of_peak_sustained_elapsed"), std::string::npos);
  EXPECT_NE(wrapper.find("regex:smsp__average_warps_issue_stalled_"), std::string::npos);
  ASSERT_EQ(r.target_instructions.hint_metrics.size(), 1u);
  EXPECT_NEAR(r.target_instructions.hint_metrics[0].values.at(
                  "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
              91.5, 1e-9);
  FeedbackOptions options;
  options.profiler_hints = true;
  const std::string feedback = render_feedback(r, options);
  EXPECT_NE(feedback.find("## Profiler hints\n- "), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("none: this evaluation recorded no profiler metrics"), std::string::npos)
      << feedback;
  auto back = EvalResult::from_json(r.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json(), r.to_json());

  job_.request.options.profiler_hints = false;
  launcher_.wrapped.clear();
  EvalResult plain = run();
  ASSERT_EQ(plain.status, PtxbStatus::kPassed) << plain.message;
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  EXPECT_EQ(join(launcher_.wrapped[0], " ").find("sm__throughput"), std::string::npos);
  EXPECT_TRUE(plain.target_instructions.hint_metrics.empty());
}

TEST_F(EvaluatorTest, ResultRoundTripsAndMapsToSchemaStatuses) {
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    r.cuda_error = CudaErrorInfo{"cudaErrorIllegalAddress", "illegal", "sync"};
    return r;
  };
  EvalResult r = run();
  auto back = EvalResult::from_json(r.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->to_json().dump(), r.to_json().dump());
  auto traces = r.traces(task_->definition.name, workload_to_json(task_->workload), "kernel.cu");
  ASSERT_EQ(traces.size(), 1u);
  Json trace = trace_to_json(traces[0]);
  EXPECT_EQ(trace["evaluation"]["status"], "RUNTIME_ERROR");
  EXPECT_EQ(trace["evaluation"]["ptxbench"]["status"], "MEMORY_ERROR");
  EXPECT_EQ(trace["evaluation"]["ptxbench"]["reason"], "illegal_address");
  EXPECT_EQ(trace["workload"]["uuid"], task_->workload.uuid);
  EXPECT_FALSE(trace["evaluation"]["ptxbench"].contains("trace_validation_error"));
}

// ---- sandbox (supervisor/eval_sandbox.h): every untrusted process starts inside ptxbench-sandbox
// ----

TEST_F(EvaluatorTest, RunnersAndProfilersRunInsideTheSandbox) {
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  EXPECT_EQ(tools_.self_checks, 1);
  const Json sandbox = r.environment.sandbox.value();
  EXPECT_EQ(sandbox["enabled"], true);
  EXPECT_EQ(sandbox["report"]["Seccomp"], "2");
  // Both runners: reference first, then the candidate, each with its own runner policy.
  ASSERT_EQ(launcher_.sandbox_prefixes.size(), 2u);
  std::vector<SandboxPolicy> runner_policies;
  for (const auto& prefix : launcher_.sandbox_prefixes) {
    ASSERT_EQ(prefix.size(), 4u);
    EXPECT_EQ(prefix[0], PTXB_SANDBOX_PATH);
    EXPECT_EQ(prefix[3], "--");
    auto policy = SandboxPolicy::from_json(Json::parse(prefix[2]));
    ASSERT_TRUE(policy.ok()) << policy.error().message;
    EXPECT_EQ(policy->seccomp, SeccompProfile::kRunner);
    EXPECT_EQ(policy->keep_fds, (std::vector<int>{0, 1, 2, 3}));  // stdio + the channel
    runner_policies.push_back(*policy);
  }
  const SandboxPolicy& reference = runner_policies[0];
  const SandboxPolicy& candidate = runner_policies[1];
  EXPECT_NE(reference.scratch_dir, candidate.scratch_dir);
  ASSERT_EQ(reference.set_env.size(), 2u);
  EXPECT_EQ(reference.set_env[0], "PTXBENCH_REFERENCE=cublaslt_gemm");
  EXPECT_TRUE(candidate.set_env.empty());
  EXPECT_EQ(candidate.hidden_files,
            r.environment.sandbox.value()["hidden_files"].get<std::vector<std::string>>());
  EXPECT_TRUE(reference.hidden_files.empty());
  // The candidate loads a staged copy of its .so, where the sandbox's uid can read it.
  EXPECT_NE(loaded_so_, compile_.artifact.path_of("kernel.so"));
  EXPECT_EQ(loaded_so_,
            candidate.scratch_dir.substr(0, candidate.scratch_dir.rfind('/')) + "/kernel.so");
  // ncu runs inside the sandbox too, with the profiler profile (loopback IP for its target)
  // and the runner's channel kept through it.
  ASSERT_EQ(launcher_.wrapped.size(), 1u);
  const Json ncu_policy = Json::parse(launcher_.wrapped[0].at(2));
  EXPECT_EQ(ncu_policy["seccomp"], "profiler");
  EXPECT_EQ(ncu_policy["keep_fds"], Json::array({0, 1, 2, 3}));
  EXPECT_EQ(launcher_.wrapped[0].at(4), "/bin/sh");
  ASSERT_EQ(tools_.policies.size(), 1u);  // the self-check
  // The staging directory is gone afterwards.
  EXPECT_FALSE(path_exists(loaded_so_));
}

TEST_F(EvaluatorTest, MissingSandboxIsInfraErrorNotAnUnsandboxedRun) {
  job_.sandbox_path = "/nonexistent/ptxbench-sandbox";
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kInfraError);
  EXPECT_EQ(r.reason, "sandbox_unavailable");
  EXPECT_NE(r.message.find("--unsafe-no-sandbox"), std::string::npos) << r.message;
  EXPECT_TRUE(launcher_.spawned.empty());
  EXPECT_TRUE(tools_.runs.empty());
}

TEST_F(EvaluatorTest, SandboxThatCannotBeSetUpIsInfraError) {
  tools_.sandbox_report = exited(kSandboxExitSetupFailed, "",
                                 std::string(kSandboxSetupErrorPrefix) +
                                     "unshare(mount, network, IPC): Operation not permitted\n");
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kInfraError);
  EXPECT_EQ(r.reason, "sandbox_setup");
  EXPECT_NE(r.message.find("unshare"), std::string::npos) << r.message;
  EXPECT_TRUE(launcher_.spawned.empty());
}

TEST_F(EvaluatorTest, WeakerSandboxThanAskedIsRefused) {
  Json report = good_sandbox_report();
  report["Seccomp"] = "0";
  report["CapEff"] = "000001ffffffffff";
  report["namespaces"]["net"] = namespace_ids()["net"];
  tools_.sandbox_report = exited(0, report.dump());
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kInfraError);
  EXPECT_EQ(r.reason, "sandbox_setup");
  for (const char* missing : {"no seccomp filter", "CapEff", "no network namespace"})
    EXPECT_NE(r.message.find(missing), std::string::npos) << missing << " in " << r.message;
  EXPECT_TRUE(launcher_.spawned.empty());
}

TEST_F(EvaluatorTest, RunnerWhoseSandboxFailsIsInfraError) {
  hello_error_ = Error{"channel closed", "eof"};
  candidate_exit_ = RunnerExit{true, kSandboxExitSetupFailed, 0, false};
  candidate_log_ = std::string(kSandboxSetupErrorPrefix) + "mount tmpfs on /tmp/x: No space left\n";
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kInfraError);
  EXPECT_EQ(r.reason, "sandbox_setup");
}

TEST_F(EvaluatorTest, UnsafeNoSandboxRunsUnwrappedAndSaysSo) {
  job_.request.options.unsafe_no_sandbox = true;
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  EXPECT_EQ(tools_.self_checks, 0);
  EXPECT_TRUE(tools_.policies.empty());
  for (const auto& prefix : launcher_.sandbox_prefixes) EXPECT_TRUE(prefix.empty());
  EXPECT_EQ(r.environment.sandbox.value()["enabled"], false);
  EXPECT_NE(render_feedback(r).find("ran without the sandbox"), std::string::npos);
  auto traces = r.traces(task_->definition.name, workload_to_json(task_->workload), "kernel.cu");
  ASSERT_EQ(traces.size(), 1u);
  Json trace = trace_to_json(traces[0]);
  EXPECT_EQ(trace["evaluation"]["ptxbench"]["sandboxed"], false);
  EXPECT_EQ(trace["evaluation"]["ptxbench"]["options"]["unsafe_no_sandbox"], true);
}

TEST_F(EvaluatorTest, SeccompKillIsForbiddenAndNamesTheCall) {
  candidate_script_ = [](int, CallReply) -> Result<CallReply> { return Error{"gone", "eof"}; };
  candidate_exit_ = RunnerExit{true, -1, SIGSYS, false};
  candidate_log_ = std::string("some output\n") + std::string(kBlockedSyscallLine) + "101\n";
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kForbidden);
  EXPECT_EQ(r.reason, "sandbox_seccomp:ptrace");
  EXPECT_NE(r.message.find("ptrace"), std::string::npos) << r.message;
  EXPECT_NE(render_feedback(r).find("forbidden system call"), std::string::npos);
  // A handler the candidate replaced loses the name, never the verdict.
  candidate_log_ = "no line\n";
  EXPECT_EQ(run().reason, "sandbox_seccomp");
}

TEST_F(EvaluatorTest, ResourceLimitsAreNamed) {
  candidate_script_ = [](int, CallReply) -> Result<CallReply> { return Error{"gone", "eof"}; };
  candidate_exit_ = RunnerExit{true, -1, SIGXCPU, false};
  EvalResult cpu = run();
  EXPECT_EQ(cpu.status, PtxbStatus::kRuntimeError);
  EXPECT_EQ(cpu.reason, "sandbox_cpu_limit");
  candidate_exit_ = RunnerExit{true, -1, SIGXFSZ, false};
  EXPECT_EQ(run().reason, "sandbox_file_size_limit");
}

TEST_F(EvaluatorTest, SandboxStopInsideTheSanitizerIsForbidden) {
  job_.request.options.sanitize = true;
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(0, testdata("eval/sanitizer/memcheck_clean.txt"),
             std::string(kBlockedSyscallLine) + "41\n");  // socket
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kForbidden);
  EXPECT_EQ(r.reason, "sandbox_seccomp:socket");
  ASSERT_EQ(tools_.policies.size(), 2u);
  EXPECT_EQ(tools_.policies[1]["seccomp"], "profiler");
}

TEST_F(EvaluatorTest, SandboxStopUnderNcuOverridesThePass) {
  profile_log_ = std::string(kBlockedSyscallLine) + "62\n" +  // kill
                 profile_log("", 0, "_Z4gemmv", 1);
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kForbidden);
  EXPECT_EQ(r.reason, "sandbox_seccomp:kill");
  EXPECT_EQ(r.target_instructions.verdict, kInstUnknown);
  ASSERT_EQ(r.workloads.size(), 1u);
  EXPECT_EQ(r.workloads[0].status, PtxbStatus::kForbidden);
}

// ---- the debug stage (supervisor/stage_debug.cc) ----

// A variable of a sandboxed process's policy ("" when not set).
std::string policy_env(const Json& policy, const std::string& key) {
  for (const auto& entry : policy.value("set_env", Json::array())) {
    const std::string text = entry.get<std::string>();
    if (starts_with(text, key + "=")) return text.substr(key.size() + 1);
  }
  return "";
}

CallReply illegal_address_reply(CallReply r) {
  r.cuda_error =
      CudaErrorInfo{"cudaErrorIllegalAddress", "an illegal memory access", "cudaStreamSynchronize"};
  return r;
}

class DebugStageTest : public EvaluatorTest {
 protected:
  void SetUp() override {
    EvaluatorTest::SetUp();
    job_.request.options.debug = true;
    job_.cuda_gdb_path = "/fake/cuda-gdb";
    tools_.by_tool["/fake/ptxbench-runner"] =
        exited(1, "", "ptxbench-runner: self-contained call failed: cudaStreamSynchronize\n");
  }
  // The driver's part: the core dump where CUDA_COREDUMP_FILE says, for the runner only.
  void write_core_dump_on_exception() {
    tools_.on_run = [this](const std::vector<std::string>& argv, const Json& policy) {
      if (argv.at(0) != "/fake/ptxbench-runner") return;
      runner_policy_ = policy;
      core_file_ = replace_all(policy_env(policy, "CUDA_COREDUMP_FILE"), "%p", "4242");
      EXPECT_TRUE(write_file_atomic(core_file_, "core").ok()) << core_file_;
    };
  }
  Json runner_policy_;
  std::string core_file_;
};

TEST_F(DebugStageTest, AnIllegalAddressIsLocatedBySanitizerAndCudaGdbInTheSandbox) {
  job_.request.source = "#define PTXB_TEST_VARIANT 3\n" + testdata("eval/gemm_variants.cu");
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(9, testdata("eval/sanitizer/memcheck_oob.txt"));
  tools_.by_tool["/fake/cuda-gdb"] =
      exited(0, testdata("eval/cuda_gdb/documented_illegal_address.txt"));
  write_core_dump_on_exception();
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    return illegal_address_reply(r);
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kMemoryError);
  ASSERT_TRUE(r.debug.has_value());
  const DebugRecord& d = *r.debug;
  ASSERT_TRUE(d.fault.has_value());
  EXPECT_EQ(d.fault->line, 89);
  EXPECT_EQ(d.fault->address, "0x7f45e27c0000");
  ASSERT_TRUE(d.core_dump.has_value());
  EXPECT_EQ(d.core_dump->trigger, "exception");
  EXPECT_EQ(d.core_dump->bytes, 4);
  ASSERT_TRUE(d.core_dump->cuda_gdb.has_value());
  EXPECT_EQ(d.core_dump->cuda_gdb->exception, "Warp Illegal Address");
  ASSERT_TRUE(d.points_at.has_value());
  EXPECT_EQ(d.points_at->line, 89);
  EXPECT_EQ(d.points_at->source, "sanitizer");
  // The error surfaced at cudaStreamSynchronize: the kernel's launch is named too.
  ASSERT_TRUE(d.launch.has_value());
  EXPECT_EQ(d.launch->line, infer_launch_line(job_.request.source, 0, "gemm_tile_kernel"));
  EXPECT_TRUE(d.notes.empty()) << d.notes.front();
  EXPECT_NE(d.cuda_gdb_output.find("CUDA Exception"), std::string::npos);
  EXPECT_NE(r.message.find("the debug stage points at kernel.cu:89 (sanitizer)"), std::string::npos)
      << r.message;
  EXPECT_FALSE(r.sanitizer.has_value());  // the debug record holds the memcheck pass
  // The runner ran in the sandbox with the profilers' seccomp profile (the driver's dump writer
  // opens a socket the runner profile traps), core dumps on and a scratch folder on disk.
  auto policy = SandboxPolicy::from_json(runner_policy_);
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->seccomp, SeccompProfile::kProfiler);
  EXPECT_FALSE(policy->scratch_tmpfs);
  EXPECT_EQ(policy->file_size_bytes, 256ull << 20);
  EXPECT_TRUE(starts_with(core_file_, policy->scratch_dir + "/core_"));
  EXPECT_EQ(policy_env(runner_policy_, "CUDA_COREDUMP_GENERATION_FLAGS"),
            "skip_global_memory,skip_shared_memory,skip_local_memory,skip_abort");
  EXPECT_EQ(policy_env(runner_policy_, "CUDA_ENABLE_USER_TRIGGERED_COREDUMP"), "");
  // cuda-gdb read that dump (in the profilers' sandbox), which is gone afterwards.
  const auto& gdb_run = tools_.runs.back();
  EXPECT_EQ(gdb_run.at(0), "/fake/cuda-gdb");
  EXPECT_NE(std::find(gdb_run.begin(), gdb_run.end(), "target cudacore " + core_file_),
            gdb_run.end());
  EXPECT_EQ(tools_.policies.back()["seccomp"], "profiler");
  // The feedback's compact section, and the record's JSON round trip.
  const std::string feedback = render_feedback(r);
  EXPECT_NE(feedback.find("## Debug\npoints at kernel.cu:89 (from sanitizer)\n"), std::string::npos)
      << feedback;
  auto back = EvalResult::from_json(r.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  ASSERT_TRUE(back->debug.has_value());
  EXPECT_EQ(back->debug->to_json(), d.to_json());
  EXPECT_TRUE(std::any_of(r.stage_ms.begin(), r.stage_ms.end(),
                          [](const auto& stage) { return stage.first == "debug"; }));
}

// memcheck out of time (a fault in every thread of a large grid): what it printed still
// locates the fault, and the note says the output was cut.
TEST_F(DebugStageTest, AMemcheckStoppedByItsLimitStillLocatesTheFault) {
  job_.cuda_gdb_path.clear();
  job_.request.source = "#define PTXB_TEST_VARIANT 3\n" + testdata("eval/gemm_variants.cu");
  ProcessResult cut = exited(0, testdata("eval/sanitizer/memcheck_cut_shared_oob.txt"));
  cut.timed_out = true;
  tools_.by_tool["/fake/compute-sanitizer"] = cut;
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    return illegal_address_reply(r);
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kMemoryError);
  ASSERT_TRUE(r.debug.has_value());
  ASSERT_TRUE(r.debug->fault.has_value());
  EXPECT_EQ(r.debug->fault->line, 19);
  ASSERT_TRUE(r.debug->points_at.has_value());
  EXPECT_EQ(r.debug->points_at->source, "sanitizer");
  ASSERT_FALSE(r.debug->notes.empty());
  EXPECT_TRUE(starts_with(r.debug->notes.front(), "compute-sanitizer: stopped after "))
      << r.debug->notes.front();
  EXPECT_NE(r.debug->notes.front().find("the fault is the most precise of them"),
            std::string::npos);
}

TEST_F(DebugStageTest, WithoutTheToolsTheStageSaysSoAndPointsAtTheLaunch) {
  job_.sanitizer_path.clear();
  job_.cuda_gdb_path.clear();
  job_.request.source = "#define PTXB_TEST_VARIANT 3\n" + testdata("eval/gemm_variants.cu");
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    return illegal_address_reply(r);
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kMemoryError);
  ASSERT_TRUE(r.debug.has_value());
  EXPECT_EQ(r.debug->notes, (std::vector<std::string>{"compute-sanitizer: not found; skipped",
                                                      "cuda-gdb: not found; no core dump taken"}));
  ASSERT_TRUE(r.debug->points_at.has_value());
  EXPECT_EQ(r.debug->points_at->source, "launch");
  EXPECT_EQ(r.debug->points_at->line, infer_launch_line(job_.request.source, 0));
  for (const auto& ran : tools_.runs) EXPECT_NE(ran.at(0), "/fake/ptxbench-runner");
}

// A hang no tool located (no cuda-gdb here; on the H200 the hang dumps held nothing): the report
// still points at the launch of the kernel that did not finish, and says so.
TEST_F(DebugStageTest, AnUnlocatedHangPointsAtTheLaunch) {
  job_.cuda_gdb_path.clear();
  job_.request.source = "#define PTXB_TEST_VARIANT 4\n" + testdata("eval/gemm_variants.cu");
  candidate_script_ = [](int, CallReply) -> Result<CallReply> {
    return Error{"call did not answer", "timeout"};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kTimeout);
  ASSERT_TRUE(r.debug.has_value());
  ASSERT_TRUE(r.debug->launch.has_value());
  EXPECT_TRUE(r.debug->launch->hang);
  EXPECT_EQ(r.debug->launch->line, infer_launch_line(job_.request.source, 0));
  ASSERT_TRUE(r.debug->points_at.has_value());
  EXPECT_EQ(r.debug->points_at->source, "launch");
  EXPECT_NE(r.debug->summary.find("the call did not finish and no tool saw inside the kernel"),
            std::string::npos)
      << r.debug->summary;
  auto back = DebugRecord::from_json(r.debug->to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_TRUE(back->launch->hang);
}

TEST_F(DebugStageTest, AHangIsDumpedThroughThePipeAndReadByCudaGdb) {
  job_.request.source = "#define PTXB_TEST_VARIANT 4\n" + testdata("eval/gemm_variants.cu");
  // 9 s: 5 s kept for cuda-gdb, the trigger after a third of the remaining 4 s.
  job_.request.options.debug_budget_seconds = 9;
  tools_.by_tool["/fake/cuda-gdb"] =
      exited(0, testdata("eval/cuda_gdb/synthetic_hang_user_dump.txt"));
  ProcessResult killed;
  killed.term_signal = SIGKILL;
  tools_.by_tool["/fake/ptxbench-runner"] = killed;
  bool triggered = false;
  tools_.on_run = [&](const std::vector<std::string>& argv, const Json& policy) {
    if (argv.at(0) != "/fake/ptxbench-runner") return;
    // The driver: it makes the pipe, reads it, and writes the dump when a byte arrives.
    const std::string pipe = policy_env(policy, "CUDA_COREDUMP_PIPE");
    ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0) << pipe;
    const int reader = ::open(pipe.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    char byte = 0;
    for (int i = 0; i < 100 && !triggered; ++i) {
      triggered = ::read(reader, &byte, 1) == 1;
      if (!triggered) std::this_thread::sleep_for(milliseconds(50));
    }
    ::close(reader);
    const std::string file = replace_all(policy_env(policy, "CUDA_COREDUMP_FILE"), "%p", "9");
    if (triggered) EXPECT_TRUE(write_file_atomic(file, "hang core").ok());
  };
  candidate_script_ = [](int, CallReply) -> Result<CallReply> {
    return Error{"call did not answer", "timeout"};
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kTimeout);
  EXPECT_TRUE(triggered);
  ASSERT_TRUE(r.debug.has_value());
  const DebugRecord& d = *r.debug;
  EXPECT_FALSE(d.fault.has_value());
  ASSERT_FALSE(d.notes.empty());
  EXPECT_EQ(d.notes.front(),
            "compute-sanitizer: not run on a hang (it would wait as long as the call)");
  ASSERT_TRUE(d.core_dump.has_value());
  EXPECT_EQ(d.core_dump->trigger, "hang");
  ASSERT_TRUE(d.points_at.has_value());
  EXPECT_EQ(d.points_at->line, 27);
  EXPECT_EQ(d.points_at->source, "cuda-gdb");
  EXPECT_FALSE(d.launch.has_value());  // a hang surfaces at no synchronization
  EXPECT_NE(d.summary.find("no exception (stopped where it hung)"), std::string::npos) << d.summary;
  EXPECT_NE(d.summary.find("> 27 |"), std::string::npos) << d.summary;
  for (const auto& ran : tools_.runs) EXPECT_NE(ran.at(0), "/fake/compute-sanitizer");
}

TEST_F(DebugStageTest, OffByDefaultAndNeverForOtherVerdicts) {
  job_.request.options.debug = false;
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(9, testdata("eval/sanitizer/memcheck_oob.txt"));
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    return illegal_address_reply(r);
  };
  EvalResult off = run();
  EXPECT_EQ(off.status, PtxbStatus::kMemoryError);
  EXPECT_FALSE(off.debug.has_value());
  EXPECT_TRUE(off.sanitizer.has_value());  // the one memcheck pass, as before
  job_.request.options.debug = true;
  candidate_script_ = nullptr;
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 3;
    return std::vector<OutputCheck>{c};
  };
  EvalResult wrong = run();
  EXPECT_EQ(wrong.status, PtxbStatus::kIncorrectNumerical);
  EXPECT_FALSE(wrong.debug.has_value());
}

TEST_F(DebugStageTest, DebugOperationRunsTheUntimedStagesAndExplainsAFailure) {
  job_.request.options.debug = false;
  job_.request.operation = EvalOperation::kDebug;
  ASSERT_TRUE(apply_operation(job_.request.operation, job_.request.options).ok());
  EXPECT_TRUE(job_.request.options.debug);
  EvalResult passed = run();
  ASSERT_EQ(passed.status, PtxbStatus::kPassed) << passed.message;
  EXPECT_NE(passed.message.find("not timed (operation debug)"), std::string::npos);
  EXPECT_EQ(launcher_.spawned, std::vector<RunnerRole>{RunnerRole::kCandidate});
  EXPECT_FALSE(passed.debug.has_value());
  job_.cuda_gdb_path.clear();
  tools_.by_tool["/fake/compute-sanitizer"] =
      exited(9, testdata("eval/sanitizer/memcheck_oob.txt"));
  candidate_script_ = [](int, CallReply r) -> Result<CallReply> {
    return illegal_address_reply(r);
  };
  EvalResult failed = run();
  EXPECT_EQ(failed.status, PtxbStatus::kMemoryError);
  ASSERT_TRUE(failed.debug.has_value());
  EXPECT_EQ(failed.debug->points_at->line, 89);
}

TEST(SelfContainedParams, FollowTheSignatureWithFullSizeTensors) {
  auto registry = TaskRegistry::load({});
  ASSERT_TRUE(registry.ok());
  const Task* task = registry->get("gemm_n7168_k5120").value();
  Json params = self_contained_params(*task, "sig", 5).value();
  ASSERT_EQ(params["params"].size(), 6u);
  EXPECT_EQ(params["params"][0]["name"], "A");
  EXPECT_EQ(params["params"][0]["tensor"]["elements"], 8192ull * 5120ull);
  EXPECT_EQ(params["params"][0]["tensor"]["init"], "normal");
  EXPECT_EQ(params["params"][2]["tensor"]["init"], "zeros");
  EXPECT_EQ(params["params"][3]["i64"], 8192);
  EXPECT_EQ(params["seed"], 5);
}

TEST(SelfContainedParams, GqaScalarByValueAndIndexArraysAsTheWorkloadGivesThem) {
  auto registry = TaskRegistry::load({});
  ASSERT_TRUE(registry.ok());
  const Task* task = registry->get("gqa_ragged_prefill_causal_h32_kv4_d128").value();
  auto params = self_contained_params(*task, "sig", 5);
  ASSERT_TRUE(params.ok()) << params.error().message;
  const Json& p = (*params)["params"];
  ASSERT_EQ(p.size(), 14u);  // q k v qo_indptr kv_indptr sm_scale output lse + 6 axes
  EXPECT_EQ(p[0]["tensor"]["init"], "normal");
  // qo_indptr = {0, 2048, 4096, 6144, 8192} as little-endian int32.
  EXPECT_EQ(p[3]["tensor"]["init"], "data");
  EXPECT_EQ(p[3]["tensor"]["data_hex"],
            "00000000000800000010000000180000"
            "00200000");
  EXPECT_EQ(p[5]["name"], "sm_scale");
  EXPECT_NEAR(p[5]["f32"].get<double>(), 0.08838834764831843, 1e-12);
  EXPECT_EQ(p[6]["tensor"]["init"], "zeros");
  // The runner accepts it: the data is exactly the tensor's bytes.
  auto spec = self_contained_spec_from_json(*params);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto bytes = generate_tensor_bytes(*spec->params[3].tensor, 5, 3);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->size(), 20u);
}

TEST(TimingStats, SummaryOfKnownSamples) {
  TimingPolicy policy;
  policy.min_samples = 4;
  TimingStats s = summarize_samples({4e6, 1e6, 3e6, 2e6}, policy);
  EXPECT_EQ(s.samples, 4);
  EXPECT_DOUBLE_EQ(s.median_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.mean_ms, 2.5);
  EXPECT_DOUBLE_EQ(s.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(s.p25_ms, 1.75);
  EXPECT_DOUBLE_EQ(s.p75_ms, 3.25);
  EXPECT_NEAR(s.stdev_ms, 1.2909944, 1e-6);
  EXPECT_NEAR(s.rse, 1.2909944 / 2.0 / 2.5, 1e-6);
  EXPECT_FALSE(s.converged);
}

TEST(TimingStats, SamplingStopsOnConvergenceCapOrBudget) {
  TimingPolicy policy;
  policy.min_samples = 3;
  policy.max_samples = 5;
  policy.min_samples_slow = 2;
  policy.budget_seconds = 1.0;
  EXPECT_EQ(next_sampling_step({1, 1}, 0.0, policy), SamplingDecision::kContinue);
  EXPECT_EQ(next_sampling_step({1, 1, 1}, 0.0, policy), SamplingDecision::kStopConverged);
  EXPECT_EQ(next_sampling_step({1, 2, 1}, 0.0, policy), SamplingDecision::kContinue);
  EXPECT_EQ(next_sampling_step({1, 2, 1, 2, 1}, 0.0, policy), SamplingDecision::kStopCap);
  EXPECT_EQ(next_sampling_step({1, 2}, 2.0, policy), SamplingDecision::kStopBudget);
  EXPECT_EQ(next_sampling_step({1}, 2.0, policy), SamplingDecision::kContinue);  // slow minimum
}

TEST(EvalRequest, RoundTripAndBadInput) {
  EvalRequest request;
  request.task = "gemm_n7168_k5120";
  request.source = "void run() {}";
  request.options.seed = 9;
  request.options.sanitize = true;
  request.options.disable_static_checks = true;
  request.options.timing.revalidation_trials = 7;
  auto back = EvalRequest::from_json(request.to_json());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->options.disable_static_checks);
  EXPECT_EQ(back->options.timing.revalidation_trials, 7);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->to_json().dump(), request.to_json().dump());
  Json bad = request.to_json();
  bad["options"]["sanitizer_tool"] = "valgrind";
  EXPECT_FALSE(EvalRequest::from_json(bad).ok());
  bad = request.to_json();
  bad["options"]["seed"] = "nine";
  EXPECT_FALSE(EvalRequest::from_json(bad).ok());
  EXPECT_FALSE(EvalRequest::from_json(Json::array()).ok());
  // evaluate is not written (existing requests keep their JSON and their keys); others are.
  EXPECT_FALSE(request.to_json().contains("operation"));
  bad = request.to_json();
  bad["operation"] = "gdb";
  auto unknown = EvalRequest::from_json(bad);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("evaluate, sanitize, profile, debug"), std::string::npos);
}

TEST(EvalOperation, OptionsFollowTheOperationAndContradictionsAreRefused) {
  EvalOptions options;
  ASSERT_TRUE(apply_operation(EvalOperation::kSanitize, options).ok());
  EXPECT_TRUE(options.sanitize);
  EXPECT_FALSE(options.ncu);
  EXPECT_TRUE(apply_operation(EvalOperation::kSanitize, options).ok());  // twice: the same
  EXPECT_TRUE(options.sanitize);
  EvalOptions energy;
  energy.energy = true;
  EXPECT_EQ(apply_operation(EvalOperation::kSanitize, energy).error().code, "invalid");
  EvalOptions second;
  second.also_reference = "flashinfer";  // timed after the verdict, which these never reach
  EXPECT_EQ(apply_operation(EvalOperation::kSanitize, second).error().code, "invalid");
  EXPECT_EQ(apply_operation(EvalOperation::kDebug, second).error().code, "invalid");
  EvalOptions profile;
  ASSERT_TRUE(apply_operation(EvalOperation::kProfile, profile).ok());
  EXPECT_TRUE(profile.ncu);
  profile.ncu = false;
  EXPECT_EQ(apply_operation(EvalOperation::kProfile, profile).error().code, "invalid");
  EvalOptions plain;
  plain.ncu = false;
  ASSERT_TRUE(apply_operation(EvalOperation::kEvaluate, plain).ok());
  EXPECT_FALSE(plain.ncu);
  EXPECT_FALSE(plain.sanitize);
  EXPECT_EQ(parse_eval_operation("profile"), EvalOperation::kProfile);
  EXPECT_FALSE(parse_eval_operation("Profile").has_value());
  EXPECT_EQ(eval_operation_name(EvalOperation::kSanitize), "sanitize");
  EvalOptions debug;
  ASSERT_TRUE(apply_operation(EvalOperation::kDebug, debug).ok());
  EXPECT_TRUE(debug.debug);
  EXPECT_FALSE(debug.ncu);
  EXPECT_FALSE(debug.sanitize);  // the stage runs its own memcheck pass
  EXPECT_EQ(parse_eval_operation("debug"), EvalOperation::kDebug);
  debug.energy = true;
  EXPECT_EQ(apply_operation(EvalOperation::kDebug, debug).error().code, "invalid");
  // The options' JSON: absent when off (idempotency keys unchanged), bounded budget.
  EXPECT_FALSE(EvalOptions{}.to_json().contains("debug"));
  Json budget = EvalOptions{}.to_json();
  budget["debug"] = true;
  budget["debug_budget_seconds"] = 600;
  EXPECT_FALSE(EvalOptions::from_json(budget).ok());
}

// Pinning is the default: absent from the JSON when on (requests written before keep their
// idempotency keys and now pin), written as false when turned off.
TEST(EvalOptionsJson, PinningIsOnByDefaultAndWrittenOnlyWhenOff) {
  EXPECT_TRUE(EvalOptions{}.pin_reference_algorithm);
  EXPECT_FALSE(EvalOptions{}.to_json().contains("pin_reference_algorithm"));
  auto from_absent = EvalOptions::from_json(EvalOptions{}.to_json());
  ASSERT_TRUE(from_absent.ok()) << from_absent.error().message;
  EXPECT_TRUE(from_absent->pin_reference_algorithm);
  EvalOptions off;
  off.pin_reference_algorithm = false;
  EXPECT_EQ(off.to_json().at("pin_reference_algorithm"), false);
  auto back = EvalOptions::from_json(off.to_json());
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_FALSE(back->pin_reference_algorithm);
}

TEST(DeviceFacts, PhysicalFloorIsTheLargerBound) {
  DeviceFacts f;
  f.sm_count = 132;
  f.max_sm_clock_mhz = 1980;
  f.bf16_dense_flop_per_clock_per_sm = 4096;
  f.memory_bytes_per_second = 4.8e12;
  // GEMM 8192x7168x5120: 6.01e11 FLOP / 1.070e15 FLOP/s = 0.5618 ms.
  EXPECT_NEAR(f.physical_floor_ms(2.0 * 8192 * 7168 * 5120, 1e8), 0.5618, 1e-3);
  // Memory-bound: 4.8e9 bytes at 4.8 TB/s = 1 ms.
  EXPECT_NEAR(f.physical_floor_ms(1.0, 4.8e9), 1.0, 1e-9);
  EXPECT_EQ(DeviceFacts{}.physical_floor_ms(1e12, 1e9), 0.0);
}

// --pin-reference-algorithm: the runners load cuBLASLt pinned to the supervisor's own choice
// (protocol/reference_selector.h), through the selector they are spawned with and the sandbox
// policy's environment; a reference without a cuBLASLt choice to pin is the harness's error.
TEST_F(EvaluatorTest, PinnedReferenceRunnersGetTheSupervisorsCublasLtChoice) {
  job_.request.options.pin_reference_algorithm = true;
  device_.reference_backend = Json::parse(R"({"backend": "cublaslt_gemm", "shapes": [
      {"m": 8192, "n": 7168, "k": 5120, "algorithm": {"heuristic_index": 3}}]})");
  launcher_.reference = [] {
    auto s = std::make_unique<FakeSession>();
    s->device_ns = 750'000;
    s->log_text =
        "libptxbench_reference: prepared {\"backend\":\"cublaslt_gemm\",\"pinned\":true}\n";
    return s;
  };
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  ASSERT_FALSE(launcher_.selectors.empty());
  for (std::size_t i = 0; i < launcher_.spawned.size(); ++i) {
    EXPECT_EQ(launcher_.selectors[i], "cublaslt_gemm@pin=8192x7168x5120:3");
    if (launcher_.spawned[i] != RunnerRole::kReference) continue;
    // In the sandbox the library reads it from the policy's environment.
    const auto& prefix = launcher_.sandbox_prefixes[i];
    EXPECT_TRUE(std::any_of(prefix.begin(), prefix.end(), [](const std::string& arg) {
      return arg.find("PTXBENCH_REFERENCE=cublaslt_gemm@pin=8192x7168x5120:3") != std::string::npos;
    }));
  }

  // The reference runner's own description, from the line its library printed.
  EXPECT_EQ(r.workloads.at(0).reference.timed_backend.value("pinned", false), true);
  EXPECT_TRUE(r.workloads.at(0).reference.candidate_slot_backend.is_null());

  job_.request.options.pin_reference_algorithm = false;
  launcher_.selectors.clear();
  launcher_.spawned.clear();
  EXPECT_EQ(run().status, PtxbStatus::kPassed);
  ASSERT_FALSE(launcher_.selectors.empty());
  EXPECT_EQ(launcher_.selectors.front(), "cublaslt_gemm");
}

// Pinning is on by default and only concerns cuBLASLt: a task with another library reference
// evaluates as before, its runners spawned with the plain selector.
TEST_F(EvaluatorTest, PinningIsANoOpForReferencesOtherThanCublasLt) {
  job_.request.options.pin_reference_algorithm = true;  // the default
  Task attention_like = *task_;
  attention_like.reference_backend = "cudnn_sdpa_fwd";
  task_ = &attention_like;
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  ASSERT_FALSE(launcher_.selectors.empty());
  for (const std::string& selector : launcher_.selectors)
    EXPECT_EQ(selector.find("@pin="), std::string::npos) << selector;
}

TEST_F(EvaluatorTest, PinningAReferenceWithoutACublasLtChoiceIsAnInfraError) {
  job_.request.options.pin_reference_algorithm = true;  // the fake device describes "fake"
  EvalResult r = run();
  EXPECT_EQ(r.status, PtxbStatus::kInfraError);
  EXPECT_NE(r.message.find("recorded no cuBLASLt choice to pin"), std::string::npos) << r.message;
}

// --also-reference flashinfer (stage_also_reference.cc): after the PASSED verdict, a third runner
// with FlashInfer's selector, its outputs checked, then timed; the verdict and the speedup stay
// the primary reference's.
class AlsoReferenceStageTest : public EvaluatorTest {
 protected:
  void SetUp() override {
    EvaluatorTest::SetUp();
    task_ = registry_->get("mha_with_lse_d128_causal").value();
    compile_.artifact.abi_signature = make_run_signature(task_->definition).declaration();
    job_.request.options.ncu = false;
    job_.request.options.also_reference = "flashinfer";
    // The second reference's runner: 1.5 ms a call, or whatever a test scripts.
    launcher_.reference = [this] {
      auto s = std::make_unique<FakeSession>();
      s->device_ns = 750'000;
      if (second_reference()) {
        s->device_ns = 1'500'000;
        s->log_text = second_log_;
        if (second_script_) s->on_call = second_script_;
        s->exit = second_exit_;
      }
      return s;
    };
  }
  // The launcher records the selector before it builds the session.
  bool second_reference() const {
    return !launcher_.selectors.empty() &&
           launcher_.selectors.back().starts_with("flashinfer_mha_prefill");
  }
  std::string second_log_ =
      "libptxbench_reference: prepared {\"backend\":\"flashinfer_mha_prefill\"}\n";
  std::function<Result<CallReply>(int, CallReply)> second_script_;
  RunnerExit second_exit_{true, 0, 0, false};
};

TEST_F(AlsoReferenceStageTest, CorrectSecondReferenceIsTimedAndRecordedBesideThePrimary) {
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  // The primary selector for the primary runners, FlashInfer's for one more.
  ASSERT_GE(launcher_.selectors.size(), 3u);
  EXPECT_EQ(launcher_.selectors.front(), "cudnn_sdpa_fwd:causal");
  EXPECT_EQ(std::count(launcher_.selectors.begin(), launcher_.selectors.end(),
                       "flashinfer_mha_prefill:causal"),
            1);
  const WorkloadEval& w = r.workloads.at(0);
  ASSERT_TRUE(w.reference.also_reference.has_value());
  const AlsoReferenceRecord& also = *w.reference.also_reference;
  EXPECT_EQ(also.status, "measured") << also.why;
  EXPECT_EQ(also.backend, "flashinfer_mha_prefill");
  EXPECT_EQ(also.checks.size(), 3u);  // one call per correctness set (3 forward trials)
  ASSERT_TRUE(also.timing.has_value());
  EXPECT_NEAR(also.timing->median_ms, 1.5, 1e-9);
  ASSERT_TRUE(also.speedup.has_value());
  EXPECT_NEAR(*also.speedup, 1.5 / w.candidate_timing->median_ms, 1e-9);
  EXPECT_EQ(also.backend_description["backend"], "flashinfer_mha_prefill");
  // The primary's speedup is untouched: cuDNN's fake 0.75 ms over the candidate's 1 ms.
  ASSERT_TRUE(w.speedup.has_value());
  EXPECT_NEAR(*w.speedup, 0.75, 0.01);
  EXPECT_NE(render_summary(r).find("also reference flashinfer (flashinfer_mha_prefill): 1.5000 ms"),
            std::string::npos)
      << render_summary(r);
}

TEST_F(AlsoReferenceStageTest, WithoutTheOptionNothingMoreRuns) {
  job_.request.options.also_reference.clear();
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  for (const std::string& selector : launcher_.selectors)
    EXPECT_EQ(selector, "cudnn_sdpa_fwd:causal");
  EXPECT_FALSE(r.workloads.at(0).reference.also_reference.has_value());
  for (const auto& [stage, ms] : r.stage_ms) EXPECT_NE(stage, "also_reference");
}

TEST_F(AlsoReferenceStageTest, AWrongSecondReferenceIsReportedAndNotTimed) {
  device_.check_fn = [this](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    if (second_reference()) c.num_failing = 7;
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;  // the candidate's verdict stands
  const WorkloadEval& w = r.workloads.at(0);
  const AlsoReferenceRecord& also = w.reference.also_reference.value();
  EXPECT_EQ(also.status, "incorrect");
  EXPECT_FALSE(also.timing.has_value());
  EXPECT_FALSE(also.speedup.has_value());
  EXPECT_FALSE(also.why.empty());
  EXPECT_NE(std::find(w.flags.begin(), w.flags.end(), "also_reference_incorrect"), w.flags.end());
}

TEST_F(AlsoReferenceStageTest, ALibraryThatRefusesTheTaskIsUnavailableWithItsOwnReason) {
  second_log_ =
      "libptxbench_reference: flashinfer_mha_prefill: FlashInfer 0.6.14 has no SM90 prefill "
      "kernel for head_dim 96 (its SM90 prefill kernels: head_dim 64, 128, 256)\n";
  second_script_ = [](int, CallReply) -> Result<CallReply> {
    return make_error("eof", "runner closed the channel");
  };
  second_exit_ = RunnerExit{true, 0, 6, false};  // abort()
  EvalResult r = run();
  ASSERT_EQ(r.status, PtxbStatus::kPassed) << r.message;
  const AlsoReferenceRecord& also = r.workloads.at(0).reference.also_reference.value();
  EXPECT_EQ(also.status, "unavailable");
  EXPECT_NE(also.why.find("has no SM90 prefill kernel for head_dim 96"), std::string::npos)
      << also.why;
  EXPECT_FALSE(also.timing.has_value());
}

TEST_F(AlsoReferenceStageTest, AFailingCandidateGetsNoSecondReference) {
  device_.check_fn = [](int set, int trial) {
    OutputCheck c = passing_check(set, trial);
    c.num_failing = 5;
    return std::vector<OutputCheck>{c};
  };
  EvalResult r = run();
  EXPECT_NE(r.status, PtxbStatus::kPassed);
  for (const std::string& selector : launcher_.selectors)
    EXPECT_FALSE(selector.starts_with("flashinfer"));
}

}  // namespace
}  // namespace ptxb
