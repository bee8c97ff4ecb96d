#include "adapt/pretokenizer.h"

#include <cstddef>

#include "adapt/unicode_class.h"

namespace ptxb::adapt {
namespace {

// The regex strings as tokenizer.json holds them, once its JSON escapes are undone.
constexpr std::string_view kGpt2Regex =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kLlama3Regex =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The text as code points, with the byte offset of each (and of the end), so the scanner works
// on characters and the pieces are cut on bytes.
class CodePoints {
 public:
  explicit CodePoints(std::string_view text) {
    std::size_t pos = 0;
    while (pos < text.size()) {
      offsets_.push_back(pos);
      values_.push_back(next_code_point(text, pos));
    }
    offsets_.push_back(text.size());
  }
  std::size_t size() const { return values_.size(); }
  std::size_t offset(std::size_t i) const { return offsets_[i]; }
  // Past the end reads as kEnd, which no predicate accepts.
  char32_t at(std::size_t i) const { return i < values_.size() ? values_[i] : kEnd; }
  bool letter(std::size_t i) const { return i < size() && is_letter(values_[i]); }
  bool number(std::size_t i) const { return i < size() && is_number(values_[i]); }
  bool space(std::size_t i) const { return i < size() && is_whitespace(values_[i]); }
  // [^\s\p{L}\p{N}]
  bool other(std::size_t i) const {
    return i < size() && char_class(values_[i]) == CharClass::kOther;
  }
  bool line_break(std::size_t i) const { return at(i) == '\r' || at(i) == '\n'; }
  // End of the run of code points from `i` that `accept` takes.
  template <typename Accept>
  std::size_t run(std::size_t i, Accept accept) const {
    while (i < size() && accept(i)) ++i;
    return i;
  }

  static constexpr char32_t kEnd = 0xFFFFFFFF;

 private:
  std::vector<char32_t> values_;
  std::vector<std::size_t> offsets_;
};

char32_t fold_case(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c - 'A' + 'a';
  if (c == 0x017F) return 's';  // ſ folds to s in Unicode's case folding
  return c;
}

// Length in code points of the contraction at `i` ('s 't 're 've 'm 'll 'd), 0 when none.
std::size_t contraction_length(const CodePoints& text, std::size_t i, bool ignore_case) {
  if (text.at(i) != '\'') return 0;
  const auto lower = [&](std::size_t k) {
    return ignore_case ? fold_case(text.at(k)) : text.at(k);
  };
  const char32_t first = lower(i + 1), second = lower(i + 2);
  // The alternation order is 's|'t|'re|'ve|'m|'ll|'d; no alternative is a prefix of another.
  if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
  if ((first == 'r' || first == 'v') && second == 'e') return 3;
  if (first == 'l' && second == 'l') return 3;
  return 0;
}

// \s+(?!\S) then \s+ at `i` (a whitespace code point), as one decision: the greedy run backs
// off one code point when a non-space follows it, unless that leaves it empty.
std::size_t trailing_space_end(const CodePoints& text, std::size_t i) {
  const std::size_t end = text.run(i, [&](std::size_t k) { return text.space(k); });
  if (end == text.size() || end - 1 == i) return end;
  return end - 1;
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
std::size_t gpt2_match_end(const CodePoints& text, std::size_t i) {
  if (std::size_t n = contraction_length(text, i, false)) return i + n;
  // " ?X+" for each class X: the optional space is taken only when an X follows it.
  const std::size_t after_space = text.at(i) == ' ' ? i + 1 : i;
  for (auto accept : {&CodePoints::letter, &CodePoints::number, &CodePoints::other}) {
    const std::size_t start = (text.*accept)(after_space) ? after_space : i;
    if ((text.*accept)(start))
      return text.run(start, [&](std::size_t k) { return (text.*accept)(k); });
  }
  return trailing_space_end(text, i);  // only whitespace is left
}

// Qwen2 / Llama 3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}|
// ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
std::size_t qwen2_match_end(const CodePoints& text, std::size_t i, std::size_t max_digits) {
  if (std::size_t n = contraction_length(text, i, true)) return i + n;
  // [^\r\n\p{L}\p{N}]?\p{L}+ : any one non-letter, non-number, non-line-break code point
  // (a space, a tab, punctuation, a combining mark) may lead a run of letters.
  const bool can_lead =
      i < text.size() && !text.letter(i) && !text.number(i) && !text.line_break(i);
  const std::size_t letters = can_lead && text.letter(i + 1) ? i + 1 : i;
  if (text.letter(letters)) return text.run(letters, [&](std::size_t k) { return text.letter(k); });
  if (text.number(i)) {
    std::size_t end = i;
    while (end - i < max_digits && text.number(end)) ++end;
    return end;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  const std::size_t symbols = text.at(i) == ' ' && text.other(i + 1) ? i + 1 : i;
  if (text.other(symbols)) {
    const std::size_t end = text.run(symbols, [&](std::size_t k) { return text.other(k); });
    return text.run(end, [&](std::size_t k) { return text.line_break(k); });
  }
  // \s*[\r\n]+ : the greedy \s* backs off to the last line break of the whitespace run.
  const std::size_t space_end = text.run(i, [&](std::size_t k) { return text.space(k); });
  for (std::size_t k = space_end; k > i; --k)
    if (text.line_break(k - 1)) return k;
  return trailing_space_end(text, i);
}

}  // namespace

std::optional<SplitPattern> split_pattern_for_regex(std::string_view regex) {
  if (regex == kGpt2Regex) return SplitPattern::kGpt2;
  if (regex == kQwen2Regex) return SplitPattern::kQwen2;
  if (regex == kLlama3Regex) return SplitPattern::kLlama3;
  return std::nullopt;
}

std::string_view split_pattern_name(SplitPattern pattern) {
  switch (pattern) {
    case SplitPattern::kGpt2:
      return "gpt2";
    case SplitPattern::kQwen2:
      return "qwen2";
    case SplitPattern::kLlama3:
      return "llama3";
  }
  return "?";
}

void split_pieces(SplitPattern pattern, std::string_view text,
                  std::vector<std::string_view>& pieces) {
  const CodePoints points(text);
  std::size_t i = 0;
  while (i < points.size()) {
    std::size_t end = 0;
    switch (pattern) {
      case SplitPattern::kGpt2:
        end = gpt2_match_end(points, i);
        break;
      case SplitPattern::kQwen2:
        end = qwen2_match_end(points, i, 1);
        break;
      case SplitPattern::kLlama3:
        end = qwen2_match_end(points, i, 3);
        break;
    }
    // Every alternative set above matches at least one code point (the header's coverage
    // argument); the guard keeps a mistake from looping forever.
    if (end <= i) end = i + 1;
    pieces.push_back(text.substr(points.offset(i), points.offset(end) - points.offset(i)));
    i = end;
  }
}

}  // namespace ptxb::adapt
