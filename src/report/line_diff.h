// A line diff between two kernel sources, for the trajectory viewer's "what changed since the
// previous turn". Longest-common-subsequence over lines after trimming the common head and tail,
// which is where the edits between two turns of one trajectory usually sit.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace ptxb {

enum class DiffOp { kSame, kAdded, kRemoved };

struct DiffLine {
  DiffOp op = DiffOp::kSame;
  std::string text;
};

struct LineDiff {
  std::vector<DiffLine> lines;  // the old file's lines interleaved with the new file's
  int added = 0;
  int removed = 0;
  // The middle part (after trimming the common head and tail) exceeded the cell budget: the
  // diff is then every old middle line removed and every new one added, and says so.
  bool coarse = false;
};

// LCS cells allowed: 4M cells is a 2000 × 2000-line middle, ~4 MB of table and well under a
// second; two turns' kernels are a few hundred lines, far inside it.
inline constexpr std::size_t kMaxDiffCells = std::size_t{4} << 20;

LineDiff diff_lines(const std::string& before, const std::string& after,
                    std::size_t max_cells = kMaxDiffCells);

// Only the changed lines with `context` unchanged lines around each change; a skipped run of
// unchanged lines becomes one kSame line "… N unchanged lines".
std::vector<DiffLine> diff_hunks(const LineDiff& diff, int context = 3);

}  // namespace ptxb
