// MiniPTXAgent end to end, in process: a scripted model, the fake evaluator, a real run
// directory. A 3-turn trajectory must produce the expected trajectory file (golden, with times
// normalized) and turn records; interrupted runs resume with no turn duplicated or lost.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <mutex>

#include "../support/fake_turn_evaluator.h"
#include "../support/http_test_server.h"
#include "agent/experiment_runner.h"
#include "agent/kernel_extract.h"
#include "agent/task_prompt.h"
#include "core/fs.h"
#include "core/strings.h"
#include "llm/http_model_client.h"
#include "llm/http_transport.h"
#include "llm/replay_model.h"
#include "metrics/turn_record.h"

namespace ptxb {
namespace {

constexpr const char* kTask = "gemm_n7168_k5120";

// Answers by turn (1 + assistant messages so far); records every conversation it was sent.
class ScriptedModel final : public ModelClient {
 public:
  using Script = std::function<Result<ModelReply>(int turn, const std::vector<ChatMessage>&)>;
  explicit ScriptedModel(Script script) : script_(std::move(script)) {}
  Result<ModelReply> complete(const std::vector<ChatMessage>& messages) override {
    int turn = 1;
    for (const auto& m : messages) turn += m.role == "assistant";
    {
      std::lock_guard<std::mutex> lock(mutex_);
      calls.push_back(messages);
    }
    return script_(turn, messages);
  }
  std::vector<std::vector<ChatMessage>> calls;

 private:
  Script script_;
  std::mutex mutex_;
};

ModelReply reply_with(const std::string& content, const std::string& reasoning = "") {
  ModelReply r;
  r.content = content;
  r.reasoning = reasoning;
  r.usage = {1000, 200, reasoning.empty() ? 0 : 50, reasoning.empty() ? "none" : "reported"};
  r.finish_reason = "stop";
  r.wall_s = 1.5;
  return r;
}

std::string kernel_reply(const std::string& directive) {
  return "Here is my kernel.\n\n```cuda\n// ptxbench-fake-eval: " + directive +
         "\n#include <cuda_runtime.h>\nvoid run(const __nv_bfloat16* A, const __nv_bfloat16* B, "
         "__nv_bfloat16* C, int64_t M, int64_t N, int64_t K, cudaStream_t stream) {\n}\n```\n";
}

// The 3-turn script: no code, a compile error, then a correct kernel at 1.25x.
Result<ModelReply> three_turns(int turn, const std::vector<ChatMessage>&) {
  if (turn == 1) return reply_with("I will first think about the tiling. No code yet.", "tiles...");
  if (turn == 2) return reply_with(kernel_reply("status=COMPILE_ERROR"));
  return reply_with(kernel_reply("status=PASSED speedup=1.25 target=dynamic_present"));
}

class AgentRun : public ::testing::Test {
 protected:
  void SetUp() override {
    auto registry = TaskRegistry::load({});
    ASSERT_TRUE(registry.ok()) << registry.error().message;
    registry_.emplace(std::move(registry).value());
    auto packs = PackLibrary::load(default_packs_dir().value());
    ASSERT_TRUE(packs.ok()) << packs.error().message;
    packs_.emplace(std::move(packs).value());
    auto dir = make_temp_directory("ptxb-agent-test");
    ASSERT_TRUE(dir.ok());
    tmp_ = dir.value();
  }
  void TearDown() override { remove_tree(tmp_); }

  ExperimentPlan plan(int turns = 3, int trajectories = 1, std::optional<double> early_stop = {}) {
    ExperimentConfig config;
    auto model = ModelConfig::from_json(Json::parse(R"({"name": "scripted", "api": "openai",
        "base_url": "http://127.0.0.1:9/v1", "model": "scripted-1", "temperature": 0.5})"),
                                        "$");
    EXPECT_TRUE(model.ok());
    config.models = {model.value()};
    config.tasks = {kTask};
    config.variants = {"base"};
    config.turns = turns;
    config.trajectories = trajectories;
    config.concurrency = {4, 1};
    config.early_stop_speedup = early_stop;
    auto p = make_plan(config, *registry_, *packs_);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    return p.value();
  }

  // One invocation of the runner on `out` (a new run or a resume).
  RunSummary run(const ExperimentPlan& p, ModelClient& model, const std::string& out,
                 bool* resumed = nullptr) {
    bool was_resumed = false;
    auto dir = RunDirectory::open(out, p, was_resumed);
    EXPECT_TRUE(dir.ok()) << (dir.ok() ? "" : dir.error().message);
    if (resumed) *resumed = was_resumed;
    EvaluatorPool pool({&evaluator_});
    RunProgress quiet;
    ExperimentServices services{*registry_, *packs_, {&model}, pool, quiet};
    auto summary = run_experiment(p, *dir.value(), services);
    EXPECT_TRUE(summary.ok()) << (summary.ok() ? "" : summary.error().message);
    return summary.ok() ? summary.value() : RunSummary{};
  }

  std::vector<TurnRecord> turns(const std::string& out) {
    auto text = read_file(out + "/turns.jsonl", 1 << 20);
    EXPECT_TRUE(text.ok());
    auto records = parse_turns_jsonl(text.value(), "turns.jsonl");
    EXPECT_TRUE(records.ok()) << (records.ok() ? "" : records.error().message);
    return records.ok() ? records.value() : std::vector<TurnRecord>{};
  }

  Json trajectory(const std::string& out, const std::string& id) {
    auto doc = read_json_file(out + "/trajectories/" + id + ".json");
    EXPECT_TRUE(doc.ok()) << (doc.ok() ? "" : doc.error().message);
    return doc.ok() ? doc.value() : Json();
  }

  std::optional<TaskRegistry> registry_;
  std::optional<PackLibrary> packs_;
  FakeTurnEvaluator evaluator_;
  std::string tmp_;
};

const std::string kId = "scripted__gemm_n7168_k5120__base__t0";

// Times and versions vary between runs; the prompts are checked against the prompt builder and
// replaced by their sizes so the golden file does not repeat the knowledge pack.
Json normalized(Json doc, const Prompt& prompt) {
  EXPECT_EQ(doc["messages"][0]["content"], prompt.system);
  EXPECT_EQ(doc["messages"][1]["content"], prompt.first_user);
  doc["messages"][0]["content"] = "<system prompt>";
  doc["messages"][1]["content"] = "<first user message>";
  doc["info"]["mini_version"] = "<version>";
  doc["info"]["ptxbench"]["updated"] = "<time>";
  for (auto& m : doc["messages"])
    if (m["extra"].contains("wall_s")) m["extra"]["wall_s"] = 0;
  return doc;
}

TEST_F(AgentRun, ThreeTurnTrajectoryMatchesTheGoldenFileAndTurnRecords) {
  ScriptedModel model(three_turns);
  const std::string out = tmp_ + "/run";
  const RunSummary summary = run(plan(), model, out);
  EXPECT_EQ(summary.unfinished, 0);

  const auto records = turns(out);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].status_name(), "NO_CODE");
  EXPECT_EQ(records[0].no_code_reason, "the reply contains no fenced code block");
  EXPECT_EQ(records[0].tokens.reasoning, 50);
  EXPECT_EQ(records[1].status_name(), "COMPILE_ERROR");
  EXPECT_EQ(records[2].status_name(), "PASSED");
  EXPECT_EQ(records[2].speedup, 1.25);
  EXPECT_EQ(records[2].target_instructions, "dynamic_present");
  EXPECT_DOUBLE_EQ(records[2].model_wall_s, 1.5);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(records[i].turn, i + 1);
    EXPECT_EQ(records[i].key.trajectory, kId);
    EXPECT_EQ(records[i].key.variant, "base");
    EXPECT_EQ(records[i].workload_name, "gemm_n7168_k5120_M8192");
  }
  // The model saw the whole history each turn: 2, 4, 6 messages.
  ASSERT_EQ(model.calls.size(), 3u);
  EXPECT_EQ(model.calls[2].size(), 6u);
  EXPECT_NE(model.calls[1][3].content.find("## No kernel found"), std::string::npos);
  EXPECT_NE(model.calls[2][5].content.find("status: COMPILE_ERROR"), std::string::npos)
      << model.calls[2][5].content;

  const Task* task = registry_->find(kTask);
  auto prompt = build_task_prompt(*packs_, *task, "base");
  ASSERT_TRUE(prompt.ok());
  const Json actual = normalized(trajectory(out, kId), prompt.value());
  const std::string golden_path = std::string(PTXB_TESTDATA_DIR) + "/agent/trajectory_3turns.json";
  if (std::getenv("PTXB_UPDATE_GOLDEN"))
    ASSERT_TRUE(write_file_atomic(golden_path, dump_pretty(actual)).ok());
  auto golden = read_json_file(golden_path);
  ASSERT_TRUE(golden.ok()) << golden.error().message;
  EXPECT_EQ(actual, golden.value()) << first_json_difference(actual, golden.value());

  // Each turn's kernel and result beside it; the report reads the directory unchanged.
  EXPECT_FALSE(path_exists(out + "/turns/" + kId + "/turn1.cu"));
  EXPECT_TRUE(path_exists(out + "/turns/" + kId + "/turn3.cu"));
  auto detail = read_json_file(out + "/turns/" + kId + "/turn3.json");
  ASSERT_TRUE(detail.ok());
  EXPECT_EQ(detail.value()["eval"]["status"], "PASSED");
  EXPECT_EQ(detail.value()["eval_request"]["task"], kTask);
  EXPECT_EQ(detail.value()["eval_request"]["source_file"], "turn3.cu");
  auto loaded = load_run_dirs({out});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ(loaded->front().turns.size(), 3u);
  auto summary_json = read_json_file(out + "/summary.json");
  ASSERT_TRUE(summary_json.ok());
  EXPECT_EQ(summary_json.value()["recorded_turns"], 3);
  EXPECT_EQ(summary_json.value()["groups"][0]["best_speedup"], 1.25);
}

TEST_F(AgentRun, ModelFailureStopsTheTrajectoryAndTheRerunResumesIt) {
  const std::string out = tmp_ + "/run";
  ScriptedModel failing([](int turn, const std::vector<ChatMessage>& m) -> Result<ModelReply> {
    if (turn == 2)
      return make_error("server",
                        "model scripted: HTTP 503: overloaded (gave up after 6 attempts)");
    return three_turns(turn, m);
  });
  const RunSummary first = run(plan(), failing, out);
  EXPECT_EQ(first.unfinished, 1);
  EXPECT_EQ(turns(out).size(), 1u);
  const Json stopped = trajectory(out, kId);
  EXPECT_EQ(stopped["info"]["exit_status"], "model_error");
  EXPECT_NE(stopped["info"]["ptxbench"]["end_detail"].get<std::string>().find("HTTP 503"),
            std::string::npos);
  EXPECT_EQ(stopped["messages"].size(), 4u);

  ScriptedModel healthy(three_turns);
  bool resumed = false;
  const RunSummary second = run(plan(), healthy, out, &resumed);
  EXPECT_TRUE(resumed);
  EXPECT_EQ(second.unfinished, 0);
  ASSERT_EQ(healthy.calls.size(), 2u);     // turns 2 and 3 only
  EXPECT_EQ(healthy.calls[0].size(), 4u);  // rebuilt history: system, task, reply 1, feedback 1
  EXPECT_EQ(healthy.calls[0][2].content, three_turns(1, {}).value().content);
  const auto records = turns(out);
  ASSERT_EQ(records.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(records[i].turn, i + 1);
  EXPECT_EQ(trajectory(out, kId)["messages"].size(), 8u);
  EXPECT_EQ(trajectory(out, kId)["info"]["exit_status"], "completed");

  // A third invocation finds nothing to do.
  ScriptedModel idle(three_turns);
  run(plan(), idle, out);
  EXPECT_TRUE(idle.calls.empty());
  EXPECT_EQ(turns(out).size(), 3u);
}

TEST_F(AgentRun, CrashBeforeTheCommitRedoesExactlyThatTurn) {
  ScriptedModel model(three_turns);
  const std::string out = tmp_ + "/run";
  run(plan(), model, out);
  // As if killed after turn 3's files and conversation were written, while appending its
  // record: the line is torn.
  auto text = read_file(out + "/turns.jsonl", 1 << 20);
  ASSERT_TRUE(text.ok());
  std::vector<std::string> lines = split_lines(text.value());
  ASSERT_EQ(lines.size(), 3u);
  ASSERT_TRUE(write_file_atomic(out + "/turns.jsonl",
                                lines[0] + "\n" + lines[1] + "\n" + lines[2].substr(0, 40))
                  .ok());
  Json doc = trajectory(out, kId);
  doc["info"]["exit_status"] = "running";
  ASSERT_TRUE(write_file_atomic(out + "/trajectories/" + kId + ".json", dump_pretty(doc)).ok());

  ScriptedModel again(three_turns);
  run(plan(), again, out);
  ASSERT_EQ(again.calls.size(), 1u);
  EXPECT_EQ(again.calls[0].size(), 6u);  // turn 3's request, from turns 1-2 only
  const auto records = turns(out);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[2].turn, 3);
  EXPECT_EQ(trajectory(out, kId)["messages"].size(), 8u);
}

TEST_F(AgentRun, ContextWindowEndsTheTrajectoryForGood) {
  ScriptedModel model([](int turn, const std::vector<ChatMessage>& m) -> Result<ModelReply> {
    if (turn == 2)
      return Error{"model scripted: HTTP 400: maximum context length exceeded",
                   kContextWindowError};
    return three_turns(turn, m);
  });
  const std::string out = tmp_ + "/run";
  const RunSummary summary = run(plan(), model, out);
  EXPECT_EQ(summary.unfinished, 0);  // final, not resumable
  EXPECT_EQ(trajectory(out, kId)["info"]["exit_status"], "context_window_exceeded");
  EXPECT_EQ(turns(out).size(), 1u);
  ScriptedModel later(three_turns);
  run(plan(), later, out);
  EXPECT_TRUE(later.calls.empty());
}

TEST_F(AgentRun, EarlyStopIsOffByDefaultAndRecordedWhenOn) {
  auto fast = [](int, const std::vector<ChatMessage>&) -> Result<ModelReply> {
    return reply_with(kernel_reply("status=PASSED speedup=1.5"));
  };
  ScriptedModel all_turns(fast);
  run(plan(3), all_turns, tmp_ + "/protocol");
  EXPECT_EQ(turns(tmp_ + "/protocol").size(), 3u);

  ScriptedModel stopping(fast);
  run(plan(3, 1, 1.2), stopping, tmp_ + "/early");
  EXPECT_EQ(turns(tmp_ + "/early").size(), 1u);
  const Json doc = trajectory(tmp_ + "/early", kId);
  EXPECT_EQ(doc["info"]["exit_status"], "target_reached");
  EXPECT_EQ(doc["info"]["config"]["agent"]["early_stop_speedup"], 1.2);
}

TEST_F(AgentRun, EvaluationInfrastructureFailureIsResumable) {
  ScriptedModel broken([](int turn, const std::vector<ChatMessage>& m) -> Result<ModelReply> {
    if (turn == 2) return reply_with(kernel_reply("status=error"));
    return three_turns(turn, m);
  });
  const std::string out = tmp_ + "/run";
  EXPECT_EQ(run(plan(), broken, out).unfinished, 1);
  EXPECT_EQ(trajectory(out, kId)["info"]["exit_status"], "eval_error");
  ScriptedModel fixed(three_turns);
  EXPECT_EQ(run(plan(), fixed, out).unfinished, 0);
  EXPECT_EQ(turns(out).size(), 3u);
}

TEST_F(AgentRun, ParallelTrajectoriesEachGetEveryTurnOnce) {
  ScriptedModel model(three_turns);
  const std::string out = tmp_ + "/run";
  run(plan(3, 6), model, out);
  auto loaded = load_run_dirs({out});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 6u);
  for (const auto& t : loaded.value()) EXPECT_EQ(t.turns.size(), 3u) << t.key.trajectory;
  EXPECT_EQ(model.calls.size(), 18u);
}

TEST_F(AgentRun, ADifferentExperimentInTheSameDirectoryIsRefused) {
  ScriptedModel model(three_turns);
  const std::string out = tmp_ + "/run";
  run(plan(3), model, out);
  bool resumed = false;
  auto other = RunDirectory::open(out, plan(5), resumed);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().message.find("$.identity.turns: 3 vs 5"), std::string::npos)
      << other.error().message;
}

// Through a real loopback server: the OpenAI wire format, a reply with no code, one with several
// code blocks (the last cuda block with `run` is evaluated), then a context-window error.
TEST_F(AgentRun, OverHttpNoCodeSeveralBlocksAndContextWindow) {
  const std::string final_kernel =
      "// ptxbench-fake-eval: status=PASSED speedup=0.8 tag=final\nvoid run(const __nv_bfloat16* "
      "A, "
      "const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, int64_t N, int64_t K, cudaStream_t s) "
      "{}\n";
  testing::ScriptedHttpServer server([&](const testing::ScriptedRequest& request) {
    const int turn = testing::assistant_messages_in(request.body) + 1;
    if (turn == 1)
      return testing::openai_answer("Let me think.", "reasoning here", "reasoning_content", 900,
                                    100, 80);
    if (turn == 2)
      return testing::openai_answer(
          "Draft:\n```cuda\nvoid run() { /* draft */ "
          "}\n```\nHelper:\n```python\nprint()\n```\nFinal:\n```cuda\n" +
          final_kernel + "```\n");
    return testing::json_response(
        400, Json{{"error",
                   {{"message", "This model's maximum context length is 8192 tokens"},
                    {"code", "context_length_exceeded"}}}});
  });
  ModelConfig config = plan().config.models[0];
  config.base_url = server.base_url() + "/v1";
  CurlHttpTransport transport;
  HttpModelClient client(config, "", transport, [](double) {});
  ExperimentPlan p = plan();
  p.config.models[0] = config;
  const std::string out = tmp_ + "/run";
  const RunSummary summary = run(p, client, out);
  EXPECT_EQ(summary.unfinished, 0);
  EXPECT_EQ(server.request_count(), 3);
  const auto records = turns(out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].status_name(), "NO_CODE");
  EXPECT_EQ(records[0].tokens.reasoning, 80);
  EXPECT_EQ(records[1].status_name(), "PASSED");
  auto kernel = read_file(out + "/turns/" + kId + "/turn2.cu", 1 << 20);
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(kernel.value(), final_kernel);
  const Json doc = trajectory(out, kId);
  EXPECT_EQ(doc["info"]["exit_status"], "context_window_exceeded");
  EXPECT_EQ(doc["messages"][2]["reasoning_content"], "reasoning here");
  auto detail = read_json_file(out + "/turns/" + kId + "/turn2.json");
  ASSERT_TRUE(detail.ok());
  EXPECT_EQ(detail.value()["extraction"]["blocks"], 3);
  EXPECT_EQ(detail.value()["extraction"]["chosen_block"], 2);
}

TEST(ReplayModel, AnswersEachTaskTurnByTurnWithTheListedKernels) {
  auto replay = ReplayModel::load(default_replay_dir().value());
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  EXPECT_EQ(replay.value()->kernel_variant("gemm_n7168_k5120", 1)->describe(),
            "gemm_n7168_k5120/rung1_tma_wgmma.cu");
  EXPECT_EQ(replay.value()->kernel_variant("gemm_n7168_k5120", 2)->describe(),
            "gemm_n7168_k5120/rung3_cluster_multicast.cu");
  EXPECT_EQ(replay.value()->kernel_variant("gemm_n7168_k5120", 8)->describe(),
            "gemm_n7168_k5120/rung3_cluster_multicast.cu");
  // Causal tasks are their base task's sources with PTXB_CAUSAL=1 in front, not copies.
  // (Turn 2 of the d128 forward tasks is rung 3, the H200 sweep's winner.)
  EXPECT_EQ(replay.value()->kernel_variant("mha_with_lse_d128_causal", 2)->describe(),
            "mha_with_lse_d128/rung3_tuned.cu with PTXB_CAUSAL=1");
  auto forward =
      read_file(default_replay_dir().value() + "/mha_with_lse_d128/rung3_tuned.cu", 1 << 20);
  ASSERT_TRUE(forward.ok());
  EXPECT_EQ(replay.value()->kernel_source("mha_with_lse_d128_causal", 2).value(),
            "#define PTXB_CAUSAL 1\n" + forward.value());
  // The d64 and d96 forward tasks are the same source with PTXB_HEAD_DIM in front (issue 22).
  EXPECT_EQ(replay.value()->kernel_variant("mha_with_lse_d96_causal", 1)->describe(),
            "mha_with_lse_d128/rung1_tma_wgmma.cu with PTXB_CAUSAL=1, PTXB_HEAD_DIM=96");
  auto forward_rung2 = read_file(
      default_replay_dir().value() + "/mha_with_lse_d128/rung2_warp_specialized.cu", 1 << 20);
  ASSERT_TRUE(forward_rung2.ok());
  EXPECT_EQ(replay.value()->kernel_source("mha_with_lse_d64", 2).value(),
            "#define PTXB_HEAD_DIM 64\n" + forward_rung2.value());
  // So are the d64 and d96 backward tasks, from the d128 backward sources.
  EXPECT_EQ(replay.value()->kernel_variant("mha_bwd_d96_causal", 2)->describe(),
            "mha_bwd_d128/rung2_warp_specialized.cu with PTXB_CAUSAL=1, PTXB_HEAD_DIM=96");
  EXPECT_EQ(replay.value()->kernel_variant("mha_bwd_d64", 1)->describe(),
            "mha_bwd_d128/rung1_tma_wgmma.cu with PTXB_HEAD_DIM=64");
  // Every paper-h100 task has a kernel to replay, one self-contained file: the shared backward
  // header is inlined, no local include is left.
  auto registry = TaskRegistry::load({});
  ASSERT_TRUE(registry.ok());
  for (const Task* task : registry->list("paper-h100")) {
    auto source = replay.value()->kernel_source(task->name, 1);
    ASSERT_TRUE(source.ok()) << task->name;
    EXPECT_EQ(source->find("bwd_common.cuh\""), std::string::npos) << task->name;
  }
  EXPECT_NE(replay.value()->kernel_source("mha_bwd_d128_causal", 2)->find("float* dr_scratch("),
            std::string::npos);

  std::vector<ChatMessage> conversation = {{"system", "sys"},
                                           {"user", "# Task: mha_bwd_d128\n\nWrite it."}};
  auto first = replay.value()->complete(conversation);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const ExtractedKernel extracted = extract_kernel(first->content);
  ASSERT_TRUE(extracted.found) << extracted.no_code_reason;
  EXPECT_EQ(extracted.source, replay.value()->kernel_source("mha_bwd_d128", 1).value());
  EXPECT_NE(first->content.find("Turn 1 (replay)"), std::string::npos);
  EXPECT_GT(first->usage.prompt, 0);

  conversation.push_back({"assistant", first->content});
  conversation.push_back({"user", "feedback"});
  auto second = replay.value()->complete(conversation);
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second->content.find("Turn 2 (replay)"), std::string::npos);
  auto rung2 = replay.value()->kernel_source("mha_bwd_d128", 2);
  ASSERT_TRUE(rung2.ok());
  EXPECT_EQ(extract_kernel(second->content).source, rung2.value());
  // Past the end of the list the replay repeats its last kernel, and says so.
  conversation.push_back({"assistant", second->content});
  conversation.push_back({"user", "feedback"});
  auto third = replay.value()->complete(conversation);
  ASSERT_TRUE(third.ok());
  EXPECT_NE(third->content.find("the last one again"), std::string::npos);
  EXPECT_EQ(extract_kernel(third->content).source, rung2.value());

  auto unknown = replay.value()->complete({{"user", "# Task: no_such_task"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("no kernel for task no_such_task"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
