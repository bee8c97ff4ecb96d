// `ptxbench run` as a user runs it: help, bad configs, the replay model through the real
// evaluation pipeline, and SIGKILL of the runner mid-model-response and mid-evaluation: the
// resumed run redoes exactly that turn and the scripted server sees exactly one retry. No API
// key may appear in any file of a run directory.
#include <gtest/gtest.h>

#include <signal.h>

#include <atomic>
#include <set>

#include "../cli/cli_test_util.h"
#include "../support/child_process.h"
#include "../support/http_test_server.h"
#include "core/fs.h"
#include "core/strings.h"
#include "eval/eval_pipeline.h"
#include "metrics/turn_record.h"

namespace ptxb {
namespace {

using namespace std::chrono_literals;

constexpr const char* kKeyVar = "PTXB_TEST_API_KEY";
constexpr const char* kKey = "sk-ptxb-test-7f3a9c1e5b2d-NEVER-WRITE-ME";
const std::string kId = "scripted__gemm_n7168_k5120__base__t0";

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = make_temp_directory("ptxb-run-cli");
    ASSERT_TRUE(dir.ok());
    tmp_ = dir.value();
    ASSERT_TRUE(make_directories(tmp_ + "/evals").ok());
  }
  void TearDown() override { remove_tree(tmp_); }

  std::string write_config(const std::string& base_url, int turns = 3) {
    const Json config{
        {"models", Json::array({Json{{"name", "scripted"},
                                     {"api", "openai"},
                                     {"base_url", base_url + "/v1"},
                                     {"model", "scripted-model"},
                                     {"api_key_env", kKeyVar},
                                     {"timeout_s", 120},
                                     {"retry", {{"max_attempts", 3}, {"backoff_base_s", 0.01}}}}})},
        {"tasks", Json::array({"gemm_n7168_k5120"})},
        {"variants", Json::array({"base"})},
        {"trajectories", 1},
        {"turns", turns}};
    const std::string path = tmp_ + "/exp.json";
    EXPECT_TRUE(write_file_atomic(path, dump_pretty(config)).ok());
    return path;
  }

  pid_t start_run(const std::string& config, const std::string& out) {
    std::vector<std::string> env;
    for (const auto& entry : current_environment())
      if (!starts_with(entry, "PTXBENCH_TASKS_DIR=")) env.push_back(entry);
    env.push_back(std::string(kKeyVar) + "=" + kKey);
    // ptxbench-testing: `ptxbench` with the test-only --test-fake-eval (tests/support).
    return testing::spawn_process({PTXB_TESTING_CLI_PATH, "run", "--config", config, "--out", out,
                                   "--test-fake-eval", tmp_ + "/evals"},
                                  env, tmp_ + "/stdout.txt", tmp_ + "/stderr.txt");
  }

  std::string stderr_text() { return read_file(tmp_ + "/stderr.txt", 1 << 20).value(); }

  std::vector<int> recorded_turns(const std::string& out) {
    auto text = read_file(out + "/turns.jsonl", 1 << 20);
    if (!text.ok()) return {};
    auto records = parse_turns_jsonl(text.value(), "turns.jsonl");
    EXPECT_TRUE(records.ok()) << (records.ok() ? "" : records.error().message);
    std::vector<int> turns;
    for (const auto& r : records.value()) turns.push_back(r.turn);
    return turns;
  }

  // Every file under the run directory, searched for the key as bytes.
  void expect_no_key_in(const std::string& out) {
    auto files = list_files_recursive(out);
    ASSERT_TRUE(files.ok());
    EXPECT_GT(files->size(), 5u);
    for (const auto& file : files.value()) {
      auto text = read_file(file, 64u << 20);
      ASSERT_TRUE(text.ok()) << file;
      EXPECT_EQ(text->find(kKey), std::string::npos) << "API key written to " << file;
    }
  }

  std::string tmp_;
};

std::string kernel_answer(int turn, const std::string& extra) {
  return fmt::format(
      "Turn {} kernel.\n\n```cuda\n// ptxbench-fake-eval: status=PASSED speedup=0.{} tag=t{} {}\n"
      "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, "
      "int64_t N, int64_t K, cudaStream_t stream) {{}}\n```\n",
      turn, 5 + turn, turn, extra);
}

TEST_F(RunCli, HelpTeachesWithExamples) {
  ProcessResult help = testing::run_cli({"run", "--help"});
  ASSERT_EQ(help.exit_code, 0);
  EXPECT_NE(help.stdout_text.find("Examples:"), std::string::npos);
  EXPECT_NE(help.stdout_text.find("ptxbench run --model replay --suite paper-h100"),
            std::string::npos);
  EXPECT_NE(help.stdout_text.find("--trajectories"), std::string::npos);
  EXPECT_EQ(help.stdout_text.find("test-fake-eval"), std::string::npos);  // ptxbench-testing's
}

TEST_F(RunCli, BadInputsFailWithOneClearLine) {
  const std::string config = tmp_ + "/bad.json";
  ASSERT_TRUE(
      write_file_atomic(
          config, R"({"models": [{"api": "cohere", "model": "m"}], "tasks": ["gemm_n7168_k5120"]})")
          .ok());
  ProcessResult bad_api = testing::run_cli({"run", "--config", config, "--out", tmp_ + "/out"});
  EXPECT_EQ(bad_api.exit_code, 1);
  EXPECT_NE(bad_api.stderr_text.find("bad.json: $.models[0].api: \"cohere\" is not one of"),
            std::string::npos)
      << bad_api.stderr_text;

  ProcessResult no_task = testing::run_cli({"run", "--model", "replay", "--out", tmp_ + "/out"});
  EXPECT_EQ(no_task.exit_code, 2);  // usage errors exit 2 (issue 21)
  EXPECT_NE(no_task.stderr_text.find("no task"), std::string::npos) << no_task.stderr_text;

  ProcessResult bad_variant =
      testing::run_cli({"run", "--model", "replay", "--task", "gemm_n7168_k5120", "--variants",
                        "base,nope", "--out", tmp_ + "/out"});
  EXPECT_EQ(bad_variant.exit_code, 2);
  EXPECT_NE(bad_variant.stderr_text.find("variant \"nope\" is not a knowledge-pack tag"),
            std::string::npos);

  // A missing key stops the run before anything is written.
  ProcessResult no_key = testing::run_cli(
      {"run", "--model", "openai:gpt-x", "--task", "gemm_n7168_k5120", "--out", tmp_ + "/out"},
      {"OPENAI_API_KEY="});
  EXPECT_EQ(no_key.exit_code, 1);
  EXPECT_NE(no_key.stderr_text.find("environment variable OPENAI_API_KEY is not set"),
            std::string::npos)
      << no_key.stderr_text;
  EXPECT_FALSE(path_exists(tmp_ + "/out"));
}

TEST_F(RunCli, KillDuringModelResponseRedoesThatTurnWithOneRetry) {
  std::atomic<int> turn2_requests{0};
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest& request) {
    EXPECT_EQ(request.headers.at("authorization"), std::string("Bearer ") + kKey);
    const int turn = testing::assistant_messages_in(request.body) + 1;
    testing::ScriptedResponse answer = testing::openai_answer(kernel_answer(turn, ""));
    if (turn == 2 && turn2_requests++ == 0) answer.stall = true;  // the runner dies waiting
    return answer;
  });
  const std::string config = write_config(server.base_url());
  const std::string out = tmp_ + "/run";

  const pid_t first = start_run(config, out);
  ASSERT_TRUE(server.wait_for_requests(2, 60s)) << stderr_text();
  std::this_thread::sleep_for(100ms);
  ::kill(first, SIGKILL);
  EXPECT_EQ(testing::wait_for_exit(first, 30s), 128 + SIGKILL);
  EXPECT_EQ(recorded_turns(out), std::vector<int>({1}));

  const pid_t second = start_run(config, out);
  ASSERT_EQ(testing::wait_for_exit(second, 120s), 0) << stderr_text();
  EXPECT_EQ(recorded_turns(out), std::vector<int>({1, 2, 3}));
  // 3 turns + exactly one retry, of turn 2, with the same conversation as the cut-off request.
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(testing::assistant_messages_in(requests[1].body), 1);
  EXPECT_EQ(requests[2].body, requests[1].body);
  EXPECT_EQ(testing::assistant_messages_in(requests[3].body), 2);
  EXPECT_NE(stderr_text().find("resuming: 1 of 3 turns already done"), std::string::npos)
      << stderr_text();
  auto doc = read_json_file(out + "/trajectories/" + kId + ".json");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc.value()["info"]["exit_status"], "completed");
  EXPECT_EQ(doc.value()["messages"].size(), 8u);
  expect_no_key_in(out);
}

TEST_F(RunCli, KillDuringEvaluationRedoesThatTurnWithOneRetry) {
  std::atomic<int> turn2_requests{0};
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest& request) {
    const int turn = testing::assistant_messages_in(request.body) + 1;
    // The first answer for turn 2 makes the fake evaluator sleep for a minute.
    const bool slow = turn == 2 && turn2_requests++ == 0;
    return testing::openai_answer(kernel_answer(turn, slow ? "sleep_ms=60000" : ""));
  });
  const std::string config = write_config(server.base_url());
  const std::string out = tmp_ + "/run";
  const std::string log = tmp_ + "/evals/evals.log";

  const pid_t first = start_run(config, out);
  ASSERT_TRUE(testing::wait_until(
      [&] {
        auto text = read_file(log, 1 << 16);
        return text.ok() && text->find("start t2") != std::string::npos;
      },
      60s))
      << stderr_text();
  std::this_thread::sleep_for(100ms);
  ::kill(first, SIGKILL);
  EXPECT_EQ(testing::wait_for_exit(first, 30s), 128 + SIGKILL);
  EXPECT_EQ(recorded_turns(out), std::vector<int>({1}));

  const pid_t second = start_run(config, out);
  ASSERT_EQ(testing::wait_for_exit(second, 120s), 0) << stderr_text();
  EXPECT_EQ(recorded_turns(out), std::vector<int>({1, 2, 3}));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[2].body, requests[1].body);
  EXPECT_EQ(read_file(log, 1 << 16).value(), "start t1\nstart t2\nstart t2\nstart t3\n");
  auto turn2 = read_json_file(out + "/turns/" + kId + "/turn2.json");
  ASSERT_TRUE(turn2.ok());
  EXPECT_EQ(turn2.value()["record"]["status"], "PASSED");
  expect_no_key_in(out);
}

TEST_F(RunCli, NoApiKeyInAnyFileEvenWhenTheServerEchoesIt) {
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest& request) {
    const int turn = testing::assistant_messages_in(request.body) + 1;
    if (request.index == 0)  // an error that quotes the key back
      return testing::json_response(
          500, Json{{"error",
                     {{"message", "upstream rejected " + request.headers.at("authorization")}}}});
    return testing::openai_answer(kernel_answer(turn, ""));
  });
  const std::string out = tmp_ + "/run";
  const pid_t run = start_run(write_config(server.base_url(), 2), out);
  ASSERT_EQ(testing::wait_for_exit(run, 120s), 0) << stderr_text();
  EXPECT_EQ(server.request_count(), 3);
  auto turn1 = read_json_file(out + "/turns/" + kId + "/turn1.json");
  ASSERT_TRUE(turn1.ok());
  const std::string retry = turn1.value()["model"]["retries"][0].get<std::string>();
  EXPECT_NE(retry.find("upstream rejected Bearer [REDACTED]"), std::string::npos) << retry;
  expect_no_key_in(out);
  EXPECT_EQ(stderr_text().find(kKey), std::string::npos);
  auto plan = read_json_file(out + "/plan.json");
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan.value()["config"]["models"][0]["api_key_env"], kKeyVar);  // the name, only
}

// Issue 21, defect 3: two runs of one directory both appended every turn (and paid twice). The
// second is refused before it calls the model, naming the first's pid; defect 6: the resume
// hint names the directory.
TEST_F(RunCli, SecondRunOfTheSameDirectoryIsRefusedWithThePid) {
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest&) {
    testing::ScriptedResponse answer = testing::openai_answer(kernel_answer(1, ""));
    answer.stall = true;  // the first run holds the directory while it waits
    return answer;
  });
  const std::string config = write_config(server.base_url());
  const std::string out = tmp_ + "/run";
  const pid_t first = start_run(config, out);
  ASSERT_TRUE(server.wait_for_requests(1, 60s)) << stderr_text();

  std::vector<std::string> env = current_environment();
  env.push_back(std::string(kKeyVar) + "=" + kKey);
  const pid_t second = testing::spawn_process({PTXB_TESTING_CLI_PATH, "run", "--config", config,
                                               "--out", out, "--test-fake-eval", tmp_ + "/evals"},
                                              env, tmp_ + "/second.out", tmp_ + "/second.err");
  EXPECT_EQ(testing::wait_for_exit(second, 60s), 1);
  const std::string second_err = read_file(tmp_ + "/second.err", 1 << 16).value();
  EXPECT_NE(second_err.find(fmt::format("ptxbench: error: ptxbench run --out {}: already running "
                                        "(pid {} on host ",
                                        out, first)),
            std::string::npos)
      << second_err;
  EXPECT_EQ(server.request_count(), 1);  // the second run never called the model
  EXPECT_NE(stderr_text().find("resume with `ptxbench run --out " + out + "`"), std::string::npos)
      << stderr_text();
  ::kill(first, SIGKILL);
  testing::wait_for_exit(first, 30s);
}

// Issue 21, defect 6: without --out, "run the same command again" started a new timestamped
// directory. The exact resume command names the directory that was made.
TEST_F(RunCli, ResumeHintNamesTheDefaultDirectory) {
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest& request) {
    return testing::openai_answer(
        kernel_answer(testing::assistant_messages_in(request.body) + 1, ""));
  });
  const std::string config = write_config(server.base_url(), 1);
  ProcessSpec spec;
  spec.argv = {PTXB_TESTING_CLI_PATH, "run",          "--config", config,
               "--test-fake-eval",    tmp_ + "/evals"};
  spec.env = current_environment();
  spec.env->push_back(std::string(kKeyVar) + "=" + kKey);
  spec.cwd = tmp_;
  spec.timeout = std::chrono::milliseconds(120000);
  auto ran = SystemProcessRunner().run(spec);
  ASSERT_TRUE(ran.ok());
  ASSERT_EQ(ran->exit_code, 0) << ran->stderr_text;
  const std::string marker = "resume with `ptxbench run --out runs/";
  const std::size_t at = ran->stderr_text.find(marker);
  ASSERT_NE(at, std::string::npos) << ran->stderr_text;
  const std::size_t start = at + marker.size() - std::string("runs/").size();
  const std::string dir = ran->stderr_text.substr(start, ran->stderr_text.find('`', start) - start);
  EXPECT_TRUE(path_exists(tmp_ + "/" + dir + "/plan.json")) << dir;
}

// Issue 21, defect 7: Ctrl-C stopped a run silently. Now the model call in flight is aborted,
// nothing of that turn is recorded, the resume command is printed, and the exit is 130; the
// same directory then resumes at that turn.
TEST_F(RunCli, InterruptStopsCleanlyAndPrintsTheResumeCommand) {
  std::atomic<int> turn2_requests{0};
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest& request) {
    const int turn = testing::assistant_messages_in(request.body) + 1;
    testing::ScriptedResponse answer = testing::openai_answer(kernel_answer(turn, ""));
    if (turn == 2 && turn2_requests++ == 0) answer.stall = true;
    return answer;
  });
  const std::string config = write_config(server.base_url());
  const std::string out = tmp_ + "/run";
  const pid_t first = start_run(config, out);
  ASSERT_TRUE(server.wait_for_requests(2, 60s)) << stderr_text();
  ::kill(first, SIGINT);
  // libcurl's progress callback runs about once a second: well within 15 s.
  EXPECT_EQ(testing::wait_for_exit(first, 15s), 130) << stderr_text();
  EXPECT_NE(stderr_text().find("ptxbench: error: interrupted by SIGINT: 1 turn of 3 done"),
            std::string::npos)
      << stderr_text();
  EXPECT_NE(stderr_text().find("resume with: ptxbench run --out " + out), std::string::npos);
  EXPECT_EQ(recorded_turns(out), std::vector<int>({1}));

  const pid_t second = start_run(config, out);
  ASSERT_EQ(testing::wait_for_exit(second, 120s), 0) << stderr_text();
  EXPECT_EQ(recorded_turns(out), std::vector<int>({1, 2, 3}));
}

// Issue 21, defect 5: without a GPU, `run` called the model for every turn and then told it
// "the harness failed, resubmit". A model that costs is refused up front; --compile-only runs
// it anyway, and its feedback says the kernel compiled but was not run.
TEST_F(RunCli, WithoutGpuStagesAPaidModelNeedsCompileOnly) {
  const std::string gpu_missing = gpu_stages_unavailable(EvalTools::discover());
  if (gpu_missing.empty()) GTEST_SKIP() << "the GPU stages run here";
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest&) {
    return testing::openai_answer(
        "```cuda\n#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n#include <cstdint>\n"
        "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, "
        "int64_t N, int64_t K, cudaStream_t stream) {}\n```\n");
  });
  const std::string config = write_config(server.base_url(), 1);
  const std::string out = tmp_ + "/run";
  ProcessResult refused =
      testing::run_cli({"run", "--config", config, "--out", out}, {std::string(kKeyVar) + "=k"});
  EXPECT_EQ(refused.exit_code, 2) << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("ptxbench: error: model scripted: the GPU stages cannot run "
                                     "here"),
            std::string::npos)
      << refused.stderr_text;
  EXPECT_NE(refused.stderr_text.find("--compile-only"), std::string::npos);
  EXPECT_EQ(server.request_count(), 0);
  EXPECT_FALSE(path_exists(out));

  ProcessResult compiled = testing::run_cli(
      {"run", "--config", config, "--out", out, "--compile-only"}, {std::string(kKeyVar) + "=k"});
  EXPECT_EQ(compiled.exit_code, 3) << compiled.stderr_text;
  EXPECT_EQ(server.request_count(), 1);
  auto turn1 = read_json_file(out + "/turns/" + kId + "/turn1.json");
  ASSERT_TRUE(turn1.ok());
  EXPECT_EQ(turn1.value()["record"]["reason"], "gpu_skipped");
  const std::string feedback = turn1.value()["feedback"].get<std::string>();
  EXPECT_NE(feedback.find("it was not run here (--compile-only"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("harness failed"), std::string::npos) << feedback;
}

// The replay model through the real evaluation pipeline (compile and static analysis here; the
// GPU stages run only where there is a GPU). The turns are recorded honestly: without a GPU,
// INFRA_ERROR (gpu_skipped) and exit 3, never PASSED.
TEST_F(RunCli, ReplayRunsTheWholePipelineAndResumesFromItsDirectoryAlone) {
  const std::string out = tmp_ + "/replay";
  ProcessSpec spec;
  spec.argv = {PTXB_CLI_PATH, "run",  "--model",        "replay", "--task",  "gemm_n7168_k5120",
               "--variants",  "base", "--trajectories", "1",      "--turns", "2",
               "--out",       out};
  spec.timeout = std::chrono::milliseconds(600000);
  auto ran = SystemProcessRunner().run(spec);
  ASSERT_TRUE(ran.ok());
  ASSERT_TRUE(ran->exit_code == 0 || ran->exit_code == 3) << ran->describe() << "\n"
                                                          << ran->stderr_text;
  auto text = read_file(out + "/turns.jsonl", 1 << 20);
  ASSERT_TRUE(text.ok());
  auto records = parse_turns_jsonl(text.value(), "turns.jsonl");
  ASSERT_TRUE(records.ok());
  ASSERT_EQ(records->size(), 2u) << ran->stderr_text;
  for (const auto& r : records.value()) {
    EXPECT_TRUE(r.kernel_present);
    EXPECT_EQ(r.key.model, "replay");
    if (ran->exit_code == 3) {
      EXPECT_EQ(r.status_name(), "INFRA_ERROR");
      EXPECT_EQ(r.reason, "gpu_skipped");
      // The GEMM rungs have target instructions in their SASS; without a GPU they are not run.
      EXPECT_EQ(r.target_instructions, "not_run");
    }
  }
  if (ran->exit_code == 3) {
    EXPECT_NE(ran->stderr_text.find("GPU stages were skipped"), std::string::npos);
    auto turn1 = read_json_file(out + "/turns/replay__gemm_n7168_k5120__base__t0/turn1.json");
    ASSERT_TRUE(turn1.ok());
    EXPECT_EQ(turn1.value()["eval"]["compile"]["status"], "OK");
    EXPECT_EQ(turn1.value()["eval"]["gpu_skipped"], true);
  }
  EXPECT_NE(ran->stdout_text.find("gemm_n7168_k5120"), std::string::npos) << ran->stdout_text;

  // `--out DIR` alone resumes (here: finds nothing left) from the saved plan.
  ProcessResult again = testing::run_cli({"run", "--out", out});
  EXPECT_EQ(again.exit_code, ran->exit_code) << again.stderr_text;
  EXPECT_NE(again.stderr_text.find("resuming: 2 of 2 turns already done"), std::string::npos)
      << again.stderr_text;

  ProcessResult report = testing::run_cli({"report", out});
  EXPECT_EQ(report.exit_code, 0) << report.stderr_text;
  EXPECT_NE(report.stdout_text.find("gemm_n7168_k5120_M8192"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
