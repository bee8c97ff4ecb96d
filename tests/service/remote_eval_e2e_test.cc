// `ptxbench eval --remote` and `ptxbench run --evaluator` against real services on loopback
// with fake GPU workers, and the RemoteEvaluator's fail-over and idempotency keys.
#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <thread>

#include "serve_fixture.h"
#include "service/remote_evaluator.h"

namespace ptxb {
namespace {

// Every evaluation a service's fake workers started, tagged or not (the services here run
// without the canary, so every "start" line is a job).
int all_evaluations(const ServeProcess& service) {
  int n = 0;
  for (const auto& [tag, count] : service.evaluations()) n += count;
  auto log = read_file(service.dir() + "/evals.log", 64 << 20);
  if (log.ok())
    for (const auto& line : split_lines(*log))
      if (line == "start -") ++n;
  return n;
}

EvalRequest fake_request(const std::string& directive) {
  EvalRequest r;
  r.task = "gemm_n7168_k5120";
  r.source = "// ptxbench-fake-eval: " + directive + "\nvoid run() {}\n";
  return r;
}

TEST(RemoteE2E, EvalRemoteGivesTheServicesVerdictAndExitCode) {
  ServeProcess service;
  const std::string url = service.start(1, {"--no-canary"});
  const std::string dir = service.dir();
  ASSERT_TRUE(
      write_file_atomic(dir + "/pass.cu", "// ptxbench-fake-eval: speedup=1.25 tag=p\n").ok());
  ASSERT_TRUE(
      write_file_atomic(dir + "/bad.cu", "// ptxbench-fake-eval: status=COMPILE_ERROR tag=b\n")
          .ok());

  CliRun run = run_cli(dir, {"eval", dir + "/pass.cu", "--task", "gemm_n7168_k5120", "--remote",
                             url, "--remote-compile", "--json", "--seed", "7"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto json = parse_json(run.out, "eval --json");
  ASSERT_TRUE(json.ok()) << run.out;
  EXPECT_EQ((*json)["status"], "PASSED");
  EXPECT_EQ((*json)["reason"], "fake");
  EXPECT_EQ((*json)["options"]["seed"], 7);  // the request's options reached the worker
  EXPECT_DOUBLE_EQ((*json)["workloads"][0]["speedup"].get<double>(), 1.25);
  EXPECT_FALSE((*json)["traces"].empty());

  // --operation travels with the request: sanitize comes back untimed, with the gate on.
  std::filesystem::remove(dir + "/cli.out");  // run_cli appends: this output alone
  run = run_cli(dir, {"eval", dir + "/pass.cu", "--task", "gemm_n7168_k5120", "--remote", url,
                      "--remote-compile", "--json", "--operation", "sanitize"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  json = parse_json(run.out, "eval --json --operation sanitize");
  ASSERT_TRUE(json.ok()) << run.out;
  EXPECT_EQ((*json)["options"]["sanitize"], true);
  EXPECT_TRUE((*json)["workloads"][0]["speedup"].is_null());
  EXPECT_NE((*json)["message"].get<std::string>().find("operation sanitize"), std::string::npos);
  run = run_cli(dir, {"eval", dir + "/pass.cu", "--task", "gemm_n7168_k5120", "--remote", url,
                      "--remote-compile", "--operation", "profile", "--no-ncu"});
  EXPECT_EQ(run.exit_code, 2) << run.err;  // a contradiction, refused before any request
  EXPECT_NE(run.err.find("--operation profile"), std::string::npos) << run.err;

  run = run_cli(dir, {"eval", dir + "/bad.cu", "--task", "gemm_n7168_k5120", "--remote", url,
                      "--remote-compile"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_NE(run.out.find("COMPILE_ERROR"), std::string::npos) << run.out;

  // Twice the same command: evaluated twice (a nonce in the key), as a local eval would be.
  run = run_cli(dir, {"eval", dir + "/pass.cu", "--task", "gemm_n7168_k5120", "--remote", url,
                      "--remote-compile"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(service.evaluations()["p"], 3);  // and the sanitize above

  run = run_cli(
      dir,
      {"eval", dir + "/pass.cu", "--task", "gemm_n7168_k5120", "--remote", url, "--remote-compile"},
      "");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("ptxbench: error:"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("bearer token"), std::string::npos) << run.err;

  run = run_cli(dir, {"eval", dir + "/pass.cu", "--task", "gemm_n7168_k5120", "--remote", url,
                      "--unsafe-no-sandbox"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
}

TEST(RemoteE2E, ReplayRunThroughTwoServicesEvaluatesEveryTurnOnce) {
  ServeProcess a, b;
  const std::string url_a = a.start(1, {"--no-canary"}), url_b = b.start(1, {"--no-canary"});
  const std::string out = a.dir() + "/run";
  const std::vector<std::string> args = {"run",
                                         "--model",
                                         "replay",
                                         "--suite",
                                         "paper-h100",
                                         "--variants",
                                         "base",
                                         "--trajectories",
                                         "1",
                                         "--turns",
                                         "2",
                                         "--out",
                                         out,
                                         "--evaluator",
                                         url_a + "," + url_b,
                                         "--remote-compile"};
  CliRun run = run_cli(a.dir(), args);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto turns = read_file(out + "/turns.jsonl", 16 << 20);
  ASSERT_TRUE(turns.ok());
  EXPECT_EQ(split_lines(*turns).size(), 10u);  // 5 tasks x 2 turns
  EXPECT_EQ(turns->find("INFRA_ERROR"), std::string::npos);
  EXPECT_EQ(all_evaluations(a) + all_evaluations(b), 10);
  // Least loaded with rotation on ties: both services took turns.
  EXPECT_GT(all_evaluations(a), 0);
  EXPECT_GT(all_evaluations(b), 0);

  // The same command again: the run is complete, nothing is evaluated again.
  run = run_cli(a.dir(), args);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(all_evaluations(a) + all_evaluations(b), 10);
}

TEST(RemoteE2E, KeysFindTheTurnAgainAndAServiceThatGoesAwayFailsOver) {
  ServeProcess a, b;
  const std::string url_a = a.start(1, {"--no-canary"}), url_b = b.start(1, {"--no-canary"});
  CurlHttpTransport transport;
  service::SystemClock clock;
  service::RemoteEvaluatorOptions options;
  options.token = kAliceToken;
  options.key_prefix = "run /tmp/keys-test";
  options.retry_pause_seconds = 0.2;

  // A resumed run (a new evaluator, services listed the other way round) finds the turn where
  // it was evaluated; another attempt of the turn is a new evaluation.
  options.urls = {url_a, url_b};
  service::RemoteEvaluator first(transport, options, clock);
  auto done = first.evaluate_turn(fake_request("tag=k1"), "traj#1@1");
  ASSERT_TRUE(done.ok()) << done.error().message;
  options.urls = {url_b, url_a};
  service::RemoteEvaluator resumed(transport, options, clock);
  auto again = resumed.evaluate_turn(fake_request("tag=k1"), "traj#1@1");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(a.evaluations()["k1"] + b.evaluations()["k1"], 1);
  auto retry = resumed.evaluate_turn(fake_request("tag=k1"), "traj#1@2");
  ASSERT_TRUE(retry.ok());
  EXPECT_EQ(a.evaluations()["k1"] + b.evaluations()["k1"], 2);

  // The service running a turn is killed: the turn completes on the other one.
  options.urls = {url_a, url_b};
  service::RemoteEvaluator evaluator(transport, options, clock);
  auto pending = std::async(std::launch::async, [&] {
    return evaluator.evaluate_turn(fake_request("sleep_ms=1500 tag=f1"), "traj#2@1");
  });
  ASSERT_TRUE(wait_until([&] { return a.evaluations().count("f1") || b.evaluations().count("f1"); },
                         std::chrono::seconds(10)));
  ServeProcess& victim = a.evaluations().count("f1") ? a : b;
  ServeProcess& survivor = &victim == &a ? b : a;
  victim.stop(SIGKILL);
  auto result = pending.get();
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->status, PtxbStatus::kPassed);
  EXPECT_EQ(survivor.evaluations()["f1"], 1);
  // Later turns go to the survivor without waiting for the dead one.
  auto later = evaluator.evaluate_turn(fake_request("tag=f2"), "traj#2@2");
  ASSERT_TRUE(later.ok()) << later.error().message;
  EXPECT_EQ(survivor.evaluations()["f2"], 1);
}

}  // namespace
}  // namespace ptxb
