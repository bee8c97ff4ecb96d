// The pre-tokenizer splits of byte-level BPE tokenizers, as hand-written scanners: std::regex
// has no \p{L}/\p{N} classes and no lookahead. Each scanner reproduces, match for match, what
// Oniguruma (the engine of Hugging Face `tokenizers`) finds with one of these patterns, in
// their leftmost-first alternation order and with their backtracking:
//
//   kGpt2    's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//            (GPT-2; the ByteLevel pre-tokenizer's own split when its use_regex is true)
//   kQwen2   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
//            ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//            (Qwen2, Qwen2.5, Qwen3: one digit per piece)
//   kLlama3  the same with \p{N}{1,3} (GPT-4's cl100k, Llama 3: up to three digits a piece)
//
// Every pattern matches at every position (a letter, a number, whitespace or anything else
// each have an alternative), so the pieces are contiguous and cover the text: no byte is lost.
// Character classes come from unicode_class.h, with its limits outside the common blocks.
// (?i) folds as Unicode does: 'S and 'ſ (U+017F LATIN SMALL LETTER LONG S) match 's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxb::adapt {

enum class SplitPattern { kGpt2, kQwen2, kLlama3 };

// The pattern a tokenizer.json regex string spells (after JSON unescaping), or nullopt for any
// other regex: the caller reports it, since an unknown split cannot be counted exactly.
std::optional<SplitPattern> split_pattern_for_regex(std::string_view regex);
std::string_view split_pattern_name(SplitPattern pattern);

// Appends the pieces of `text` (views into it, in order, together exactly `text`) to `pieces`.
void split_pieces(SplitPattern pattern, std::string_view text,
                  std::vector<std::string_view>& pieces);

}  // namespace ptxb::adapt
