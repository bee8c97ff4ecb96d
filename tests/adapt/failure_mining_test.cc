// `fixit mine`'s selection: statuses, early turns first, round-robin over error types under a
// per-task cap, dedup by canonical source, and a skip reason for every turn not taken.
#include <gtest/gtest.h>

#include "adapt/failure_mining.h"
#include "core/fs.h"
#include "run_dir_fixture.h"

namespace ptxb::adapt {
namespace {

using testing::FixtureTurn;

class Mining : public ::testing::Test {
 protected:
  void SetUp() override { tmp_ = make_temp_directory("ptxb-mine").value(); }
  void TearDown() override { remove_tree(tmp_); }

  std::string run(const std::vector<FixtureTurn>& turns) {
    const std::string root = tmp_ + "/run";
    testing::write_fixture_run(root, "gemm_n7168_k5120", turns);
    return root;
  }
  std::string tmp_;
};

std::string kernel(int n) {
  return "void run() { int value = " + std::to_string(n) + "; }\n";
}

std::vector<FixtureTurn> mixed_turns() {
  return {{"t0", 1, "COMPILE_ERROR", kernel(1)},
          {"t0", 2, "COMPILE_ERROR", kernel(2)},
          {"t0", 3, "PASSED", kernel(3)},
          {"t1", 1, "INCORRECT_NUMERICAL", kernel(4)},
          {"t1", 2, "REWARD_HACK", kernel(5)},
          {"t1", 3, "INFRA_ERROR", kernel(6)},
          {"t2", 1, "TIMEOUT", kernel(7)},
          {"t2", 2, "FORBIDDEN", kernel(8)},
          {"t2", 3, "COMPILE_ERROR", "void run() { int renamed = 1; }"},  // = kernel(1)
          {"t3", 5, "RUNTIME_ERROR", kernel(9)}};
}

TEST(MiningStatus, ErrorTypes) {
  EXPECT_EQ(error_type_of("COMPILE_ERROR"), "compile");
  EXPECT_EQ(error_type_of("INCORRECT_SHAPE"), "numerical");
  EXPECT_EQ(error_type_of("MEMORY_ERROR"), "memory");
  EXPECT_EQ(error_type_of("REWARD_HACK"), "");
  EXPECT_EQ(error_type_of("INFRA_ERROR"), "");
  EXPECT_EQ(error_type_of("FORBIDDEN"), "");
}

TEST_F(Mining, TakesRepairableFailuresWithKernelAndFeedback) {
  auto mined = mine_failures({run(mixed_turns())}, {});
  ASSERT_TRUE(mined.ok()) << mined.error().message;
  std::vector<std::string> ids;
  for (const auto& f : mined->taken) ids.push_back(f.id);
  // Round-robin over types (compile, numerical, runtime, timeout), earliest turn of each first.
  EXPECT_EQ(ids, (std::vector<std::string>{"student__gemm_n7168_k5120__base__t0__turn1",
                                           "student__gemm_n7168_k5120__base__t1__turn1",
                                           "student__gemm_n7168_k5120__base__t3__turn5",
                                           "student__gemm_n7168_k5120__base__t2__turn1",
                                           "student__gemm_n7168_k5120__base__t0__turn2"}));
  const MinedFailure& first = mined->taken.front();
  EXPECT_EQ(first.kernel, kernel(1));
  EXPECT_EQ(first.feedback, "FEEDBACK COMPILE_ERROR of t0");
  EXPECT_EQ(first.system_prompt, "SYSTEM gemm_n7168_k5120");
  EXPECT_EQ(first.error_type, "compile");
  const Json& counts = mined->manifest["counts"];
  EXPECT_EQ(counts["scanned_turns"], 10);
  EXPECT_EQ(counts["taken"], 5);
  EXPECT_EQ(counts["skipped_by_reason"]["passed"], 1);
  EXPECT_EQ(counts["skipped_by_reason"]["status_never_mined"], 3);  // hack, infra, forbidden
  EXPECT_EQ(counts["skipped_by_reason"]["duplicate_source"], 1);
  // The round trip of failures.jsonl.
  auto back = MinedFailure::from_json(first.to_json(), "x");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->to_json(), first.to_json());
}

TEST_F(Mining, CapTurnLimitAndTypeFilter) {
  MiningOptions options;
  options.per_task_cap = 2;
  options.max_source_turn = 4;
  auto mined = mine_failures({run(mixed_turns())}, options);
  ASSERT_TRUE(mined.ok());
  ASSERT_EQ(mined->taken.size(), 2u);
  EXPECT_EQ(mined->taken[0].error_type, "compile");
  EXPECT_EQ(mined->taken[1].error_type, "numerical");
  EXPECT_EQ(mined->manifest["counts"]["skipped_by_reason"]["after_max_source_turn"], 1);
  EXPECT_EQ(mined->manifest["counts"]["skipped_by_reason"]["over_per_task_cap"], 2);

  MiningOptions only_timeout;
  only_timeout.error_types = {"timeout"};
  auto timeouts = mine_failures({run(mixed_turns())}, only_timeout);
  ASSERT_TRUE(timeouts.ok());
  ASSERT_EQ(timeouts->taken.size(), 1u);
  EXPECT_EQ(timeouts->taken[0].status, "TIMEOUT");

  MiningOptions bad;
  bad.error_types = {"integrity"};
  auto refused = mine_failures({run(mixed_turns())}, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "usage");
}

TEST_F(Mining, DeterministicAcrossRuns) {
  auto a = mine_failures({run(mixed_turns())}, {});
  auto b = mine_failures({run(mixed_turns())}, {});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->manifest, b->manifest);
}

}  // namespace
}  // namespace ptxb::adapt
