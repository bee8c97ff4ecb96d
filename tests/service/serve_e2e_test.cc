// `ptxbench serve` as a real process on loopback, with fake GPU workers (ptxbench-testing
// serve --test-fake-workers: each worker is `serve-worker --test-fake-eval`, whose
// FakeTurnEvaluator logs "start TAG" per evaluation), driven through the real HTTP client.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "core/fs.h"
#include "core/sha256.h"
#include "core/strings.h"
#include "llm/http_transport.h"
#include "serve_fixture.h"
#include "service/service_client.h"

namespace ptxb {
namespace {

TEST_F(ServeE2E, ManyClientsManyJobsNoneLostNoneDuplicatedFairOrder) {
  const std::string url = start(4);
  constexpr int kClients = 32, kJobsPerClient = 63;  // 2,016 jobs
  const std::vector<std::string> tokens = {kAliceToken, kBobToken, kCarolToken};
  std::vector<std::vector<std::string>> ids(kClients);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c)
    threads.emplace_back([&, c] {
      service::ServiceClient client(transport_, url, tokens[c % 3]);
      for (int j = 0; j < kJobsPerClient; ++j) {
        auto job = client.submit(request(fmt::format("tag=c{}-j{}", c, j)), "");
        if (!job.ok()) {
          ++errors;
          continue;
        }
        ids[c].push_back((*job)["id"]);
      }
      for (const auto& id : ids[c]) {
        auto done = client.wait(id, 60);
        if (!done.ok() || (*done)["state"] != "done") ++errors;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);

  // None lost, none evaluated twice.
  auto evals = evaluations();
  EXPECT_EQ(evals.size(), static_cast<std::size_t>(kClients * kJobsPerClient));
  for (const auto& [tag, n] : evals) EXPECT_EQ(n, 1) << tag;

  // Fair order from the records: FIFO within a token, and between two dispatches of one
  // token no other token with a job waiting since before the first was passed over.
  struct Rec {
    std::string owner;
    std::int64_t submit = 0, dispatch = 0;
  };
  std::vector<Rec> recs;
  for (const auto& token : tokens) {
    service::ServiceClient client(transport_, url, token);
    std::string after = "0";
    while (true) {
      auto page = client.get("/v1/jobs?limit=1000&after=" + after);
      ASSERT_TRUE(page.ok()) << page.error().message;
      if ((*page)["jobs"].empty()) break;
      for (const auto& j : (*page)["jobs"]) {
        recs.push_back({j["owner"], j["queue"]["submit_seq"], j["queue"]["dispatch_seq"]});
        after = j["id"];
      }
    }
  }
  ASSERT_EQ(recs.size(), static_cast<std::size_t>(kClients * kJobsPerClient));
  std::map<std::string, std::vector<Rec>> by_owner;
  for (const auto& r : recs) by_owner[r.owner].push_back(r);
  for (auto& [owner, list] : by_owner) {
    std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.submit < b.submit; });
    for (std::size_t i = 1; i < list.size(); ++i)
      EXPECT_LT(list[i - 1].dispatch, list[i].dispatch) << owner << " not FIFO";
  }
  // Round-robin: between two consecutive dispatches d1 < d2 of one owner, every other owner
  // that had a job waiting at d1 (submitted before, dispatched after) got a dispatch in between.
  std::map<std::string, std::vector<std::int64_t>> dispatches;
  for (const auto& r : recs) dispatches[r.owner].push_back(r.dispatch);
  for (auto& [owner, list] : dispatches) std::sort(list.begin(), list.end());
  int violations = 0;
  for (const auto& [owner, list] : dispatches)
    for (std::size_t i = 1; i < list.size(); ++i)
      for (const auto& [other, other_list] : dispatches) {
        if (other == owner) continue;
        const bool waiting = std::any_of(recs.begin(), recs.end(), [&](const Rec& r) {
          return r.owner == other && r.submit < list[i - 1] && r.dispatch > list[i - 1];
        });
        if (!waiting) continue;
        auto next = std::upper_bound(other_list.begin(), other_list.end(), list[i - 1]);
        if (next == other_list.end() || *next > list[i]) {
          if (++violations <= 5)
            ADD_FAILURE() << owner << " dispatched at " << list[i - 1] << " and " << list[i]
                          << " while " << other << " waited";
        }
      }
  EXPECT_EQ(violations, 0);
}

TEST_F(ServeE2E, KillNineAndRestartEveryJobCompletesOnce) {
  std::string url = start(2);
  service::ServiceClient client(transport_, url, kAliceToken);
  std::vector<std::string> ids;
  for (int j = 0; j < 30; ++j) {
    auto job =
        client.submit(request(fmt::format("sleep_ms=40 tag=k{}", j)), "key-" + std::to_string(j));
    ASSERT_TRUE(job.ok()) << job.error().message;
    ids.push_back((*job)["id"]);
  }
  ASSERT_TRUE(wait_until([&] { return evaluations().size() >= 6; }, std::chrono::seconds(20)));
  ::kill(pid_, SIGKILL);
  wait_for_exit(pid_, std::chrono::seconds(5));
  pid_ = -1;
  // The workers die with the service (parent-death signal).
  EXPECT_TRUE(wait_until([&] { return pids_with(dir_).empty(); }, std::chrono::seconds(5)));

  url = start(2);
  service::ServiceClient again(transport_, url, kAliceToken);
  for (int j = 0; j < 30; ++j) {
    // The same key gives the same job after the restart.
    auto repeat =
        again.submit(request(fmt::format("sleep_ms=40 tag=k{}", j)), "key-" + std::to_string(j));
    ASSERT_TRUE(repeat.ok());
    EXPECT_EQ((*repeat)["id"], ids[j]);
    EXPECT_EQ((*repeat)["created"], false);
  }
  auto evals = evaluations();
  for (int j = 0; j < 30; ++j) {
    auto job = again.wait(ids[j], 30);
    ASSERT_TRUE(job.ok());
    EXPECT_EQ((*job)["state"], "done") << job->dump();
    auto result = again.result(ids[j]);
    EXPECT_TRUE(result.ok());
  }
  evals = evaluations();
  EXPECT_EQ(evals.size(), 30u);
  for (int j = 0; j < 30; ++j) {
    const int n = evals[fmt::format("k{}", j)];
    auto job = again.get("/v1/jobs/" + ids[j]);
    // Evaluated once, or twice when it was running at the kill (then re-queued: 2 attempts).
    EXPECT_EQ(n, (*job)["attempts"].get<int>()) << ids[j];
    if (n == 2) {
      EXPECT_NE((*job)["reason"].dump().find("service_restart"), std::string::npos);
    }
  }
}

TEST_F(ServeE2E, BadRequestsGetClearClientErrors) {
  const std::string url = start(1, {"--max-upload-bytes", "1000"});
  auto call = [&](const std::string& method, const std::string& path, const std::string& body,
                  const std::string& token) {
    HttpRequest r;
    r.method = method;
    r.url = url + path;
    r.body = body;
    if (!token.empty()) r.headers.emplace_back("Authorization", "Bearer " + token);
    auto response = transport_.post(r);
    EXPECT_TRUE(response.ok());
    return *response;
  };
  auto code_of = [](const HttpResponse& r) {
    auto j = parse_json(r.body, "error");
    return j.ok() && j->contains("error") ? (*j)["error"].value("code", "") : "";
  };
  HttpResponse r = call("POST", "/v1/jobs", "{not json", kAliceToken);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(code_of(r), "invalid");
  const std::string source = "// small\n";
  const std::string sha = sha256_hex(source);
  EXPECT_EQ(call("PUT", "/v1/artifacts/" + sha, source, kAliceToken).status, 201);
  r = call("POST", "/v1/jobs",
           Json{{"task", "no_such_task"}, {"artifact", {{"sha256", sha}}}}.dump(), kAliceToken);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(code_of(r), "unknown_task");
  const std::string big(5000, 'x');
  r = call("PUT", "/v1/artifacts/" + sha256_hex(big), big, kAliceToken);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(code_of(r), "too_large");
  r = call("PUT", "/v1/artifacts/" + sha, "other bytes", kAliceToken);
  EXPECT_EQ(r.status, 400);
  r = call("GET", "/v1/health", "", "");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(code_of(r), "unauthorized");
  r = call("GET", "/v1/health", "", "wrong-token-0123456789");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body.find("wrong-token"), std::string::npos);
  int limited = 0;
  for (int i = 0; i < 5; ++i) {
    r = call("GET", "/v1/health", "", kSlowToken);
    if (r.status == 429) {
      ++limited;
      EXPECT_EQ(code_of(r), "rate_limited");
      EXPECT_FALSE(r.header("Retry-After").empty());
    }
  }
  EXPECT_GE(limited, 2);
  EXPECT_EQ(call("GET", "/v1/jobs/999", "", kAliceToken).status, 404);
  EXPECT_EQ(call("GET", "/v1/debug", "", kAliceToken).status, 404);  // no debug endpoint
  auto metrics = call("GET", "/v1/metrics", "", kAliceToken);
  EXPECT_NE(metrics.body.find("ptxbench_rejected_total{reason=\"rate_limited\"}"),
            std::string::npos);
  EXPECT_EQ(metrics.body.find(kAliceToken), std::string::npos);
}

TEST_F(ServeE2E, WorkerKilledMidJobIsRestartedAndTheJobReported) {
  const std::string url = start(1);
  service::ServiceClient client(transport_, url, kAliceToken);
  // A worker killed from outside while it evaluates: restarted, the job retried and done.
  auto slow = client.submit(request("sleep_ms=3000 tag=slow"), "");
  ASSERT_TRUE(slow.ok());
  ASSERT_TRUE(
      wait_until([&] { return evaluations().count("slow") == 1; }, std::chrono::seconds(10)));
  const auto workers = pids_with("serve-worker"), ours = pids_with(dir_);
  std::vector<pid_t> mine;
  for (pid_t p : workers)
    if (std::count(ours.begin(), ours.end(), p)) mine.push_back(p);
  ASSERT_EQ(mine.size(), 1u);
  ::kill(mine[0], SIGKILL);
  auto done = client.wait((*slow)["id"], 30);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ((*done)["state"], "done");
  EXPECT_EQ((*done)["attempts"], 2);
  EXPECT_NE((*done)["reason"].get<std::string>().find("worker_crashed"), std::string::npos);

  // A job that crashes its worker on every attempt fails with the reason; the service lives.
  auto crash = client.submit(request("exit=3 tag=crash"), "");
  auto failed = client.wait((*crash)["id"], 30);
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ((*failed)["state"], "failed");
  EXPECT_NE((*failed)["reason"].get<std::string>().find("exited with status 3"), std::string::npos);
  auto health = client.health();
  ASSERT_TRUE(health.ok());
  EXPECT_GE((*health)["workers"][0]["restarts"].get<int>(), 3);
  auto after = client.evaluate(request("tag=after"), "", 30);
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->status, PtxbStatus::kPassed);
}

// What bench/results/service.md found: cpp-httplib 0.11 Brotli-compressed every JSON answer at
// quality 11 for a client that accepts it (libcurl accepts br), about 10 ms of CPU each.
TEST_F(ServeE2E, JsonAnswersAreNotCompressed) {
  const std::string url = start(1);
  HttpRequest r;
  r.method = "GET";
  r.url = url + "/v1/tasks";
  r.headers = {{"Authorization", std::string("Bearer ") + kAliceToken},
               {"Accept-Encoding", "br, gzip, deflate"}};
  auto response = transport_.post(r);
  ASSERT_TRUE(response.ok()) << response.error().message;
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->header("Content-Encoding"), "");
  EXPECT_NE(response->header("Content-Type").find("application/json"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
