// `ptxbench serve --upstream`: a front over two real GPU services (fake GPU workers) on
// loopback. Every job completes exactly once across a kill -9 and restart of the front; a backend
// that goes away gets its jobs moved only when it confirms it never ran them (a replaced store
// does not know their keys), and failed with the reason when it stays away.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "serve_fixture.h"
#include "service/service_client.h"

namespace ptxb {
namespace {

// The front authenticates on its backends as carol (write_tokens: a high rate limit).
ServeSetup front_setup() {
  ServeSetup setup;
  setup.fake_workers = false;
  setup.env = {std::string("PTXBENCH_UPSTREAM_TOKEN=") + kCarolToken};
  return setup;
}

EvalRequest tagged(const std::string& tag, int sleep_ms) {
  EvalRequest r;
  r.task = "gemm_n7168_k5120";
  r.source =
      fmt::format("// ptxbench-fake-eval: sleep_ms={} tag={}\nvoid run() {{}}\n", sleep_ms, tag);
  return r;
}

// Evaluations started per tag over both backends.
std::map<std::string, int> started(const ServeProcess& a, const ServeProcess& b) {
  auto count = a.evaluations();
  for (const auto& [tag, n] : b.evaluations()) count[tag] += n;
  return count;
}

// The port of "http://127.0.0.1:PORT", to restart a service at the same address.
std::string listen_of(const std::string& url) {
  return url.substr(std::string("http://").size());
}

TEST(UpstreamE2E, FrontKilledAndRestartedCompletesEveryJobExactlyOnce) {
  ServeProcess a, b, front;
  const std::string url_a = a.start(1, {"--no-canary"}), url_b = b.start(1, {"--no-canary"});
  std::string url = front.start(0, {"--upstream", url_a + "," + url_b}, front_setup());
  ASSERT_FALSE(url.empty());
  CurlHttpTransport transport;
  // 24 jobs of 150 ms from two clients, on two GPUs: about 2 s of work.
  std::map<std::string, std::string> id_of;  // tag -> the front's job id
  for (int i = 0; i < 24; ++i) {
    service::ServiceClient client(transport, url, i % 2 ? kAliceToken : kBobToken);
    const std::string tag = "j" + std::to_string(i);
    auto job = client.submit(tagged(tag, 150), "key-" + tag);
    ASSERT_TRUE(job.ok()) << job.error().message;
    id_of[tag] = job->value("id", "");
  }
  service::ServiceClient alice(transport, url, kAliceToken);
  auto health = alice.health();
  ASSERT_TRUE(health.ok()) << health.error().message;
  EXPECT_EQ((*health)["role"], "upstream");
  ASSERT_TRUE(wait_until([&] { return started(a, b).size() >= 6; }, std::chrono::seconds(20)));
  front.stop(SIGKILL);  // mid-run: jobs queued at the front, handed over, and finished
  url = front.start(0, {"--upstream", url_a + "," + url_b}, front_setup());
  ASSERT_FALSE(url.empty());

  for (int i = 0; i < 24; ++i) {
    service::ServiceClient client(transport, url, i % 2 ? kAliceToken : kBobToken);
    const std::string tag = "j" + std::to_string(i);
    auto job = client.wait(id_of[tag], 60);
    ASSERT_TRUE(job.ok()) << job.error().message;
    EXPECT_EQ(job->value("state", ""), "done") << tag << ": " << job->dump();
    EXPECT_EQ(job->value("verdict", ""), "PASSED") << tag;
    // The same key after the restart: the same job, not a new one.
    auto again = client.submit(tagged(tag, 150), "key-" + tag);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(again->value("id", ""), id_of[tag]);
    EXPECT_FALSE(again->value("created", true));
  }
  const auto count = started(a, b);
  for (const auto& [tag, id] : id_of) EXPECT_EQ(count.count(tag) ? count.at(tag) : 0, 1) << tag;
  EXPECT_GT(a.evaluations().size(), 0u);  // both backends took work
  EXPECT_GT(b.evaluations().size(), 0u);
  auto result = service::ServiceClient(transport, url, kAliceToken).result(id_of["j1"]);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->status, PtxbStatus::kPassed);
}

TEST(UpstreamE2E, ABackendThatGoesAwayMovesOnlyWhatItNeverRanAndFailsTheRest) {
  ServeProcess a, b, front;
  const std::string url_a = a.start(1, {"--no-canary"}), url_b = b.start(1, {"--no-canary"});
  const std::string url =
      front.start(0, {"--upstream", url_a + "," + url_b, "--backend-grace", "1"}, front_setup());
  CurlHttpTransport transport;
  service::ServiceClient client(transport, url, kAliceToken);
  auto submit_all = [&](const std::string& prefix, int n) {
    std::map<std::string, std::string> ids;
    for (int i = 0; i < n; ++i) {
      auto job = client.submit(tagged(prefix + std::to_string(i), 300), "");
      EXPECT_TRUE(job.ok()) << job.error().message;
      if (job.ok()) ids[prefix + std::to_string(i)] = job->value("id", "");
    }
    return ids;
  };

  // 1. b dies mid-job and comes back at its address with a new, empty store: it does not know
  // the front's keys, so it never ran those jobs in the life it answers from; they are handed
  // over again and all complete.
  auto first = submit_all("m", 8);
  ASSERT_TRUE(wait_until([&] { return !b.evaluations().empty(); }, std::chrono::seconds(20)));
  b.stop(SIGKILL);
  for (const char* suffix : {"", "-wal", "-shm"})
    std::filesystem::remove(b.dir() + "/jobs.db" + suffix);
  ServeSetup same_address;
  same_address.listen = listen_of(url_b);
  ASSERT_EQ(b.start(1, {"--no-canary"}, same_address), url_b);
  int moved = 0;
  for (const auto& [tag, id] : first) {
    auto job = client.wait(id, 60);
    ASSERT_TRUE(job.ok()) << job.error().message;
    EXPECT_EQ(job->value("state", ""), "done") << tag << ": " << job->dump();
    if (job->value("reason", Json(nullptr)).is_string() &&
        job->value("reason", std::string()).rfind("upstream_lost", 0) == 0)
      ++moved;
  }
  EXPECT_GE(moved, 1);  // what b held when it died went elsewhere
  // Started twice: at most the one b was running when it died (that run never finished).
  int twice = 0;
  for (const auto& [tag, n] : started(a, b))
    if (tag[0] == 'm') twice += n > 1;
  EXPECT_LE(twice, 1);

  // 2. b dies for good: what it held cannot be confirmed, so it fails with the reason after the
  // grace, and is never handed to a; the rest completes on a, once each.
  auto second = submit_all("g", 6);
  const auto before = b.evaluations();
  ASSERT_TRUE(wait_until(
      [&] {
        for (const auto& [tag, n] : b.evaluations())
          if (tag[0] == 'g') return true;
        return false;
      },
      std::chrono::seconds(20)));
  b.stop(SIGKILL);
  int failed = 0;
  for (const auto& [tag, id] : second) {
    auto job = client.wait(id, 60);
    ASSERT_TRUE(job.ok()) << job.error().message;
    const std::string state = job->value("state", "");
    if (state == "failed") {
      ++failed;
      EXPECT_EQ(job->value("reason", std::string()).rfind("backend_unreachable", 0), 0u)
          << job->dump();
      EXPECT_EQ(a.evaluations().count(tag), 0u) << tag;  // never evaluated a second time
    } else {
      EXPECT_EQ(state, "done") << job->dump();
      EXPECT_EQ(started(a, b)[tag], 1) << tag;
    }
  }
  EXPECT_GE(failed, 1);
  EXPECT_LE(failed, 2);  // at most one running and one waiting on b's single GPU
  auto health = client.health();
  ASSERT_TRUE(health.ok());
  EXPECT_EQ((*health)["backends"][1]["status"], "unreachable");
  EXPECT_EQ((*health)["status"], "ok");  // a still serves
}

}  // namespace
}  // namespace ptxb
