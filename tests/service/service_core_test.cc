// The service's logic without a network: fair queue, rate limit, tokens, canary verdicts, the
// SQLite job store, and EvalService over in-process fake workers (tests/support/fake_worker.h).
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "../support/fake_worker.h"
#include "core/fs.h"
#include "core/sha256.h"
#include "service/canary.h"
#include "service/eval_service.h"
#include "service/fair_queue.h"
#include "service/job_access.h"
#include "service/rate_limiter.h"
#include "service/sqlite_job_store.h"
#include "service/tokens.h"

namespace ptxb::service {
namespace {

using ptxb::testing::FakeWorker;
using ptxb::testing::ManualClock;

TEST(FairQueue, FifoWithinOwnerRoundRobinAcross) {
  FairQueue q;
  for (int i = 1; i <= 4; ++i) q.push("a", i);
  q.push("b", 10);
  q.push("b", 11);
  q.push("c", 20);
  std::vector<std::int64_t> order;
  while (auto job = q.pop()) order.push_back(job->id);
  EXPECT_EQ(order, (std::vector<std::int64_t>{1, 10, 20, 2, 11, 3, 4}));
  EXPECT_EQ(q.size(), 0u);
}

TEST(FairQueue, RemoveAndPushFront) {
  FairQueue q;
  q.push("a", 1);
  q.push("a", 2);
  q.push("b", 3);
  EXPECT_TRUE(q.remove("a", 1));
  EXPECT_FALSE(q.remove("a", 1));
  EXPECT_TRUE(q.remove("b", 3));
  EXPECT_EQ(q.owners(), 1u);
  q.push_front("a", 7);
  EXPECT_EQ(q.pop()->id, 7);
  EXPECT_EQ(q.pop()->id, 2);
  EXPECT_FALSE(q.pop());
}

TEST(RateLimiter, BurstThenRetryAfterThenRefill) {
  ManualClock clock;
  RateLimiter limiter(clock);
  ClientLimits limits{2, 3, 10};  // 2/s, burst 3
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.admit("a", limits).allowed);
  RateDecision refused = limiter.admit("a", limits);
  EXPECT_FALSE(refused.allowed);
  EXPECT_NEAR(refused.retry_after_seconds, 0.5, 1e-9);
  EXPECT_TRUE(limiter.admit("b", limits).allowed);  // buckets are per client
  clock.advance(0.5);
  EXPECT_TRUE(limiter.admit("a", limits).allowed);
  EXPECT_FALSE(limiter.admit("a", limits).allowed);
}

TEST(TokenTable, ParsesLimitsAndFindsByToken) {
  auto table = TokenTable::parse(
      "# clients\nalice aaaaaaaaaaaaaaaaaaaa rate=5 quota=7\nbob bbbbbbbbbbbbbbbbbbbb\n", "t",
      ClientLimits{});
  ASSERT_TRUE(table.ok()) << table.error().message;
  auto alice = table->find("aaaaaaaaaaaaaaaaaaaa");
  ASSERT_TRUE(alice);
  EXPECT_EQ(alice->name, "alice");
  EXPECT_EQ(alice->limits.rate_per_second, 5);
  EXPECT_EQ(alice->limits.queue_quota, 7);
  EXPECT_EQ(table->find("bbbbbbbbbbbbbbbbbbbb")->limits.queue_quota, ClientLimits{}.queue_quota);
  EXPECT_FALSE(table->find("aaaaaaaaaaaaaaaaaaab"));
  EXPECT_FALSE(table->find(""));
  EXPECT_EQ(bearer_token("Bearer  xyz "), "xyz");
  EXPECT_EQ(bearer_token("Basic xyz"), "");
}

TEST(TokenTable, RejectsBadLinesWithoutEchoingTheToken) {
  auto short_token = TokenTable::parse("a shortsecret\n", "t", {});
  ASSERT_FALSE(short_token.ok());
  EXPECT_NE(short_token.error().message.find("t:1"), std::string::npos);
  EXPECT_EQ(short_token.error().message.find("shortsecret"), std::string::npos);
  EXPECT_FALSE(TokenTable::parse("a aaaaaaaaaaaaaaaaaaaa\nb aaaaaaaaaaaaaaaaaaaa\n", "t", {}).ok());
  EXPECT_FALSE(TokenTable::parse("a aaaaaaaaaaaaaaaaaaaa speed=3\n", "t", {}).ok());
  EXPECT_FALSE(TokenTable::parse("a aaaaaaaaaaaaaaaaaaaa rate=x\n", "t", {}).ok());
  EXPECT_FALSE(TokenTable::parse("# nobody\n", "t", {}).ok());
}

TEST(Canary, BuildsHistoryThenJudgesDrift) {
  CanaryPolicy policy;
  policy.min_history = 3;
  policy.max_drift = 0.10;
  EXPECT_FALSE(judge_canary({1.0, 1.0}, 5.0, policy).judged);  // still building
  auto ok = judge_canary({1.0, 1.02, 0.98}, 1.05, policy);
  EXPECT_TRUE(ok.judged);
  EXPECT_TRUE(ok.ok);
  EXPECT_NEAR(*ok.baseline_ms, 1.0, 1e-12);
  auto drift = judge_canary({1.0, 1.02, 0.98, 5.0}, 1.2, policy);  // median 1.01
  EXPECT_FALSE(drift.ok);
  EXPECT_NEAR(*drift.drift, 1.2 / 1.01 - 1, 1e-9);
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = *make_temp_directory("ptxb-store-test");
    auto store = SqliteJobStore::open(dir_ + "/jobs.db");
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    remove_tree(dir_);
  }
  Job job(const std::string& owner, const std::string& key, std::int64_t seq) {
    Job j;
    j.owner = owner;
    j.idempotency_key = key;
    j.task = "gemm_n7168_k5120";
    j.arch = "sm_90a";
    j.artifact = std::string(64, 'a');
    j.submitted_at = 100;
    j.submit_seq = seq;
    return j;
  }
  std::string dir_;
  std::unique_ptr<SqliteJobStore> store_;
};

TEST_F(StoreTest, IdempotencyKeyIsPerOwner) {
  auto first = store_->insert(job("a", "k", 1));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->created);
  auto again = store_->insert(job("a", "k", 2));
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->job.id, first->job.id);
  EXPECT_TRUE(store_->insert(job("b", "k", 3))->created);
  EXPECT_TRUE(store_->insert(job("a", "", 4))->created);
  EXPECT_TRUE(store_->insert(job("a", "", 5))->created);  // no key: always new
  EXPECT_EQ(*store_->max_seq(), 5);
}

// admit_job, shared by EvalService and UpstreamService: a repeated key is answered before the
// quota and does not advance the sequence; the quota counts what the caller says is in flight.
TEST_F(StoreTest, AdmitJobRepeatsBeforeQuotaAndNumbersNewJobs) {
  const Client small{"small", ClientLimits{100, 100, 2}};
  std::int64_t seq = 0;
  auto first = admit_job(*store_, small, job("small", "k", 0), 0, seq);
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->job.submit_seq, 1);
  EXPECT_EQ(seq, 1);
  auto repeat = admit_job(*store_, small, job("small", "k", 0), 2, seq);  // at the quota
  ASSERT_TRUE(repeat.ok()) << repeat.error().message;
  EXPECT_FALSE(repeat->created);
  EXPECT_EQ(repeat->job.id, first->job.id);
  EXPECT_EQ(seq, 1);
  auto over = admit_job(*store_, small, job("small", "", 0), 2, seq);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().code, "quota");
  EXPECT_EQ(seq, 1);
  auto second = admit_job(*store_, small, job("small", "", 0), 1, seq);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second->job.submit_seq, 2);
  EXPECT_EQ(seq, 2);
  EXPECT_EQ(job_by_key(*store_, "small", "").error().code, "invalid");
  EXPECT_EQ(job_by_key(*store_, "small", std::string(201, 'k')).error().code, "invalid");
  EXPECT_EQ((*job_by_key(*store_, "small", "k"))->id, first->job.id);
  JobFilter all;
  all.limit = 0;  // clamped to 1
  EXPECT_EQ(list_jobs(*store_, all)->size(), 1u);
}

TEST_F(StoreTest, TransitionsApplyOnceAndSurviveReopen) {
  const std::int64_t id = store_->insert(job("a", "", 1))->job.id;
  EXPECT_TRUE(*store_->start(id, "gpu0", 2, 101));
  EXPECT_FALSE(*store_->start(id, "gpu1", 3, 101));  // already running
  EXPECT_TRUE(*store_->requeue(id, "worker_crashed: x"));
  EXPECT_TRUE(*store_->start(id, "gpu1", 4, 102));
  EXPECT_TRUE(*store_->finish(id, JobState::kDone, "", "PASSED", "{\"a\":1}", 103));
  EXPECT_FALSE(*store_->finish(id, JobState::kFailed, "late", "", "", 104));  // first wins
  store_.reset();
  store_ = std::move(SqliteJobStore::open(dir_ + "/jobs.db")).value();
  auto stored = **store_->get(id);
  EXPECT_EQ(stored.state, JobState::kDone);
  EXPECT_EQ(stored.attempts, 2);
  EXPECT_EQ(stored.worker, "gpu1");
  EXPECT_EQ(stored.verdict, "PASSED");
  EXPECT_EQ(**store_->result(id), "{\"a\":1}");
  EXPECT_TRUE(store_->unfinished()->empty());
  EXPECT_EQ(*store_->purge_finished(103.5), 1);
  EXPECT_FALSE(*store_->get(id));
}

TEST_F(StoreTest, CanaryHistoryKeepsTheLatest) {
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(store_->add_canary("gpu0", i, 10 + i).ok());
  EXPECT_EQ(*store_->canary_history("gpu0", 3), (std::vector<double>{2, 3, 4}));
  EXPECT_TRUE(store_->canary_history("gpu1", 3)->empty());
}

// EvalService over FakeWorkers, with the real SQLite store and artifact store in a temp folder.
class ServiceTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    artifacts_ = std::make_unique<ArtifactStore>(dir_ + "/artifacts", 1 << 20);
    ASSERT_TRUE(artifacts_->init().ok());
    auto registry = TaskRegistry::load({});
    ASSERT_TRUE(registry.ok()) << registry.error().message;
    registry_ = std::make_unique<TaskRegistry>(std::move(registry).value());
    options_.canary_enabled = false;
    options_.housekeeping_seconds = 3600;
  }
  void TearDown() override {
    service_.reset();
    StoreTest::TearDown();
  }
  void start(int workers) {
    std::vector<std::unique_ptr<Worker>> list;
    for (int i = 0; i < workers; ++i) {
      auto w = std::make_unique<FakeWorker>("gpu" + std::to_string(i));
      w->crashes_left = crashes_;
      w->canary_ms = canary_ms_;
      fakes_.push_back(w.get());
      list.push_back(std::move(w));
    }
    service_ = std::make_unique<EvalService>(*store_, *artifacts_, *registry_, std::move(list),
                                             clock_, options_);
    ASSERT_TRUE(service_->start().ok());
  }
  SubmitRequest request(const std::string& source, const std::string& key = "") {
    const std::string sha = sha256_hex(source);
    EXPECT_TRUE(artifacts_->put(sha, source).ok());
    SubmitRequest r;
    r.task = "gemm_n7168_k5120";
    r.artifact = sha;
    r.idempotency_key = key;
    return r;
  }
  Job finished(const Client& client, std::int64_t id) {
    auto job = service_->wait(client.name, id, 10);
    EXPECT_TRUE(job.ok());
    return *job;
  }

  Client alice_{"alice", ClientLimits{}};
  ManualClock clock_;
  ServiceOptions options_;
  int crashes_ = 1000;
  std::deque<double> canary_ms_;
  std::unique_ptr<ArtifactStore> artifacts_;
  std::unique_ptr<TaskRegistry> registry_;
  std::vector<FakeWorker*> fakes_;
  std::unique_ptr<EvalService> service_;
};

TEST_F(ServiceTest, RejectsBadSubmissionsWithTheirCodes) {
  start(1);
  SubmitRequest unknown = request("k");
  unknown.task = "no_such_task";
  EXPECT_EQ(service_->submit(alice_, unknown).error().code, "unknown_task");
  SubmitRequest missing = request("k");
  missing.artifact = std::string(64, 'f');
  EXPECT_EQ(service_->submit(alice_, missing).error().code, "artifact_missing");
  SubmitRequest unsafe = request("k");
  unsafe.options = Json{{"unsafe_no_sandbox", true}};
  EXPECT_EQ(service_->submit(alice_, unsafe).error().code, "invalid");
  SubmitRequest op = request("k");
  op.operation = "gdb";
  auto unknown_op = service_->submit(alice_, op);
  EXPECT_EQ(unknown_op.error().code, "unsupported_operation");
  EXPECT_NE(unknown_op.error().message.find("evaluate, sanitize, profile, debug"),
            std::string::npos);
  // An operation and options that contradict each other are refused, not overridden.
  SubmitRequest profile_off = request("k");
  profile_off.operation = "profile";
  profile_off.options = Json{{"ncu", false}};
  EXPECT_EQ(service_->submit(alice_, profile_off).error().code, "invalid");
  SubmitRequest sanitize_energy = request("k");
  sanitize_energy.operation = "sanitize";
  sanitize_energy.options = Json{{"energy", true}};
  EXPECT_EQ(service_->submit(alice_, sanitize_energy).error().code, "invalid");
  SubmitRequest debug_energy = sanitize_energy;
  debug_energy.operation = "debug";
  EXPECT_EQ(service_->submit(alice_, debug_energy).error().code, "invalid");
  SubmitRequest debug_budget = request("k");
  debug_budget.operation = "debug";
  debug_budget.options = Json{{"debug_budget_seconds", 3600}};
  EXPECT_EQ(service_->submit(alice_, debug_budget).error().code, "invalid");
  EXPECT_EQ(SubmitRequest::from_json(
                Json{{"task", "x"}, {"artifact", {{"sha256", "a"}}}, {"surprise", 1}})
                .error()
                .code,
            "invalid");
}

// Each operation reaches the worker with its options applied, and the job records both.
TEST_F(ServiceTest, OperationsReachTheWorkerWithTheirOptions) {
  start(1);
  std::map<std::string, std::int64_t> ids;
  for (const std::string operation : {"evaluate", "sanitize", "profile", "debug"}) {
    SubmitRequest r = request("// " + operation + "\n");
    r.operation = operation;
    auto submitted = service_->submit(alice_, r);
    ASSERT_TRUE(submitted.ok()) << submitted.error().message;
    ids[operation] = submitted->job.id;
  }
  for (const auto& [operation, id] : ids) {
    const Job job = finished(alice_, id);
    EXPECT_EQ(job.state, JobState::kDone) << operation;
    EXPECT_EQ(job.operation, operation);
    EXPECT_EQ(job.to_json()["operation"], operation);
  }
  const Job sanitized = finished(alice_, ids["sanitize"]);
  EXPECT_EQ(sanitized.options["sanitize"], true);
  EXPECT_EQ(sanitized.options["ncu"], false);
  const Job debugged = finished(alice_, ids["debug"]);
  EXPECT_EQ(debugged.options["debug"], true);
  EXPECT_EQ(debugged.options["ncu"], false);
  ASSERT_EQ(fakes_[0]->requests.size(), 4u);
  std::map<std::string, EvalRequest> received;
  for (const auto& request : fakes_[0]->requests) received[request.source] = request;
  EXPECT_EQ(received["// evaluate\n"].operation, EvalOperation::kEvaluate);
  EXPECT_FALSE(received["// evaluate\n"].options.sanitize);
  EXPECT_EQ(received["// sanitize\n"].operation, EvalOperation::kSanitize);
  EXPECT_TRUE(received["// sanitize\n"].options.sanitize);
  EXPECT_EQ(received["// profile\n"].operation, EvalOperation::kProfile);
  EXPECT_TRUE(received["// profile\n"].options.ncu);
  EXPECT_EQ(received["// debug\n"].operation, EvalOperation::kDebug);
  EXPECT_TRUE(received["// debug\n"].options.debug);
  EXPECT_FALSE(received["// debug\n"].options.sanitize);
}

// The compile split: a job names the binary and its PTX by hash; both must be on the service,
// and the worker gets them by path with the hashes it re-checks.
TEST_F(ServiceTest, PrebuiltJobsNeedTheirBinaryAndReachTheWorkerByPath) {
  start(1);
  const std::string so = "\x7f"
                         "ELF fake shared object",
                    ptx = ".version 9.0\n";
  SubmitRequest r = request("// ptxbench-fake-eval: tag=pb\n");
  r.prebuilt = Json{
      {"shared_object", sha256_hex(so)}, {"ptx", sha256_hex(ptx)}, {"nvcc_version", "13.0.88"}};
  EXPECT_EQ(service_->submit(alice_, r).error().code, "artifact_missing");
  ASSERT_TRUE(artifacts_->put(sha256_hex(so), so).ok());
  ASSERT_TRUE(artifacts_->put(sha256_hex(ptx), ptx).ok());
  auto outcome = service_->submit(alice_, r);
  ASSERT_TRUE(outcome.ok()) << outcome.error().message;
  EXPECT_EQ(outcome->job.prebuilt["nvcc_version"], "13.0.88");
  EXPECT_EQ(finished(alice_, outcome->job.id).state, JobState::kDone);
  ASSERT_FALSE(fakes_[0]->requests.empty());
  const EvalRequest& seen = fakes_[0]->requests.back();
  ASSERT_TRUE(seen.prebuilt.has_value());
  EXPECT_EQ(seen.prebuilt->shared_object_sha256, sha256_hex(so));
  EXPECT_EQ(*read_file(seen.prebuilt->shared_object_path, 1 << 20), so);
  EXPECT_EQ(*read_file(seen.prebuilt->ptx_path, 1 << 20), ptx);
  // Retention keeps what a job names.
  auto live = store_->live_artifacts();
  ASSERT_TRUE(live.ok());
  EXPECT_TRUE(std::count(live->begin(), live->end(), sha256_hex(so)));
  EXPECT_EQ(SubmitRequest::from_json(Json{{"task", "x"},
                                          {"artifact", {{"sha256", sha256_hex(so)}}},
                                          {"prebuilt", {{"shared_object", "nope"}}}})
                .error()
                .code,
            "invalid");
}

TEST_F(ServiceTest, EveryJobCompletesOnceAndKeysRepeat) {
  start(3);
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 60; ++i)
    ids.push_back(service_->submit(alice_, request("job " + std::to_string(i)))->job.id);
  auto repeat = service_->submit(alice_, request("job 0", "key-0"));
  auto again = service_->submit(alice_, request("job 0", "key-0"));
  EXPECT_TRUE(repeat->created);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(repeat->job.id, again->job.id);
  for (auto id : ids) EXPECT_EQ(finished(alice_, id).state, JobState::kDone);
  EXPECT_EQ(finished(alice_, repeat->job.id).state, JobState::kDone);
  std::size_t evaluated = 0;
  for (auto* fake : fakes_) evaluated += fake->evaluated.size();
  EXPECT_EQ(evaluated, 61u) << "61 jobs, each evaluated once";
  auto result = parse_json(*service_->result("alice", ids[5]), "result");
  EXPECT_EQ((*result)["message"], "job 5");
  EXPECT_EQ(service_->get("mallory", ids[5]).error().code, "not_found");
}

TEST_F(ServiceTest, CrashedWorkerIsRestartedAndTheJobRetried) {
  crashes_ = 1;
  start(1);
  auto id = service_->submit(alice_, request("crash once"))->job.id;
  Job job = finished(alice_, id);
  EXPECT_EQ(job.state, JobState::kDone);
  EXPECT_EQ(job.attempts, 2);
  EXPECT_EQ(fakes_[0]->starts.load(), 2);
  Json health = service_->health();
  EXPECT_EQ(health["workers"][0]["restarts"], 1);
  EXPECT_NE(health["workers"][0]["last_error"].get<std::string>().find("worker_crashed"),
            std::string::npos);
}

TEST_F(ServiceTest, JobFailsWithTheReasonWhenAttemptsAreSpent) {
  start(1);
  auto crash = service_->submit(alice_, request("crash always"))->job.id;
  auto infra = service_->submit(alice_, request("evalerror"))->job.id;
  Job crashed = finished(alice_, crash);
  EXPECT_EQ(crashed.state, JobState::kFailed);
  EXPECT_EQ(crashed.attempts, options_.max_attempts);
  EXPECT_EQ(crashed.reason.rfind("worker_crashed:", 0), 0u) << crashed.reason;
  EXPECT_EQ(finished(alice_, infra).reason, "eval_error: supervisor failed");
  EXPECT_EQ(service_->result("alice", crash).error().code, "no_result");
  EXPECT_NE(
      service_->metrics_text().find("ptxbench_jobs_failed_total{reason=\"worker_crashed\"} 1"),
      std::string::npos);
}

TEST_F(ServiceTest, QuotaCountsQueuedAndRunningJobs) {
  Client small{"small", ClientLimits{100, 100, 2}};
  start(0);  // no worker: everything stays queued
  EXPECT_TRUE(service_->submit(small, request("1")).ok());
  EXPECT_TRUE(service_->submit(small, request("2", "k2")).ok());
  EXPECT_EQ(service_->submit(small, request("3")).error().code, "quota");
  EXPECT_TRUE(service_->submit(small, request("2", "k2")).ok()) << "a repeat costs no quota";
  auto cancelled = service_->cancel("small", 1);
  EXPECT_EQ(cancelled->state, JobState::kCancelled);
  EXPECT_TRUE(service_->submit(small, request("3")).ok());
}

TEST_F(ServiceTest, RestartRequeuesRunningJobsOrFailsThemWhenSpent) {
  Job a = job("alice", "", 1), b = job("alice", "", 2), c = job("alice", "", 3);
  for (Job* j : {&a, &b, &c}) {
    j->artifact = sha256_hex("k");
    ASSERT_TRUE(artifacts_->put(j->artifact, "k").ok());
    j->id = store_->insert(*j)->job.id;
  }
  // a ran once when the service died; b had spent its attempts; c was still queued.
  ASSERT_TRUE(*store_->start(a.id, "gpu0", 4, 100));
  ASSERT_TRUE(*store_->start(b.id, "gpu1", 5, 100));
  ASSERT_TRUE(*store_->requeue(b.id, "x"));
  ASSERT_TRUE(*store_->start(b.id, "gpu1", 6, 100));
  start(1);
  Job ra = finished(alice_, a.id), rb = finished(alice_, b.id), rc = finished(alice_, c.id);
  EXPECT_EQ(ra.state, JobState::kDone);
  EXPECT_EQ(ra.attempts, 2);
  EXPECT_EQ(rb.state, JobState::kFailed);
  EXPECT_EQ(rb.reason.rfind("service_restart", 0), 0u);
  EXPECT_EQ(rc.state, JobState::kDone);
  EXPECT_GT(ra.dispatch_seq, 6) << "the sequence resumes after the stored one";
}

TEST_F(ServiceTest, CanaryDriftDrainsTheWorker) {
  options_.canary_enabled = true;
  options_.canary.every_jobs = 1;
  options_.canary.min_history = 2;
  options_.canary.recheck_seconds = 3600;
  canary_ms_ = {1.0, 1.0, 1.0, 1.5};
  start(1);
  for (int i = 0; i < 3; ++i)
    finished(alice_, service_->submit(alice_, request("j" + std::to_string(i)))->job.id);
  Json health;
  for (int tries = 0; tries < 200; ++tries) {
    health = service_->health();
    if (health["workers"][0]["state"] == "drained") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(health["workers"][0]["state"], "drained");
  EXPECT_NE(health["workers"][0]["drain_reason"].get<std::string>().find("canary drift"),
            std::string::npos);
  EXPECT_EQ(health["status"], "degraded");
  // Drained: a new job waits in the queue.
  auto id = service_->submit(alice_, request("after drain"))->job.id;
  EXPECT_EQ(service_->wait("alice", id, 0.2)->state, JobState::kQueued);
}

TEST_F(ServiceTest, RetentionDeletesOldFinishedJobsAndTheirArtifacts) {
  options_.retention_seconds = 60;
  start(1);
  auto id = service_->submit(alice_, request("old"))->job.id;
  finished(alice_, id);
  clock_.advance(120);
  auto [jobs, artifacts] = service_->run_retention();
  EXPECT_EQ(jobs, 1);
  EXPECT_EQ(service_->get("alice", id).error().code, "not_found");
  (void)artifacts;  // file ages are wall-clock: a fresh artifact stays (the upload race)
}

}  // namespace
}  // namespace ptxb::service
