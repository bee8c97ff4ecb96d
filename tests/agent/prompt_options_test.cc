// The prompt options of `ptxbench run` (agent/prompt_options.h): their config round trip, that
// a run directory keeps them and refuses to resume under others, and what the model reads in
// each condition (guidance in the task message, retrieved notes in a failing turn's feedback,
// profiler hints), with a scripted model and the fake evaluator in process.
#include <gtest/gtest.h>

#include <mutex>

#include "../support/fake_turn_evaluator.h"
#include "adapt/fix_notes.h"
#include "agent/experiment_runner.h"
#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

constexpr const char* kPromptTask = "gemm_n7168_k5120";
const std::string kPromptTrajectory = "scripted__gemm_n7168_k5120__base__t0";

// Turn 1 fails to compile, turn 2 passes; records every conversation it was sent.
class TwoTurnModel final : public ModelClient {
 public:
  Result<ModelReply> complete(const std::vector<ChatMessage>& messages) override {
    std::lock_guard<std::mutex> lock(mutex_);
    calls.push_back(messages);
    ModelReply reply;
    reply.content = calls.size() == 1
                        ? "```cuda\n// ptxbench-fake-eval: status=COMPILE_ERROR\n"
                          "void run() { tma_load(smem_a); mbarrier_wait(bar); }\n```\n"
                        : "```cuda\n// ptxbench-fake-eval: status=PASSED speedup=1.1\n"
                          "void run() { tma_load(smem_a); fence(); mbarrier_wait(bar); }\n```\n";
    reply.usage = {100, 20, 0, "none"};
    reply.finish_reason = "stop";
    return reply;
  }
  std::vector<std::vector<ChatMessage>> calls;

 private:
  std::mutex mutex_;
};

class PromptOptionsRun : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_.emplace(TaskRegistry::load({}).value());
    packs_.emplace(PackLibrary::load(default_packs_dir().value()).value());
    tmp_ = make_temp_directory("ptxb-prompt-options").value();
    adapt::FixNote note{"n1",
                        kPromptTask,
                        "void run() { tma_load(smem_a); mbarrier_wait(bar); }",
                        "COMPILE_ERROR: the barrier was never initialized",
                        "I read the log: the mbarrier had no init before the first wait.",
                        "I add the init and a fence before the TMA load.",
                        "void run() { init_bar(bar); fence(); tma_load(smem_a); }"};
    ASSERT_TRUE(write_file_atomic(tmp_ + "/notes.jsonl", adapt::notes_jsonl({note})).ok());
    ASSERT_TRUE(write_file_atomic(tmp_ + "/guidance.md", "Use a 4-stage TMA pipeline.\n").ok());
  }
  void TearDown() override { remove_tree(tmp_); }

  ExperimentPlan plan(const PromptOptions& prompt) {
    ExperimentConfig config;
    config.models = {ModelConfig::from_shortcut("vllm:scripted@http://127.0.0.1:9/v1").value()};
    config.models[0].name = "scripted";
    config.tasks = {kPromptTask};
    config.variants = {"base"};
    config.trajectories = 1;
    config.turns = 2;
    config.prompt = prompt;
    return make_plan(config, *registry_, *packs_).value();
  }

  // Runs the plan into tmp_/NAME; returns the model's conversations.
  std::vector<std::vector<ChatMessage>> run(const ExperimentPlan& p, const std::string& name) {
    bool resumed = false;
    auto dir = RunDirectory::open(tmp_ + "/" + name, p, resumed);
    EXPECT_TRUE(dir.ok()) << (dir.ok() ? "" : dir.error().message);
    TwoTurnModel model;
    EvaluatorPool pool({&evaluator_});
    RunProgress quiet;
    ExperimentServices services{*registry_, *packs_, {&model}, pool, quiet};
    auto summary = run_experiment(p, *dir.value(), services);
    EXPECT_TRUE(summary.ok()) << (summary.ok() ? "" : summary.error().message);
    return model.calls;
  }

  std::optional<TaskRegistry> registry_;
  std::optional<PackLibrary> packs_;
  FakeTurnEvaluator evaluator_;
  std::string tmp_;
};

TEST(PromptOptions, RoundTripThroughTheExperimentFileAndErrorsNameThePath) {
  const Json json = Json::parse(R"({"tasks": ["gemm_n7168_k5120"], "prompt": {
      "guidance": "/g", "retrieval": "/n.jsonl", "retrieval_mode": "notes+kernel",
      "retrieval_top_k": 5, "profiler_hints": true}})");
  auto config = ExperimentConfig::from_json(json, "exp.json");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->prompt.retrieval_mode, adapt::RetrievalMode::kNotesAndKernel);
  EXPECT_EQ(config->prompt.retrieval_top_k, 5);
  EXPECT_TRUE(config->prompt.profiler_hints);
  auto again = ExperimentConfig::from_json(config->to_json(), "plan.json");
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->to_json(), config->to_json());
  EXPECT_TRUE(ExperimentConfig{}.prompt.is_default());
  EXPECT_EQ(ExperimentConfig{}.to_json()["prompt"]["retrieval"], nullptr);

  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"({"prompt": {"retrieval_mode": "kernel"}})",
       "exp.json: $.prompt.retrieval_mode: unknown retrieval mode 'kernel'"},
      {R"({"prompt": {"retrieval_top_k": 0}})",
       "exp.json: $.prompt.retrieval_top_k: expected an integer from 1 to 10"},
      {R"({"prompt": {"hints": true}})", "exp.json: $.prompt.hints: unknown field"},
      {R"({"prompt": {"profiler_hints": "yes"}})", "exp.json: $.prompt.profiler_hints"},
  };
  for (const auto& [text, expected] : bad) {
    auto parsed = ExperimentConfig::from_json(Json::parse(text), "exp.json");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.error().message.find(expected), std::string::npos) << parsed.error().message;
  }
}

TEST_F(PromptOptionsRun, DefaultOptionsLeaveTheIdentityAndTheConversationAsBefore) {
  const ExperimentPlan paper = plan({});
  EXPECT_FALSE(paper.identity().contains("prompt"));  // older run directories still resume
  const auto calls = run(paper, "paper");
  ASSERT_EQ(calls.size(), 2u);
  const std::string& feedback = calls[1][3].content;
  EXPECT_NE(feedback.find("status: COMPILE_ERROR"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("## Notes from earlier fixes"), std::string::npos);
  EXPECT_EQ(calls[0][1].content.find("## Expert guidance"), std::string::npos);
}

TEST_F(PromptOptionsRun, AResumeUnderOtherPromptOptionsIsRefused) {
  PromptOptions with_notes;
  with_notes.retrieval = tmp_ + "/notes.jsonl";
  bool resumed = false;
  ASSERT_TRUE(RunDirectory::open(tmp_ + "/run", plan(with_notes), resumed).ok());
  auto same = RunDirectory::saved_config(tmp_ + "/run");
  ASSERT_TRUE(same.ok());
  // `ptxbench run --out DIR` alone reads the options back from plan.json.
  auto saved = ExperimentConfig::from_json(same.value(), "plan.json");
  ASSERT_TRUE(saved.ok()) << saved.error().message;
  EXPECT_EQ(saved->prompt.retrieval, with_notes.retrieval);
  EXPECT_TRUE(RunDirectory::open(tmp_ + "/run", plan(saved->prompt), resumed).ok());
  EXPECT_TRUE(resumed);
  PromptOptions with_kernel = with_notes;
  with_kernel.retrieval_mode = adapt::RetrievalMode::kNotesAndKernel;
  auto other = RunDirectory::open(tmp_ + "/run", plan(with_kernel), resumed);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("$.identity.prompt.retrieval_mode"), std::string::npos)
      << other.error().message;
  auto off = RunDirectory::open(tmp_ + "/run", plan({}), resumed);
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.error().message.find("$.identity.prompt"), std::string::npos);
}

TEST_F(PromptOptionsRun, GuidanceAndNotesReachTheModelAndEveryTurnRecordsThem) {
  PromptOptions options;
  options.guidance = tmp_ + "/guidance.md";
  options.retrieval = tmp_ + "/notes.jsonl";
  const auto calls = run(plan(options), "notes");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_TRUE(ends_with(calls[0][1].content,
                        "\n\n## Expert guidance\nUse a 4-stage TMA "
                        "pipeline.\n"))
      << calls[0][1].content;
  const std::string& feedback = calls[1][3].content;
  const auto notes_at = feedback.find("\n## Notes from earlier fixes of this task\n");
  ASSERT_NE(notes_at, std::string::npos) << feedback;
  EXPECT_LT(feedback.find("status: COMPILE_ERROR"), notes_at);  // after the turn's own feedback
  EXPECT_NE(feedback.find("### Note 1: n1 (score "), std::string::npos);
  EXPECT_NE(feedback.find("Plan: I add the init and a fence before the TMA load.\n"),
            std::string::npos);
  EXPECT_EQ(feedback.find("init_bar(bar)"), std::string::npos);  // notes only: no kernel

  const std::string dir = tmp_ + "/notes/turns/" + kPromptTrajectory;
  const Json turn1 = read_json_file(dir + "/turn1.json").value();
  EXPECT_EQ(turn1["prompt"]["retrieval"], options.retrieval);
  EXPECT_EQ(turn1["prompt"]["retrieval_mode"], "notes");
  EXPECT_EQ(turn1["prompt"]["guidance_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(turn1["prompt"]["notes_sha256"].get<std::string>().size(), 64u);
  EXPECT_EQ(turn1["retrieval"]["notes"][0]["id"], "n1");
  EXPECT_EQ(turn1["feedback_message"]["extra"]["retrieval"]["notes"][0]["id"], "n1");
  // A passed turn retrieves nothing.
  const Json turn2 = read_json_file(dir + "/turn2.json").value();
  EXPECT_EQ(turn2["retrieval"], nullptr);
  EXPECT_EQ(turn2["feedback"].get<std::string>().find("## Notes from"), std::string::npos);
  const Json doc =
      read_json_file(tmp_ + "/notes/trajectories/" + kPromptTrajectory + ".json").value();
  EXPECT_EQ(doc["info"]["config"]["agent"]["prompt"]["guidance"], options.guidance);
}

TEST_F(PromptOptionsRun, NotesPlusKernelAppendsTheFixedKernelAndHintsFollowTheirOption) {
  PromptOptions options;
  options.retrieval = tmp_ + "/notes.jsonl";
  options.retrieval_mode = adapt::RetrievalMode::kNotesAndKernel;
  options.profiler_hints = true;
  const auto calls = run(plan(options), "kernel");
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_NE(calls[1][3].content.find("```cuda\nvoid run() { init_bar(bar); fence(); "
                                     "tma_load(smem_a); }\n```\n"),
            std::string::npos)
      << calls[1][3].content;
  // The passed turn's feedback carries the profiler-hints section.
  const Json turn2 =
      read_json_file(tmp_ + "/kernel/turns/" + kPromptTrajectory + "/turn2.json").value();
  EXPECT_NE(turn2["feedback"].get<std::string>().find("## Profiler hints\n"), std::string::npos)
      << turn2["feedback"];
  // ... whose metrics the evaluation was asked to collect in its profiled call.
  EXPECT_EQ(turn2["eval_request"]["options"].value("profiler_hints", false), true)
      << turn2["eval_request"].dump();
}

TEST_F(PromptOptionsRun, GuidanceFilesAreCheckedBeforeAnythingRuns) {
  ASSERT_TRUE(make_directories(tmp_ + "/per-task").ok());
  PromptOptions options;
  options.guidance = tmp_ + "/per-task";
  auto missing = load_prompt_aids(plan(options));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "usage");
  EXPECT_NE(missing.error().message.find("no gemm_n7168_k5120.md or gemm_n7168_k5120.txt"),
            std::string::npos)
      << missing.error().message;
  ASSERT_TRUE(write_file_atomic(tmp_ + "/per-task/gemm_n7168_k5120.txt", "Per-task text.").ok());
  auto per_task = load_prompt_aids(plan(options));
  ASSERT_TRUE(per_task.ok()) << per_task.error().message;
  EXPECT_EQ(per_task->with_guidance(kPromptTask, "TASK"),
            "TASK\n\n## Expert guidance\nPer-task "
            "text.\n");
  EXPECT_EQ(per_task->with_guidance("other_task", "TASK"), "TASK");
  ASSERT_TRUE(write_file_atomic(tmp_ + "/big.md", std::string(kMaxGuidanceBytes + 1, 'x')).ok());
  options.guidance = tmp_ + "/big.md";
  EXPECT_FALSE(load_prompt_aids(plan(options)).ok());
  options.guidance = "";
  options.retrieval = tmp_ + "/guidance.md";  // not a notes file
  auto damaged = load_prompt_aids(plan(options));
  ASSERT_FALSE(damaged.ok());
  EXPECT_EQ(damaged.error().code, "usage");
}

}  // namespace
}  // namespace ptxb
