// JSON round trips of the evaluator's result pieces that cross the supervisor -> CLI boundary.
#include <gtest/gtest.h>

#include "eval/eval_types.h"

namespace ptxb {
namespace {

TEST(OutputCheckJson, RoundTripsEveryCountIncludingCrossCheckRescues) {
  OutputCheck c;
  c.output = "dK";
  c.trial = 1;
  c.set = 0;
  c.num_elements = 100663296;
  c.num_failing = 0;
  c.num_matched_cross_only = 3;
  c.max_abs_error = 0.015625;
  c.num_equal_poison = 2;
  const Json j = c.to_json();
  EXPECT_EQ(j["num_matched_cross_only"], 3);
  auto parsed = OutputCheck::from_json(j);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const OutputCheck back = *parsed;
  EXPECT_EQ(back.output, "dK");
  EXPECT_EQ(back.num_matched_cross_only, 3);
  EXPECT_EQ(back.num_equal_poison, 2);
  EXPECT_DOUBLE_EQ(back.max_abs_error, 0.015625);
  EXPECT_TRUE(back.passed());
}

TEST(OutputCheckJson, OlderResultsWithoutTheCrossCountReadAsZero) {
  Json j = OutputCheck{}.to_json();
  j.erase("num_matched_cross_only");
  auto parsed = OutputCheck::from_json(j);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->num_matched_cross_only, 0);
}

}  // namespace
}  // namespace ptxb
