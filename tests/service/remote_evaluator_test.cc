// The RemoteEvaluator's choices without a network: the least loaded service from /v1/health
// answers, and the idempotency key of a turn.
#include "service/remote_evaluator.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <mutex>

#include <set>
#include "../support/fake_worker.h"

namespace ptxb::service {
namespace {

ServiceLoad load(int serving, int queued, int running) {
  return ServiceLoad{true, serving, queued, running};
}

TEST(PickLeastLoaded, FewestJobsPerServingWorkerWins) {
  // 3 jobs over 4 GPUs beats 1 job on 1 GPU; a service with no serving worker never wins.
  EXPECT_EQ(pick_least_loaded({load(1, 0, 1), load(4, 1, 2), load(0, 0, 0)}, 0), 1);
  EXPECT_EQ(pick_least_loaded({load(2, 5, 2), load(1, 0, 0)}, 0), 1);
  ServiceLoad unreachable;
  EXPECT_EQ(pick_least_loaded({unreachable, load(1, 9, 1)}, 0), 1);
  EXPECT_EQ(pick_least_loaded({unreachable, load(0, 0, 0)}, 0), -1);
  EXPECT_EQ(pick_least_loaded({}, 3), -1);
}

TEST(PickLeastLoaded, TiesRotate) {
  const std::vector<ServiceLoad> equal = {load(2, 0, 0), load(2, 0, 0), load(2, 0, 0)};
  EXPECT_EQ(pick_least_loaded(equal, 0), 0);
  EXPECT_EQ(pick_least_loaded(equal, 1), 1);
  EXPECT_EQ(pick_least_loaded(equal, 5), 2);
}

TEST(ServiceLoadTest, ReadsHealth) {
  auto health = parse_json(R"({"status":"ok","capacity":{"workers":3,"serving":2,"free":1},
                               "queue":{"queued":7,"running":1,"owners":1}})",
                           "health");
  ASSERT_TRUE(health.ok());
  const ServiceLoad l = ServiceLoad::from_health(*health);
  EXPECT_TRUE(l.reachable);
  EXPECT_EQ(l.serving, 2);
  EXPECT_EQ(l.queued, 7);
  EXPECT_EQ(l.running, 1);
  EXPECT_FALSE(ServiceLoad::from_health(Json("not an object")).reachable);
}

TEST(RemoteEvaluatorKey, NamesTheRunTheTurnAndTheRequest) {
  EvalRequest r;
  r.task = "gemm_n7168_k5120";
  r.source = "kernel";
  const std::string key = RemoteEvaluator::idempotency_key("run /a", "t#1@1", r);
  EXPECT_EQ(key, RemoteEvaluator::idempotency_key("run /a", "t#1@1", r));  // stable
  EXPECT_LE(key.size(), 200u);                                             // the API's limit
  EXPECT_NE(key, RemoteEvaluator::idempotency_key("run /b", "t#1@1", r));
  EXPECT_NE(key, RemoteEvaluator::idempotency_key("run /a", "t#1@2", r));
  EvalRequest other = r;
  other.options.seed = 9;
  EXPECT_NE(key, RemoteEvaluator::idempotency_key("run /a", "t#1@1", other));
}

// Two services behind a scripted transport: "down" refuses every connection, "up" holds jobs in
// a map. Every request is logged as "METHOD host path".
class ScriptedServices final : public HttpTransport {
 public:
  Result<HttpResponse> post(const HttpRequest& request) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string rest = request.url.substr(std::string("http://").size());
    const std::string host = rest.substr(0, rest.find('/'));
    const std::string path = rest.substr(rest.find('/'));
    log.push_back(request.method + " " + host + " " + path.substr(0, path.find('?')));
    if (down.count(host)) return make_error("network", "{}: connection refused", host);
    HttpResponse r;
    r.status = 200;
    if (path == "/v1/health") {
      r.body =
          Json{{"capacity", {{"serving", 1}}}, {"queue", {{"queued", 0}, {"running", 0}}}}.dump();
    } else if (path.rfind("/v1/jobs?idempotency_key=", 0) == 0) {
      const std::string key = path.substr(path.find('=') + 1);
      Json jobs = Json::array();
      if (jobs_by_key[host].count(key)) jobs.push_back(job(jobs_by_key[host][key]));
      r.body = Json{{"jobs", jobs}}.dump();
    } else if (path == "/v1/jobs") {
      const std::string key = parse_json(request.body, "submit")->value("idempotency_key", "");
      auto& ids = jobs_by_key[host];
      if (!ids.count(key)) ids[key] = std::to_string(++next_id_);
      r.status = 202;
      r.body = job(ids[key]).dump();
    } else if (path.find("/result") != std::string::npos) {
      EvalResult result;
      result.task = "gemm_n7168_k5120";
      result.status = PtxbStatus::kPassed;
      r.body = result.to_json().dump();
    } else {
      r.body = job(path.substr(9, path.find('?') - 9)).dump();  // /v1/jobs/ID?wait=
    }
    return r;
  }
  static Json job(const std::string& id) { return Json{{"id", id}, {"state", "done"}}; }

  std::set<std::string> down;
  std::map<std::string, std::map<std::string, std::string>> jobs_by_key;  // host -> key -> id
  std::vector<std::string> log;

 private:
  std::mutex mutex_;
  int next_id_ = 0;
};

RemoteEvaluatorOptions scripted_options(std::vector<std::string> urls) {
  RemoteEvaluatorOptions o;
  o.urls = std::move(urls);
  o.key_prefix = "run /r";
  o.retry_pause_seconds = 0;
  o.max_rounds = 3;
  return o;
}

EvalRequest some_request() {
  EvalRequest r;
  r.task = "gemm_n7168_k5120";
  r.source = "kernel";
  return r;
}

TEST(RemoteEvaluatorFailover, AServiceThatRefusesIsSkippedAndMarkedDown) {
  ScriptedServices services;
  services.down = {"a:1"};
  testing::ManualClock clock;
  RemoteEvaluator evaluator(services, scripted_options({"http://a:1", "http://b:2"}), clock);
  auto result = evaluator.evaluate_turn(some_request(), "t#1@1");
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(services.jobs_by_key["b:2"].size(), 1u);
  // The next turn does not ask a:1 again while it is marked down...
  services.log.clear();
  ASSERT_TRUE(evaluator.evaluate_turn(some_request(), "t#2@1").ok());
  for (const auto& line : services.log) EXPECT_EQ(line.find("a:1"), std::string::npos) << line;
  // ...and asks it again once the mark expired (30 s).
  clock.advance(31);
  services.log.clear();
  ASSERT_TRUE(evaluator.evaluate_turn(some_request(), "t#3@1").ok());
  EXPECT_EQ(services.log.front(), "GET a:1 /v1/jobs");
}

TEST(RemoteEvaluatorFailover, AJobIsFoundWhereItWasBeforeAnythingIsSubmitted) {
  ScriptedServices services;
  testing::ManualClock clock;
  const EvalRequest request = some_request();
  const std::string key = RemoteEvaluator::idempotency_key("run /r", "t#1@1", request);
  services.jobs_by_key["b:2"][key] = "77";  // submitted there before a restart
  RemoteEvaluator evaluator(services, scripted_options({"http://a:1", "http://b:2"}), clock);
  ASSERT_TRUE(evaluator.evaluate_turn(request, "t#1@1").ok());
  EXPECT_TRUE(services.jobs_by_key["a:1"].empty());  // not submitted again on a:1
  EXPECT_EQ(std::count(services.log.begin(), services.log.end(), "POST b:2 /v1/jobs"), 0);
}

TEST(RemoteEvaluatorFailover, NoServiceLeftIsAnErrorAfterTheRounds) {
  ScriptedServices services;
  services.down = {"a:1", "b:2"};
  testing::ManualClock clock;
  RemoteEvaluator evaluator(services, scripted_options({"http://a:1", "http://b:2"}), clock);
  auto result = evaluator.evaluate_turn(some_request(), "t#1@1");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, "network");
  EXPECT_NE(result.error().message.find("connection refused"), std::string::npos)
      << result.error().message;
}

}  // namespace
}  // namespace ptxb::service
