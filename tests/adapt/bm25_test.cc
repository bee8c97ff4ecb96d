// BM25 against a case computed by hand (bm25.h's formula, k1 = 1.2, b = 0.75).
#include <gtest/gtest.h>

#include <cmath>

#include "adapt/bm25.h"
#include "adapt/source_tokens.h"

namespace ptxb::adapt {
namespace {

// D0 = {a, b}, D1 = {a, c, c}, D2 = {d}: N = 3, avgdl = 2.
//   idf(c) = ln(1 + 2.5/1.5) = 0.980829, idf(a) = ln(1 + 1.5/2.5) = 0.470004
//   D1 length factor 1 − 0.75 + 0.75·3/2 = 1.375
//   score(D1, {c})    = idf(c)·2·2.2/(2 + 1.2·1.375)            = 1.182369
//   score(D1, {a, c}) = idf(a)·2.2/(1 + 1.65) + 1.182369        = 1.572561
//   score(D0, {a, c}) = idf(a)·2.2/(1 + 1.2·1)                  = 0.470004
Bm25Index hand_index() {
  Bm25Index index;
  index.add({"a", "b"});
  index.add({"a", "c", "c"});
  index.add({"d"});
  return index;
}

TEST(Bm25, MatchesTheHandComputedScores) {
  const Bm25Index index = hand_index();
  EXPECT_NEAR(index.idf("c"), 0.980829, 1e-6);
  EXPECT_NEAR(index.idf("a"), 0.470004, 1e-6);
  EXPECT_NEAR(index.score(1, {"c"}), 1.182369, 1e-6);
  EXPECT_NEAR(index.score(1, {"a", "c"}), 1.572561, 1e-6);
  EXPECT_NEAR(index.score(0, {"a", "c"}), 0.470004, 1e-6);
  EXPECT_EQ(index.score(2, {"a", "c"}), 0.0);
}

TEST(Bm25, RepeatedQueryTermsCountOnce) {
  const Bm25Index index = hand_index();
  EXPECT_DOUBLE_EQ(index.score(1, {"c", "c", "c"}), index.score(1, {"c"}));
}

TEST(Bm25, TopKRanksFiltersAndDropsZeroScores) {
  const Bm25Index index = hand_index();
  auto hits = index.top_k({"a", "c"}, 5);
  ASSERT_EQ(hits.size(), 2u);  // D2 shares no term
  EXPECT_EQ(hits[0].document, 1u);
  EXPECT_EQ(hits[1].document, 0u);
  auto one = index.top_k({"a", "c"}, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].document, 1u);
  auto only_d0 = index.top_k({"a", "c"}, 5, [](std::size_t i) { return i == 0; });
  ASSERT_EQ(only_d0.size(), 1u);
  EXPECT_EQ(only_d0[0].document, 0u);
}

TEST(Bm25, IndexesIdentifiersOfCommentStrippedSource) {
  // The comment's words are not terms: a query for "swizzle" finds only the kernel whose code
  // uses it.
  Bm25Index index;
  index.add(identifier_tokens("// swizzle here\nint tile = 0;"));
  index.add(identifier_tokens("int swizzle = tile;"));
  auto hits = index.top_k(identifier_tokens("swizzle"), 5);
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].document, 1u);
}

}  // namespace
}  // namespace ptxb::adapt
