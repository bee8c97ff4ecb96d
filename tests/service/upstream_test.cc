// The front's pieces without a network: the routing by free GPU capacity and the ledger of
// hand-overs (its write-ahead rows and its identity survive a reopen).
#include <gtest/gtest.h>

#include "core/fs.h"
#include "service/upstream_ledger.h"
#include "service/upstream_routing.h"

namespace ptxb::service {
namespace {

BackendLoad backend_load(int serving, int queued, int running, bool reachable = true) {
  BackendLoad l;
  l.reachable = reachable;
  l.serving = serving;
  l.queued = queued;
  l.running = running;
  return l;
}

TEST(PickBackend, MostFreeCapacityFirstAndAtMostOneWaitingPerWorker) {
  std::size_t rotate = 0;
  // 4 serving with 1 running (free 3) beats 2 serving idle (free 2).
  EXPECT_EQ(pick_backend({backend_load(2, 0, 0), backend_load(4, 0, 1)}, &rotate), 1u);
  // Full: one running and one waiting per worker (free = -serving) takes nothing more.
  EXPECT_FALSE(pick_backend({backend_load(1, 1, 1), backend_load(2, 2, 2)}, &rotate).has_value());
  // One waiting behind a busy worker is still allowed (keeps the GPU busy between readings).
  EXPECT_EQ(pick_backend({backend_load(1, 0, 1), backend_load(1, 1, 1)}, &rotate), 0u);
  // Unreachable or without a serving worker: never.
  EXPECT_FALSE(
      pick_backend({backend_load(8, 0, 0, false), backend_load(0, 0, 0)}, &rotate).has_value());
  // Hand-overs since the reading count against it.
  std::vector<BackendLoad> loads = {backend_load(1, 0, 0), backend_load(1, 0, 0)};
  loads[0].handed = 2;
  EXPECT_EQ(pick_backend(loads, &rotate), 1u);
}

TEST(PickBackend, TiesRotate) {
  std::size_t rotate = 0;
  const std::vector<BackendLoad> loads = {backend_load(1, 0, 0), backend_load(1, 0, 0),
                                          backend_load(1, 0, 0)};
  EXPECT_EQ(pick_backend(loads, &rotate), 0u);
  EXPECT_EQ(pick_backend(loads, &rotate), 1u);
  EXPECT_EQ(pick_backend(loads, &rotate), 2u);
  EXPECT_EQ(pick_backend(loads, &rotate), 0u);
}

TEST(PickBackend, ReadsHealth) {
  const BackendLoad l = BackendLoad::from_health(Json::parse(
      R"({"status":"ok","capacity":{"serving":3,"free":1},"queue":{"queued":4,"running":2}})"));
  EXPECT_TRUE(l.reachable);
  EXPECT_EQ(l.serving, 3);
  EXPECT_EQ(l.free(), -3);
  EXPECT_FALSE(l.can_take());
}

TEST(UpstreamLedger, RowsAndIdentitySurviveAReopen) {
  const std::string dir = *make_temp_directory("ptxb-ledger-test");
  std::string front_id;
  {
    auto ledger = UpstreamLedger::open(dir + "/front.db");
    ASSERT_TRUE(ledger.ok()) << ledger.error().message;
    front_id = (*ledger)->front_id();
    ASSERT_TRUE((*ledger)->assign(7, "http://gpu1:8470", 0).ok());  // write-ahead
    ASSERT_TRUE((*ledger)->assign(8, "http://gpu2:8470", 0).ok());
    ASSERT_TRUE((*ledger)->accepted(8, "41").ok());
    ASSERT_TRUE((*ledger)->assign(9, "http://gpu1:8470", 0).ok());
    ASSERT_TRUE((*ledger)->release(9, 1).ok());  // confirmed never run: back at the front
    ASSERT_TRUE((*ledger)->assign(10, "http://gpu1:8470", 0).ok());
    ASSERT_TRUE((*ledger)->forget(10).ok());
  }
  auto ledger = UpstreamLedger::open(dir + "/front.db");
  ASSERT_TRUE(ledger.ok()) << ledger.error().message;
  EXPECT_EQ((*ledger)->front_id(), front_id);
  EXPECT_EQ(front_id.size(), 16u);
  auto rows = (*ledger)->all();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[0].backend, "http://gpu1:8470");
  EXPECT_EQ((*rows)[0].backend_job, "");  // maybe posted: looked up by key after a restart
  EXPECT_EQ((*rows)[1].backend_job, "41");
  EXPECT_EQ((*rows)[2].backend, "");
  EXPECT_EQ((*rows)[2].round, 1);
  // Each hand-over has its own key, and another front's keys differ.
  EXPECT_NE((*ledger)->key(9, 0), (*ledger)->key(9, 1));
  auto other = UpstreamLedger::open(dir + "/other.db");
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)->key(9, 0), (*ledger)->key(9, 0));
  remove_tree(dir);
}

}  // namespace
}  // namespace ptxb::service
