// The viewer's line diff: hand-worked edits between two small kernels.
#include "report/line_diff.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

std::string render_diff(const std::vector<DiffLine>& lines) {
  std::string out;
  for (const DiffLine& line : lines)
    out += (line.op == DiffOp::kAdded     ? "+"
            : line.op == DiffOp::kRemoved ? "-"
                                          : "=") +
           line.text + "\n";
  return out;
}

TEST(LineDiff, IdenticalTextsHaveNoChanges) {
  LineDiff diff = diff_lines("a\nb\n", "a\nb\n");
  EXPECT_EQ(diff.added, 0);
  EXPECT_EQ(diff.removed, 0);
  EXPECT_EQ(render_diff(diff.lines), "=a\n=b\n");
  EXPECT_EQ(render_diff(diff_hunks(diff)), "=… 2 unchanged lines\n");
}

TEST(LineDiff, ReplacedAndInsertedLinesBetweenCommonOnes) {
  // b → B, and d inserted after c: the LCS keeps a, c, e.
  LineDiff diff = diff_lines("a\nb\nc\ne\n", "a\nB\nc\nd\ne\n");
  EXPECT_EQ(diff.added, 2);
  EXPECT_EQ(diff.removed, 1);
  EXPECT_FALSE(diff.coarse);
  EXPECT_EQ(render_diff(diff.lines), "=a\n+B\n-b\n=c\n+d\n=e\n");
}

TEST(LineDiff, EmptySidesAreAllAddedOrRemoved) {
  EXPECT_EQ(render_diff(diff_lines("", "x\ny\n").lines), "+x\n+y\n");
  EXPECT_EQ(render_diff(diff_lines("x\n", "").lines), "-x\n");
}

TEST(LineDiff, HunksKeepContextAndCountSkippedLines) {
  std::string before, after;
  for (int i = 0; i < 20; ++i) {
    before += "line " + std::to_string(i) + "\n";
    after += (i == 10 ? std::string("changed") : "line " + std::to_string(i)) + "\n";
  }
  LineDiff diff = diff_lines(before, after);
  EXPECT_EQ(render_diff(diff_hunks(diff, 2)),
            "=… 8 unchanged lines\n=line 8\n=line 9\n+changed\n-line 10\n=line 11\n=line 12\n"
            "=… 7 unchanged lines\n");
}

TEST(LineDiff, OverTheCellBudgetTheMiddleIsReplacedWhole) {
  // Common head "h" and tail "t"; the 3 × 3 middle needs 16 cells, over a budget of 10.
  LineDiff diff = diff_lines("h\na\nb\nc\nt\n", "h\nc\nb\na\nt\n", 10);
  EXPECT_TRUE(diff.coarse);
  EXPECT_EQ(render_diff(diff.lines), "=h\n-a\n-b\n-c\n+c\n+b\n+a\n=t\n");
  EXPECT_FALSE(diff_lines("h\na\nb\nc\nt\n", "h\nc\nb\na\nt\n").coarse);
}

}  // namespace
}  // namespace ptxb
