// The RemoteEvaluator's choices without a network: the least loaded service from /v1/health
// answers, and the idempotency key of a turn.
#include "service/remote_evaluator.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ptxb::service
