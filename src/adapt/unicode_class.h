// The character classes a byte-level BPE pre-tokenizer regex tests (\p{L}, \p{N}, \s), and
// UTF-8 decoding for its scanner (pretokenizer.h).
//
// Exact for ASCII and for whitespace (Unicode White_Space, the set Oniguruma's \s matches:
// U+0009–000D, 0020, 0085, 00A0, 1680, 2000–200A, 2028, 2029, 202F, 205F, 3000).
//
// \p{L} and \p{N} come from a small range table (unicode_class.cc, 192 ranges), not the full
// Unicode database: it matches Unicode 14's General_Category exactly in the blocks kernels,
// logs and prose use — Latin-1 and Latin Extended (A–E, Additional), IPA and the phonetic
// extensions (the subscript and superscript letters of ᵢ and Qᵀ), Greek, Cyrillic, Armenian,
// Hebrew, Arabic, Devanagari, Thai, Georgian, Hangul, the punctuation, super/subscript,
// letterlike, number-form, arrow and math blocks (U+2000–2BFF), CJK symbols, kana, CJK
// ideographs (BMP and the supplementary planes' extensions), the presentation and
// halfwidth/fullwidth forms, the math alphanumerics (U+1D400–1D7FF) — checked code point by
// code point against Python's unicodedata by testdata/adapt/tokenizer/check_unicode_classes.py.
// Limits:
//   - the letters and digits of other scripts (Bengali…Malayalam, Tibetan, Ethiopic, Cherokee,
//     Mongolian, Khmer, …) are "other" here;
//   - combining marks (\p{M}) are "other", as in Unicode, so a decomposed "e\u0301" splits
//     as the tokenizer's regex splits it;
//   - the tokenizer library may use a newer Unicode version (code points assigned after 14.0).
// A misclassified code point only moves a pre-token boundary: every byte is still counted by
// the byte-level BPE, so the count stays close (one or two tokens at each such character).
#pragma once

#include <cstddef>
#include <string_view>

namespace ptxb::adapt {

enum class CharClass { kLetter, kNumber, kWhitespace, kOther };

CharClass char_class(char32_t code_point);

inline bool is_letter(char32_t c) {
  return char_class(c) == CharClass::kLetter;
}
inline bool is_number(char32_t c) {
  return char_class(c) == CharClass::kNumber;
}
inline bool is_whitespace(char32_t c) {
  return char_class(c) == CharClass::kWhitespace;
}

// Decodes the code point at `text[pos]` and advances `pos` past it. A byte that does not start
// a valid UTF-8 sequence (never in JSON strings, which are valid UTF-8) decodes to U+FFFD and
// advances one byte, so the scanner always moves and every byte stays in some piece.
char32_t next_code_point(std::string_view text, std::size_t& pos);

}  // namespace ptxb::adapt
