// `ptxbench fixit` end to end as a user runs it: mine a run directory, repair with a scripted
// teacher on a loopback OpenAI-compatible server and the fake evaluator (ptxbench-testing
// --test-fake-eval), reason, export. A repair that fails verification and a teacher that only
// answers junk are dropped and counted; a rerun decides nothing twice. Then `fixit notes` and a
// `run --retrieval` whose student reads the retrieved note in its second turn.
#include <gtest/gtest.h>

#include "../cli/cli_test_util.h"
#include "../support/http_test_server.h"
#include "core/fs.h"
#include "core/strings.h"
#include "run_dir_fixture.h"

namespace ptxb {
namespace {

constexpr const char* kTask = "gemm_n7168_k5120";

std::string fenced(const std::string& body) {
  return "Here is the fix.\n\n```cuda\n" + body + "\n```\n";
}

// The teacher: repairs kernel A for good, kernel B with one that fails on fresh inputs, and
// answers junk (no code) for kernel C; rationales: junk first, then a good one.
testing::ScriptedResponse teacher(const testing::ScriptedRequest& request, int& rationale_calls) {
  const std::string& body = request.body;
  if (contains(body, "<analysis>")) {  // a rationale request
    if (rationale_calls++ == 0) return testing::openai_answer("I would rather not.");
    return testing::openai_answer(
        "<analysis>I read the compile log: the kernel calls a helper that does not exist, so "
        "nothing after it was ever compiled or run on the GPU.</analysis>\n<plan>I replace the "
        "undefined helper with the barrier the pipeline needs and keep the rest of the design "
        "exactly as it was.</plan>");
  }
  if (contains(body, "kernel_a"))
    return testing::openai_answer(
        fenced("// ptxbench-fake-eval: status=PASSED speedup=0.9 target=dynamic_present\n"
               "void run() { fixed_a(); }"));
  if (contains(body, "kernel_b"))
    return testing::openai_answer(
        fenced("// ptxbench-fake-eval: status=PASSED repeat_status=INCORRECT_NUMERICAL\n"
               "void run() { lucky_b(); }"));
  return testing::openai_answer("I am not sure what to do here.");
}

class FixitCli : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = make_temp_directory("ptxb-fixit-cli").value();
    make_directories(tmp_ + "/evals");
    testing::write_fixture_run(tmp_ + "/run", kTask,
                               {{"t0", 1, "COMPILE_ERROR", "void run() { kernel_a(1); }"},
                                {"t1", 1, "INCORRECT_NUMERICAL", "void run() { kernel_b(2); }"},
                                {"t2", 1, "TIMEOUT", "void run() { kernel_c(3); }"},
                                {"t3", 1, "PASSED", "void run() { fine(); }"}});
    server_ = std::make_unique<testing::ScriptedHttpServer>(
        [this](const testing::ScriptedRequest& r) { return teacher(r, rationale_calls_); });
  }
  void TearDown() override {
    server_->stop();
    remove_tree(tmp_);
  }

  ProcessResult fixit(std::vector<std::string> args) {
    args.insert(args.begin(), "fixit");
    return testing_cli(std::move(args));
  }
  // ptxbench-testing: `ptxbench` with --test-fake-eval (tests/support).
  ProcessResult testing_cli(const std::vector<std::string>& args) {
    ProcessSpec spec;
    spec.argv = {PTXB_TESTING_CLI_PATH};
    spec.argv.insert(spec.argv.end(), args.begin(), args.end());
    spec.timeout = std::chrono::milliseconds(60000);
    SystemProcessRunner runner;
    auto result = runner.run(spec);
    return result.ok() ? result.value() : ProcessResult{};
  }
  std::string teacher_spec() const { return "openai:teacher@" + server_->base_url() + "/v1"; }

  std::string tmp_;
  int rationale_calls_ = 0;
  std::unique_ptr<testing::ScriptedHttpServer> server_;
};

TEST_F(FixitCli, HelpTeachesEveryStep) {
  ProcessResult help = testing::run_cli({"fixit", "--help"});
  ASSERT_EQ(help.exit_code, 0);
  for (const char* word : {"mine", "repair", "reason", "export", "Examples:", "resumable"})
    EXPECT_NE(help.stdout_text.find(word), std::string::npos) << word;
  ProcessResult none = testing::run_cli({"fixit"});
  EXPECT_EQ(none.exit_code, 2);
  ProcessResult bad = testing::run_cli(
      {"fixit", "mine", tmp_ + "/run", "--out", tmp_ + "/w", "--statuses", "integrity"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.stderr_text.find("ptxbench: error: unknown error type 'integrity'"),
            std::string::npos)
      << bad.stderr_text;
  ProcessResult no_work =
      testing::run_cli({"fixit", "export", "--work", tmp_, "--out", tmp_ + "/x.jsonl"});
  EXPECT_EQ(no_work.exit_code, 2);
  EXPECT_NE(no_work.stderr_text.find("fixit mine"), std::string::npos) << no_work.stderr_text;
}

TEST_F(FixitCli, MineRepairReasonExportAndRerun) {
  const std::string work = tmp_ + "/work";
  ProcessResult mined = fixit({"mine", tmp_ + "/run", "--out", work});
  ASSERT_EQ(mined.exit_code, 0) << mined.stderr_text;
  EXPECT_NE(mined.stdout_text.find("3 of 4 turns taken"), std::string::npos) << mined.stdout_text;

  const std::vector<std::string> repair = {"repair",        "--work",  work, "--teacher",
                                           teacher_spec(),  "--turns", "2",  "--test-fake-eval",
                                           tmp_ + "/evals", "--json"};
  ProcessResult repaired = fixit(repair);
  ASSERT_EQ(repaired.exit_code, 0) << repaired.stderr_text;
  auto counts = parse_json(repaired.stdout_text, "stdout").value();
  EXPECT_EQ(counts["kept"], 1);
  EXPECT_EQ(counts["dropped"], 2);
  EXPECT_EQ(counts["dropped_by_reason"]["verification_failed"], 1);
  EXPECT_EQ(counts["dropped_by_reason"]["not_repaired"], 1);
  // The repair trajectories are a run directory `ptxbench report` reads.
  EXPECT_TRUE(path_exists(work + "/repairs/turns.jsonl"));
  auto trajectory = read_json_file(
      work + "/repairs/trajectories/fixit__student__gemm_n7168_k5120__base__t0__turn1.json");
  ASSERT_TRUE(trajectory.ok());
  const Json& messages = (*trajectory)["messages"];
  ASSERT_EQ(messages.size(), 6u);  // system, task, failing kernel, its feedback, fix, feedback
  EXPECT_EQ(messages[2]["role"], "assistant");
  EXPECT_NE(messages[3]["content"].get<std::string>().find("FEEDBACK COMPILE_ERROR of t0"),
            std::string::npos);
  EXPECT_EQ((*trajectory)["info"]["exit_status"], "target_reached");

  const int requests = server_->request_count();
  ProcessResult again = fixit(repair);
  ASSERT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_EQ(parse_json(again.stdout_text, "stdout").value()["already_decided"], 3);
  EXPECT_EQ(server_->request_count(), requests);  // nothing asked twice

  ProcessResult reasoned = fixit({"reason", "--work", work, "--teacher", teacher_spec(), "--json"});
  ASSERT_EQ(reasoned.exit_code, 0) << reasoned.stderr_text;
  auto reasons = parse_json(reasoned.stdout_text, "stdout").value();
  EXPECT_EQ(reasons["kept"], 1);
  EXPECT_EQ(reasons["rejected_answers"]["malformed"], 1);  // the junk answer, then a retry

  const std::string out = tmp_ + "/fixit.jsonl";
  ProcessResult exported = fixit({"export", "--work", work, "--out", out});
  ASSERT_EQ(exported.exit_code, 0) << exported.stderr_text;
  auto rows = read_jsonl_file(out);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 1u);
  const Json& row = rows->front();
  ASSERT_EQ(row["messages"].size(), 5u);
  EXPECT_EQ(row["messages"][2]["content"], "```cuda\nvoid run() { kernel_a(1); }\n```");
  EXPECT_EQ(row["messages"][4]["loss"], true);
  EXPECT_EQ(row["messages"][3]["loss"], false);
  const std::string answer = row["messages"][4]["content"];
  EXPECT_TRUE(starts_with(answer, "<think>\nI read the compile log")) << answer;
  EXPECT_NE(answer.find("fixed_a();"), std::string::npos);
  auto manifest = read_json_file(out + ".manifest.json");
  ASSERT_TRUE(manifest.ok());
  EXPECT_EQ((*manifest)["counts"]["written"], 1);

  // The same kernel in a test run keeps the row out.
  ProcessResult leak = fixit({"export", "--work", work, "--out", tmp_ + "/leak.jsonl",
                              "--heldout-run", work + "/repairs", "--json"});
  ASSERT_EQ(leak.exit_code, 0) << leak.stderr_text;
  EXPECT_EQ(
      parse_json(leak.stdout_text, "stdout").value()["dropped_by_reason"]["same_as_test_kernel"],
      1);

  // --tokenizer counts the 5-message row with the tokenizer.json (kernelgen_cli_test.cc has
  // the decision between the two counts): over a limit of 1 token, dropped with both counts.
  ProcessResult counted =
      fixit({"export", "--work", work, "--out", tmp_ + "/tok.jsonl", "--max-tokens", "1",
             "--tokenizer", std::string(PTXB_TESTDATA_DIR) + "/adapt/tokenizer/tokenizer.json"});
  ASSERT_EQ(counted.exit_code, 0) << counted.stderr_text;
  const Json tokenized = read_json_file(tmp_ + "/tok.jsonl.manifest.json").value();
  EXPECT_TRUE(starts_with(tokenized["token_count"].get<std::string>(),
                          "tokenizer: tokenizer.json sha256 "));
  ASSERT_EQ(tokenized["drops"].size(), 1u);
  const Json& detail = tokenized["drops"][0]["detail"];
  EXPECT_EQ(tokenized["drops"][0]["reason"], "over_token_limit");
  EXPECT_GT(detail["tokenizer_tokens"].get<int>(), 1) << detail.dump();
  EXPECT_GT(detail["estimated_tokens"].get<int>(), 1) << detail.dump();
}

// The notes of the kept repair feed a student run: its failing first kernel resembles the
// repaired one (kernel_a), so the feedback it reads before turn 2 carries that note and, with
// notes+kernel, the fixed kernel.
TEST_F(FixitCli, NotesOfKeptRepairsReachTheStudentsSecondTurn) {
  const std::string work = tmp_ + "/work";
  ASSERT_EQ(fixit({"mine", tmp_ + "/run", "--out", work}).exit_code, 0);
  ASSERT_EQ(fixit({"repair", "--work", work, "--teacher", teacher_spec(), "--turns", "2",
                   "--test-fake-eval", tmp_ + "/evals"})
                .exit_code,
            0);
  const std::string notes = tmp_ + "/notes.jsonl";
  ProcessResult early = fixit({"notes", "--work", work, "--out", notes, "--json"});
  ASSERT_EQ(early.exit_code, 0) << early.stderr_text;  // no rationale yet: no notes
  EXPECT_EQ(parse_json(early.stdout_text, "stdout").value()["kept_repairs_without_rationale"], 1);
  ASSERT_EQ(fixit({"reason", "--work", work, "--teacher", teacher_spec()}).exit_code, 0);
  ProcessResult built = fixit({"notes", "--work", work, "--out", notes});
  ASSERT_EQ(built.exit_code, 0) << built.stderr_text;
  EXPECT_EQ(built.stdout_text, "1 note written to " + notes + "\n");
  auto lines = read_jsonl_file(notes);
  ASSERT_TRUE(lines.ok());
  ASSERT_EQ(lines->size(), 1u);
  EXPECT_EQ(lines->front()["task"], kTask);
  EXPECT_EQ(lines->front()["failing_kernel"], "void run() { kernel_a(1); }");
  EXPECT_TRUE(contains(lines->front()["fixed_kernel"].get<std::string>(), "fixed_a();"));

  testing::ScriptedHttpServer student([](const testing::ScriptedRequest& request) {
    const bool first = testing::assistant_messages_in(request.body) == 0;
    return testing::openai_answer(
        first ? fenced("// ptxbench-fake-eval: status=COMPILE_ERROR\nvoid run() { kernel_a(7); }")
              : fenced("// ptxbench-fake-eval: status=PASSED\nvoid run() { fixed_a(); }"));
  });
  const std::string out = tmp_ + "/student";
  ProcessResult run = testing_cli(
      {"run", "--model", "openai:student@" + student.base_url() + "/v1", "--task", kTask,
       "--variants", "base", "--trajectories", "1", "--turns", "2", "--out", out, "--retrieval",
       notes, "--retrieval-mode", "notes+kernel", "--test-fake-eval", tmp_ + "/evals"});
  ASSERT_EQ(run.exit_code, 0) << run.stderr_text;
  const auto requests = student.requests();
  ASSERT_EQ(requests.size(), 2u);
  const Json messages = parse_json(requests[1].body, "request").value()["messages"];
  ASSERT_EQ(messages.size(), 4u);
  const std::string feedback = messages[3]["content"];
  EXPECT_NE(feedback.find("## Notes from earlier fixes of this task"), std::string::npos)
      << feedback;
  EXPECT_NE(feedback.find("Analysis: I read the compile log"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("```cuda\n// ptxbench-fake-eval: status=PASSED speedup=0.9 "
                          "target=dynamic_present\nvoid run() { fixed_a(); }\n```"),
            std::string::npos)
      << feedback;
  // plan.json keeps the options, so `ptxbench run --out DIR` alone resumes under them.
  const Json plan = read_json_file(out + "/plan.json").value();
  EXPECT_EQ(plan["config"]["prompt"]["retrieval_mode"], "notes+kernel");
  EXPECT_EQ(plan["identity"]["prompt"]["retrieval"], plan["config"]["prompt"]["retrieval"]);
  ProcessResult resumed = testing_cli({"run", "--out", out, "--test-fake-eval", tmp_ + "/evals"});
  EXPECT_EQ(resumed.exit_code, 0) << resumed.stderr_text;
  EXPECT_EQ(student.request_count(), 2);  // nothing left to ask

  ProcessResult no_notes = testing::run_cli({"run", "--model", "replay", "--task", kTask, "--out",
                                             tmp_ + "/x", "--retrieval-mode", "notes"});
  EXPECT_EQ(no_notes.exit_code, 2);
  EXPECT_NE(no_notes.stderr_text.find(
                "ptxbench: error: --retrieval-mode and --retrieval-top-k need --retrieval"),
            std::string::npos)
      << no_notes.stderr_text;
}

}  // namespace
}  // namespace ptxb
