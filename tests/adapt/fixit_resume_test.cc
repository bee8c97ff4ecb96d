// `ptxbench fixit repair` and `fixit reason` when things go wrong mid-step, end to end through
// the CLI with a scripted teacher on loopback and the fake evaluator (as fixit_cli_test.cc):
//   - a teacher that never answers one failure: the client's timeout fires, the request is
//     retried (the server sees it max_attempts times), then the item is skipped with its reason
//     (`unfinished` in the JSON counts, stderr, exit 1) while the others are decided; it gets no
//     line in repairs.jsonl / rationales.jsonl, so a rerun with a teacher that answers decides it
//     and nothing else. A timeout is an outage, not a verdict on the item: writing it down as
//     dropped would lose the item for good.
//   - `fixit repair` killed with SIGKILL while the teacher holds the second failure, a torn last
//     line left in repairs.jsonl: the rerun decides every failure exactly once and never asks
//     for the first again.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <set>

#include "../support/child_process.h"
#include "../support/http_test_server.h"
#include "core/fs.h"
#include "core/process.h"
#include "core/strings.h"
#include "run_dir_fixture.h"

namespace ptxb {
namespace {

using namespace std::chrono_literals;

constexpr const char* kResumeTask = "gemm_n7168_k5120";

// The mined failures: the marker that names each in a teacher request (the failing kernel is
// in both the repair and the rationale request), and its fixture trajectory.
struct ResumeFailure {
  const char* marker;
  const char* trajectory;
};
constexpr ResumeFailure kResumeFailures[] = {
    {"kernel_a(1)", "t0"}, {"kernel_b(2)", "t1"}, {"kernel_c(3)", "t2"}};

std::string resume_failure_id(const ResumeFailure& f) {
  return testing::fixture_id(kResumeTask, f.trajectory) + "__turn1";
}

// The failure a request is about (nullptr: none).
const ResumeFailure* resume_failure_in(const std::string& body) {
  for (const ResumeFailure& f : kResumeFailures)
    if (contains(body, f.marker)) return &f;
  return nullptr;
}

// A good teacher: every repair passes with dynamic_present, on fresh inputs too (tag=fix_tN
// names it in evals.log), and every rationale is accepted.
testing::ScriptedResponse good_resume_answer(const std::string& body) {
  if (contains(body, "<analysis>"))
    return testing::openai_answer(
        "<analysis>I read the feedback: the kernel stops on a helper that does not exist, so "
        "nothing after it ever ran on the GPU and no result was checked.</analysis>\n<plan>I "
        "replace the undefined helper with the call the pipeline needs and keep the rest of "
        "the design exactly as it was.</plan>");
  const ResumeFailure* f = resume_failure_in(body);
  return testing::openai_answer(fmt::format(
      "Fixed.\n\n```cuda\n// ptxbench-fake-eval: status=PASSED tag=fix_{}\nvoid run() {{ }}\n```\n",
      f ? f->trajectory : "unknown"));
}

testing::ScriptedResponse stalled_answer() {
  testing::ScriptedResponse r;
  r.stall = true;  // held open until the client gives up or the process dies
  return r;
}

int requests_about(const testing::ScriptedHttpServer& server, const std::string& marker,
                   bool rationale) {
  int count = 0;
  for (const auto& r : server.requests())
    if (contains(r.body, marker) && contains(r.body, "<analysis>") == rationale) ++count;
  return count;
}

class FixitResume : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = make_temp_directory("ptxb-fixit-resume").value();
    work_ = tmp_ + "/work";
    ASSERT_TRUE(make_directories(tmp_ + "/evals").ok());
    testing::write_fixture_run(tmp_ + "/run", kResumeTask,
                               {{"t0", 1, "COMPILE_ERROR", "void run() { kernel_a(1); }"},
                                {"t1", 1, "INCORRECT_NUMERICAL", "void run() { kernel_b(2); }"},
                                {"t2", 1, "TIMEOUT", "void run() { kernel_c(3); }"}});
    ProcessResult mined = fixit({"mine", tmp_ + "/run", "--out", work_});
    ASSERT_EQ(mined.exit_code, 0) << mined.stderr_text;
  }
  void TearDown() override { remove_tree(tmp_); }

  // ptxbench-testing: `ptxbench` with --test-fake-eval (tests/support).
  ProcessResult fixit(std::vector<std::string> args) {
    ProcessSpec spec;
    spec.argv = {PTXB_TESTING_CLI_PATH, "fixit"};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout = 60s;
    SystemProcessRunner runner;
    auto result = runner.run(spec);
    return result.ok() ? result.value() : ProcessResult{};
  }
  std::vector<std::string> repair_args(const std::string& teacher) const {
    return {"repair", "--work",           work_,           "--teacher", teacher, "--turns",
            "2",      "--test-fake-eval", tmp_ + "/evals", "--json"};
  }
  std::string file_text(const std::string& name) const {
    auto text = read_file(tmp_ + "/" + name, 1 << 20);
    return text.ok() ? text.value() : "";
  }
  // A teacher model object with a short request timeout and two attempts, the knobs a user
  // sets the same way (--teacher MODEL.json, docs/agent.md); backoff kept short for the test.
  std::string short_timeout_teacher(const testing::ScriptedHttpServer& server) const {
    const std::string path = tmp_ + "/teacher.json";
    const Json model{{"api", "openai"},
                     {"model", "teacher"},
                     {"base_url", server.base_url() + "/v1"},
                     {"timeout_s", 1},
                     {"retry", {{"max_attempts", 2}, {"backoff_base_s", 0.01}}}};
    EXPECT_TRUE(write_file_atomic(path, model.dump()).ok());
    return path;
  }
  std::vector<std::string> ids_in(const std::string& log) const {
    std::vector<std::string> ids;
    auto lines = read_jsonl_file(work_ + "/" + log);
    EXPECT_TRUE(lines.ok()) << log;
    if (lines.ok())
      for (const Json& line : *lines) ids.push_back(line["id"]);
    return ids;
  }

  std::string tmp_, work_;
};

TEST_F(FixitResume, RepairTeacherTimeoutIsRetriedThenSkippedUntilTheRerun) {
  const ResumeFailure& silent = kResumeFailures[2];
  std::atomic<bool> stall{true};
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest& request) {
    if (stall && contains(request.body, silent.marker)) return stalled_answer();
    return good_resume_answer(request.body);
  });
  const std::string teacher = short_timeout_teacher(server);

  ProcessResult first = fixit(repair_args(teacher));
  EXPECT_EQ(first.exit_code, 1) << first.stderr_text;  // undecided items: rerun
  const Json counts = parse_json(first.stdout_text, "stdout").value();
  EXPECT_EQ(counts["kept"], 2);
  EXPECT_EQ(counts["dropped"], 0);
  ASSERT_EQ(counts["unfinished"].size(), 1u) << counts.dump();
  const std::string why = counts["unfinished"][0];
  EXPECT_TRUE(starts_with(why, resume_failure_id(silent) + ": model_error: turn 1: ")) << why;
  EXPECT_NE(why.find("no complete answer within 1 s"), std::string::npos) << why;
  EXPECT_NE(why.find("(gave up after 2 attempts) [timeout]"), std::string::npos) << why;
  EXPECT_EQ(requests_about(server, silent.marker, false), 2);  // the request and one retry
  EXPECT_NE(first.stderr_text.find("attempt 1: POST"), std::string::npos) << first.stderr_text;
  EXPECT_NE(first.stderr_text.find("1 item undecided"), std::string::npos) << first.stderr_text;
  // No verdict for the silent one; the others are decided and kept.
  const std::vector<std::string> decided = ids_in("repairs.jsonl");
  EXPECT_EQ(std::set<std::string>(decided.begin(), decided.end()),
            (std::set<std::string>{resume_failure_id(kResumeFailures[0]),
                                   resume_failure_id(kResumeFailures[1])}));
  const Json trajectory =
      read_json_file(work_ + "/repairs/trajectories/fixit__" + resume_failure_id(silent) + ".json")
          .value();
  EXPECT_EQ(trajectory["info"]["exit_status"], "model_error");
  EXPECT_NE(trajectory["info"]["ptxbench"]["end_detail"].get<std::string>().find("[timeout]"),
            std::string::npos);

  // The teacher answers again: the rerun decides the skipped one and asks nothing else.
  stall = false;
  const int before = server.request_count();
  ProcessResult rerun = fixit(repair_args(teacher));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.stderr_text;
  const Json again = parse_json(rerun.stdout_text, "stdout").value();
  EXPECT_EQ(again["already_decided"], 2);
  EXPECT_EQ(again["kept"], 1);
  EXPECT_EQ(server.request_count(), before + 1);
  const std::vector<std::string> ids = ids_in("repairs.jsonl");
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.back(), resume_failure_id(silent));
}

TEST_F(FixitResume, ReasonTeacherTimeoutIsRetriedThenSkippedUntilTheRerun) {
  const ResumeFailure& silent = kResumeFailures[1];
  std::atomic<bool> stall{true};
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest& request) {
    if (stall && contains(request.body, "<analysis>") && contains(request.body, silent.marker))
      return stalled_answer();
    return good_resume_answer(request.body);
  });
  const std::string teacher = short_timeout_teacher(server);
  ASSERT_EQ(fixit(repair_args(teacher)).exit_code, 0);  // three kept repairs to explain

  const std::vector<std::string> reason = {"reason",    "--work", work_,
                                           "--teacher", teacher,  "--json"};
  ProcessResult first = fixit(reason);
  EXPECT_EQ(first.exit_code, 1) << first.stderr_text;
  const Json counts = parse_json(first.stdout_text, "stdout").value();
  EXPECT_EQ(counts["kept"], 2);
  EXPECT_EQ(counts["dropped"], 0);
  EXPECT_EQ(counts["rejected_answers"], Json::object());  // a timeout is no rejected answer
  ASSERT_EQ(counts["unfinished"].size(), 1u) << counts.dump();
  const std::string why = counts["unfinished"][0];
  EXPECT_TRUE(starts_with(why, resume_failure_id(silent) + ": teacher: ")) << why;
  EXPECT_NE(why.find("(gave up after 2 attempts) [timeout]"), std::string::npos) << why;
  EXPECT_EQ(requests_about(server, silent.marker, true), 2);
  EXPECT_EQ(ids_in("rationales.jsonl").size(), 2u);

  stall = false;
  ProcessResult rerun = fixit(reason);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.stderr_text;
  const Json again = parse_json(rerun.stdout_text, "stdout").value();
  EXPECT_EQ(again["already_decided"], 2);
  EXPECT_EQ(again["kept"], 1);
  for (const ResumeFailure& f : kResumeFailures)  // the others were asked once, in the first run
    EXPECT_EQ(requests_about(server, f.marker, true), &f == &silent ? 3 : 1) << f.marker;
  const std::vector<std::string> ids = ids_in("rationales.jsonl");
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.back(), resume_failure_id(silent));
}

// One repair at a time: the first is answered and decided, the teacher then holds the second
// and the process is killed waiting for it. The fake evaluator runs in-process, so the process
// itself is all there is to kill.
TEST_F(FixitResume, KillMidRepairThenRerunDecidesEachFailureOnce) {
  testing::ScriptedHttpServer holding([](const testing::ScriptedRequest& request) {
    return request.index == 0 ? good_resume_answer(request.body) : stalled_answer();
  });
  const std::string log = work_ + "/repairs.jsonl";
  auto committed_lines = [&] {
    auto text = read_file(log, 1 << 20);
    return text.ok() ? std::count(text->begin(), text->end(), '\n') : 0;
  };
  auto one_at_a_time = [&](const testing::ScriptedHttpServer& teacher) {
    std::vector<std::string> args = repair_args("openai:teacher@" + teacher.base_url() + "/v1");
    args.insert(args.end(), {"--concurrency", "1"});
    return args;
  };
  std::vector<std::string> argv = {PTXB_TESTING_CLI_PATH, "fixit"};
  for (const std::string& arg : one_at_a_time(holding)) argv.push_back(arg);
  const pid_t first =
      testing::spawn_process(argv, current_environment(), tmp_ + "/first.out", tmp_ + "/first.err");
  const bool mid_second = testing::wait_until(
      [&] { return committed_lines() == 1 && holding.request_count() == 2; }, 30s);
  ::kill(first, SIGKILL);
  EXPECT_EQ(testing::wait_for_exit(first, 30s), 128 + SIGKILL);
  ASSERT_TRUE(mid_second) << file_text("first.err");
  const auto held = holding.requests();
  const ResumeFailure* done = resume_failure_in(held[0].body);
  const ResumeFailure* cut = resume_failure_in(held[1].body);
  ASSERT_TRUE(done && cut && done != cut);
  EXPECT_EQ(ids_in("repairs.jsonl"), std::vector<std::string>{resume_failure_id(*done)});
  // A kill cannot be timed inside the single write(2) of an append; a crash there (or a full
  // disk) leaves a line without its newline, written here by hand: it is no decision.
  {
    std::ofstream torn(log, std::ios::app);
    torn << R"({"id": ")" << resume_failure_id(*cut) << R"(", "outcome": "ke)";
  }

  // The rerun, against a teacher (on another port) that answers everything.
  testing::ScriptedHttpServer answering(
      [](const testing::ScriptedRequest& request) { return good_resume_answer(request.body); });
  ProcessResult rerun = fixit(one_at_a_time(answering));
  ASSERT_EQ(rerun.exit_code, 0) << rerun.stderr_text;
  const Json counts = parse_json(rerun.stdout_text, "stdout").value();
  EXPECT_EQ(counts["already_decided"], 1);
  EXPECT_EQ(counts["kept"], 2);
  EXPECT_EQ(counts["dropped"], 0);
  EXPECT_EQ(counts["unfinished"], Json::array());

  const std::vector<std::string> ids = ids_in("repairs.jsonl");
  ASSERT_EQ(ids.size(), 3u);
  EXPECT_EQ(ids.front(), resume_failure_id(*done));  // the first run's line, untouched
  std::set<std::string> expected;
  for (const ResumeFailure& f : kResumeFailures) expected.insert(resume_failure_id(f));
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()), expected);  // each once
  // The decided failure was neither asked for again nor evaluated again: its fix shows up
  // twice in evals.log (the turn and the verification on fresh inputs), both from the first run.
  EXPECT_EQ(answering.request_count(), 2);
  EXPECT_EQ(requests_about(answering, done->marker, false), 0);
  const std::string evals = read_file(tmp_ + "/evals/evals.log", 1 << 20).value();
  const std::string tag = std::string("start fix_") + done->trajectory + "\n";
  std::size_t seen = 0;
  for (std::size_t at = evals.find(tag); at != std::string::npos; at = evals.find(tag, at + 1))
    ++seen;
  EXPECT_EQ(seen, 2u) << evals;
}

}  // namespace
}  // namespace ptxb
