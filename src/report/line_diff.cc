#include "report/line_diff.h"

#include <algorithm>

#include "core/strings.h"

namespace ptxb {

LineDiff diff_lines(const std::string& before, const std::string& after, std::size_t max_cells) {
  std::vector<std::string> a = split_lines(before), b = split_lines(after);
  std::size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  std::size_t tail = 0;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
    ++tail;
  std::size_t n = a.size() - head - tail, m = b.size() - head - tail;

  LineDiff diff;
  auto emit = [&](DiffOp op, const std::string& text) {
    diff.lines.push_back({op, text});
    diff.added += op == DiffOp::kAdded;
    diff.removed += op == DiffOp::kRemoved;
  };
  for (std::size_t i = 0; i < head; ++i) emit(DiffOp::kSame, a[i]);
  if ((n + 1) * (m + 1) > max_cells) {
    diff.coarse = true;
    for (std::size_t i = 0; i < n; ++i) emit(DiffOp::kRemoved, a[head + i]);
    for (std::size_t j = 0; j < m; ++j) emit(DiffOp::kAdded, b[head + j]);
  } else {
    // lcs[i][j]: the LCS length of the middles' suffixes from i and j.
    std::vector<int> lcs((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> int& { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;)
      for (std::size_t j = m; j-- > 0;)
        at(i, j) = a[head + i] == b[head + j] ? at(i + 1, j + 1) + 1
                                              : std::max(at(i + 1, j), at(i, j + 1));
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && a[head + i] == b[head + j]) {
        emit(DiffOp::kSame, a[head + i]);
        ++i, ++j;
      } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
        emit(DiffOp::kAdded, b[head + j++]);
      } else {
        emit(DiffOp::kRemoved, a[head + i++]);
      }
    }
  }
  for (std::size_t i = a.size() - tail; i < a.size(); ++i) emit(DiffOp::kSame, a[i]);
  return diff;
}

std::vector<DiffLine> diff_hunks(const LineDiff& diff, int context) {
  const std::vector<DiffLine>& lines = diff.lines;
  std::vector<bool> keep(lines.size(), false);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].op == DiffOp::kSame) continue;
    std::size_t from = i >= static_cast<std::size_t>(context) ? i - context : 0;
    std::size_t to = std::min(lines.size(), i + context + 1);
    for (std::size_t k = from; k < to; ++k) keep[k] = true;
  }
  std::vector<DiffLine> out;
  std::size_t skipped = 0;
  auto flush = [&] {
    if (skipped) out.push_back({DiffOp::kSame, "… " + count_noun(skipped, "unchanged line")});
    skipped = 0;
  };
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!keep[i]) {
      ++skipped;
      continue;
    }
    flush();
    out.push_back(lines[i]);
  }
  flush();
  return out;
}

}  // namespace ptxb
