// Turn records and run directories: parsing, validation, round trip, loading several runs.
#include <gtest/gtest.h>

#include "core/fs.h"
#include "metrics/turn_record.h"

namespace ptxb {
namespace {

const std::string kRuns = std::string(PTXB_TESTDATA_DIR) + "/runs";

Json minimal_record() {
  return Json::parse(R"({"model":"m","arch":"sm_90a","definition":"d","workload":"w",
                         "variant":"v","trajectory":"t0","turn":1,"status":"PASSED",
                         "speedup":1.25,"target_instructions":"dynamic_present"})");
}

TEST(MetricsTurnRecord, RoundTripKeepsEveryField) {
  Json json = minimal_record();
  json["tokens"] = {{"prompt", 10}, {"completion", 20}, {"reasoning", 5}};
  json["wall_s"] = {{"model", 1.5}, {"eval", 2.5}};
  auto record = TurnRecord::from_json(json);
  ASSERT_TRUE(record.ok()) << record.error().message;
  EXPECT_TRUE(record->correct());
  EXPECT_EQ(record->workload_name, "w");  // defaults to the workload uuid
  auto again = TurnRecord::from_json(record->to_json());
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->to_json(), record->to_json());
  EXPECT_EQ(again->tokens.reasoning, 5);
  EXPECT_EQ(again->eval_wall_s, 2.5);
  EXPECT_EQ(again->speedup, 1.25);
}

TEST(MetricsTurnRecord, SpeedupIntervalRoundTripsAndIsChecked) {
  Json json = minimal_record();
  EXPECT_FALSE(TurnRecord::from_json(json)->to_json().contains("speedup_interval"));
  json["speedup_interval"] = {1.2, 1.3};
  auto record = TurnRecord::from_json(json);
  ASSERT_TRUE(record.ok()) << record.error().message;
  EXPECT_EQ(record->speedup_low, 1.2);
  EXPECT_EQ(record->speedup_high, 1.3);
  EXPECT_EQ(record->to_json()["speedup_interval"], json["speedup_interval"]);
  json["speedup_interval"] = {1.3, 1.2};
  EXPECT_FALSE(TurnRecord::from_json(json).ok());
  json["speedup_interval"] = {1.3};
  EXPECT_FALSE(TurnRecord::from_json(json).ok());
}

TEST(MetricsTurnRecord, NoCodeHasNoStatusAndRoundTrips) {
  Json json = minimal_record();
  json["status"] = "NO_CODE";
  json["speedup"] = nullptr;
  json["no_code_reason"] = "no fenced code block";
  auto record = TurnRecord::from_json(json);
  ASSERT_TRUE(record.ok()) << record.error().message;
  EXPECT_FALSE(record->kernel_present);
  EXPECT_FALSE(record->status.has_value());
  EXPECT_EQ(record->status_name(), "NO_CODE");
  auto again = TurnRecord::from_json(record->to_json());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->no_code_reason, "no fenced code block");
}

TEST(MetricsTurnRecord, RejectsBadFieldsNamingThem) {
  struct Case {
    const char* field;
    Json value;
    const char* expected;
  };
  std::vector<Case> cases = {
      {"turn", 0, "$.turn"},
      {"status", "ALMOST_PASSED", "$.status"},
      {"kernel_present", false, "$.kernel_present"},  // contradicts PASSED
      {"speedup", -1, "$.speedup"},
      {"target_instructions", "present", "$.target_instructions"},
      {"model", "", "$.model"},
      {"tokens", Json{{"reasoning", -3}}, "$.tokens.reasoning"},
  };
  for (const Case& test : cases) {
    Json json = minimal_record();
    json[test.field] = test.value;
    auto record = TurnRecord::from_json(json);
    ASSERT_FALSE(record.ok()) << test.field;
    EXPECT_NE(record.error().message.find(test.expected), std::string::npos)
        << record.error().message;
  }
}

TEST(MetricsTurnRecord, ParseErrorsNameFileAndLine) {
  std::string text = minimal_record().dump() + "\n\n{\"model\":\"m\"}\n";
  auto records = parse_turns_jsonl(text, "run/turns.jsonl");
  ASSERT_FALSE(records.ok());
  EXPECT_NE(records.error().message.find("run/turns.jsonl:3"), std::string::npos)
      << records.error().message;
}

TEST(MetricsRunDir, LoadsSeveralRunsWithDeclaredEmptyTrajectory) {
  auto trajectories = load_run_dirs({kRuns + "/golden_gemm", kRuns + "/golden_mha"});
  ASSERT_TRUE(trajectories.ok()) << trajectories.error().message;
  // gemm: no-hint t0, t1; cluster-multicast t0, t1 (declared, no turns), t2. mha: t0, t1.
  ASSERT_EQ(trajectories->size(), 7u);
  int empty = 0;
  for (const Trajectory& trajectory : *trajectories) {
    if (trajectory.turns.empty()) {
      ++empty;
      EXPECT_EQ(trajectory.key.variant, "cluster-multicast");
      EXPECT_EQ(trajectory.key.trajectory, "t1");
    }
    for (std::size_t i = 1; i < trajectory.turns.size(); ++i)  // sorted by index
      EXPECT_LT(trajectory.turns[i - 1].turn, trajectory.turns[i].turn);
  }
  EXPECT_EQ(empty, 1);
}

TEST(MetricsRunDir, DuplicateTurnAndMissingFileAreErrors) {
  auto missing = load_run_dirs({kRuns + "/no_such_run"});
  EXPECT_FALSE(missing.ok());
  // The same run twice repeats every (trajectory, turn).
  auto duplicate = load_run_dirs({kRuns + "/golden_mha", kRuns + "/golden_mha"});
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.error().message.find("twice"), std::string::npos)
      << duplicate.error().message;
}

}  // namespace
}  // namespace ptxb
