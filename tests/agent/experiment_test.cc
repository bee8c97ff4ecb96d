// Experiment configs and plans: JSON-path errors, stable trajectory ids, the paper's protocol
// from the shipped example, and what may change when a run is resumed.
#include <gtest/gtest.h>

#include "agent/experiment.h"
#include "core/fs.h"

namespace ptxb {
namespace {

class Experiment : public ::testing::Test {
 protected:
  void SetUp() override {
    auto registry = TaskRegistry::load({});
    ASSERT_TRUE(registry.ok());
    registry_.emplace(std::move(registry).value());
    auto packs = PackLibrary::load(default_packs_dir().value());
    ASSERT_TRUE(packs.ok());
    packs_.emplace(std::move(packs).value());
  }
  std::optional<TaskRegistry> registry_;
  std::optional<PackLibrary> packs_;
};

TEST_F(Experiment, TheShippedExampleIsThePapersProtocol) {
  auto json =
      read_json_file(std::string(PTXB_SOURCE_DIR) + "/examples/experiments/paper-h100.json");
  ASSERT_TRUE(json.ok()) << json.error().message;
  auto config = ExperimentConfig::from_json(json.value(), "paper-h100.json");
  ASSERT_TRUE(config.ok()) << config.error().message;
  EXPECT_EQ(config->models.size(), 4u);
  EXPECT_FALSE(config->early_stop_speedup);
  auto plan = make_plan(config.value(), *registry_, *packs_);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  // 4 models × 5 tasks × 3 variants × 4 trajectories.
  EXPECT_EQ(plan->trajectories.size(), 240u);
  const TrajectoryPlan& first = plan->trajectories.front();
  EXPECT_EQ(first.id, "claude-opus__gemm_n7168_k5120__base__t0");
  EXPECT_EQ(first.key.workload, "94920358-01a8-4c5b-9209-3103fd490e94");
  EXPECT_EQ(first.workload_name, "gemm_n7168_k5120_M8192");
  EXPECT_EQ(plan->trajectories[1].id, "claude-opus__gemm_n7168_k5120__base__t1");
  EXPECT_EQ(plan->trajectories[4].variant, "base+cluster_multicast");
}

TEST_F(Experiment, ErrorsNameFileAndJsonPath) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"models": [], "suite": "paper-h100", "turnz": 8})", "exp.json: $.turnz: unknown field"},
      {R"({"models": [{"api": "openai"}]})", "exp.json: $.models[0].model: missing"},
      {R"({"models": [{"api": "replay"}, {"api": "replay"}]})",
       "exp.json: $.models[1].name: \"replay\" is used twice"},
      {R"({"suite": "paper-h100", "tasks": ["x"]})",
       "exp.json: $: give either \"suite\" or \"tasks\""},
      {R"({"tasks": [""]})", "exp.json: $.tasks[0]: expected a non-empty string"},
      {R"({"turns": 0})", "exp.json: $.turns: expected an integer from 1 to 1000"},
      {R"({"concurrency": {"gpus": 2}})", "exp.json: $.concurrency.gpus: unknown field"},
      {R"({"early_stop_speedup": -1})",
       "exp.json: $.early_stop_speedup: expected a positive number"},
      {R"({"eval": {"trials": 1000}})", "exp.json: $.eval: eval options: trials must be"},
  };
  for (const auto& [text, expected] : cases) {
    auto config = ExperimentConfig::from_json(Json::parse(text), "exp.json");
    ASSERT_FALSE(config.ok()) << text;
    EXPECT_NE(config.error().message.find(expected), std::string::npos) << config.error().message;
  }
}

TEST_F(Experiment, PlanChecksTasksSuitesAndVariants) {
  ExperimentConfig config;
  config.models = {ModelConfig::from_shortcut("replay").value()};
  config.suite = "no-such-suite";
  EXPECT_NE(make_plan(config, *registry_, *packs_).error().message.find("has no tasks"),
            std::string::npos);
  config.suite.clear();
  config.tasks = {"gemm_n7168_k512"};
  EXPECT_NE(make_plan(config, *registry_, *packs_).error().message.find("gemm_n7168_k5120"),
            std::string::npos);
  config.tasks = {"gemm_n7168_k5120"};
  config.variants = {"base", "params_only"};
  config.trajectories = 2;
  auto plan = make_plan(config, *registry_, *packs_);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->trajectories.size(), 4u);
  EXPECT_EQ(plan->trajectories[3].id, "replay__gemm_n7168_k5120__params_only__t1");
}

TEST_F(Experiment, IdsAreStableAndFileSafe) {
  EXPECT_EQ(trajectory_id("openai/gpt-5:high", "gemm", "base+warp_specialization", 3),
            "openai_gpt-5_high__gemm__base+warp_specialization__t3");
  EXPECT_EQ(slug(".hidden"), "_.hidden");
}

TEST_F(Experiment, EndpointsAndConcurrencyMayChangeOnResumeButNotWhatIsMeasured) {
  ExperimentConfig config;
  config.models = {ModelConfig::from_shortcut("vllm:m@http://a:1/v1").value()};
  config.tasks = {"gemm_n7168_k5120"};
  const Json identity = make_plan(config, *registry_, *packs_).value().identity();
  config.models[0].base_url = "http://b:2/v1";
  config.models[0].timeout_seconds = 5;
  config.concurrency.model = 1;
  EXPECT_EQ(make_plan(config, *registry_, *packs_).value().identity(), identity);
  config.models[0].temperature = 0.1;
  EXPECT_EQ(
      first_json_difference(identity, make_plan(config, *registry_, *packs_).value().identity()),
      "$.models[0].temperature: null vs 0.1");
}

}  // namespace
}  // namespace ptxb
