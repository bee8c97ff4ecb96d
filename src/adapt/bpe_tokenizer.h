// Exact token counts for the SFT export's length filter (`--tokenizer FILE`, sft_record.h):
// our own reading of a Hugging Face `tokenizer.json` of a byte-level BPE model — the GPT-2,
// Qwen2/Qwen2.5/Qwen3 and Llama 3 family — and its encoder, so that no Python or tokenizer
// library has to run next to the harness. tests/adapt/bpe_tokenizer_test.cc compares the ids
// with those of the `tokenizers` library itself (testdata/adapt/tokenizer/).
//
// What encode() does, in the library's order:
//   1. added tokens (`added_tokens`: <|im_start|>, <|endoftext|>, …) are cut out first, matched
//      verbatim, leftmost and then longest, those with "normalized": false before the others
//      (their lstrip/rstrip take the whitespace beside them along), each one token with the id
//      the library assigns on loading;
//   2. the normalizer: none, or NFC, applied as the identity (below);
//   3. the pre-tokenizer splits each remaining segment: a Split with a known regex
//      (pretokenizer.h), and ByteLevel (with use_regex: the GPT-2 split; add_prefix_space:
//      a space before each segment that does not start with one);
//   4. each piece's bytes become the GPT-2 byte-to-unicode characters, whose vocab ids are
//      merged by rank, lowest first and leftmost among equals (`merges`, "a b" strings or
//      ["a", "b"] arrays), or the whole piece's id at once with ignore_merges.
// Anything else in the file that changes the ids (a WordPiece/Unigram model, a Metaspace or
// Digits pre-tokenizer, a Split with another regex or behaviour, a Lowercase normalizer,
// dropout, byte_fallback, subword prefixes, single_word added tokens) is refused with an error
// naming it: a count that is silently not the model's own is worse than the estimate.
//
// Limits: NFC is not computed: text already in NFC (what editors, compilers and models write)
// counts exactly; a decomposed accent (e + U+0301) counts as written, one or two tokens apart.
// \p{L}/\p{N} are exact only in the blocks unicode_class.h lists. The post-processor (BOS/EOS)
// and the chat template add tokens that a count of the text does not include.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapt/pretokenizer.h"
#include "core/result.h"

namespace ptxb::adapt {

// Largest tokenizer.json we read: those of current models are about 7–12 MB.
inline constexpr std::size_t kMaxTokenizerFileBytes = 64u << 20;

class BpeTokenizer {
 public:
  // Reads and checks PATH; errors name the file and the unsupported part.
  static Result<BpeTokenizer> load(const std::string& path);
  // The same from the file's text; `name` is the file name the method() reports.
  static Result<BpeTokenizer> parse(std::string_view text, const std::string& name);

  std::vector<int> encode(std::string_view text) const;
  std::size_t count(std::string_view text) const { return encode(text).size(); }

  // "tokenizer: tokenizer.json sha256 <hex of the file>", for the export manifest.
  const std::string& method() const { return method_; }
  std::size_t vocab_size() const { return vocab_.size(); }

 private:
  struct AddedToken {
    std::string content;
    int id = 0;
    bool normalized = false;  // matched after the normalizer (second pass)
    bool lstrip = false, rstrip = false;
  };
  struct Merge {
    int rank = 0;
    int result = 0;  // id of the merged token
  };
  struct Segment {
    std::string_view text;
    int added_id = -1;  // the added token's id, or -1 for text the model encodes
  };

  // The parts of tokenizer.json, each refusing what it cannot reproduce (they may throw
  // nlohmann's exceptions on a malformed file; parse() turns those into an error).
  Status read_model(const nlohmann::json& doc);
  Status read_pre_tokenizer(const nlohmann::json& doc);
  Status read_added_tokens(const nlohmann::json& doc);
  void split_added(std::vector<Segment>& segments, bool normalized) const;
  void encode_segment(std::string_view segment, std::vector<int>& ids) const;
  void encode_piece(std::string_view piece, std::vector<int>& ids) const;

  std::unordered_map<std::string, int> vocab_;
  std::unordered_map<std::uint64_t, Merge> merges_;  // (left id << 32 | right id) -> merge
  std::array<std::string, 256> byte_chars_;          // GPT-2's printable stand-in of each byte
  std::array<int, 256> byte_ids_{};                  // vocab id of each byte's stand-in, or -1
  std::vector<AddedToken> added_;                    // longest first
  std::array<bool, 256> added_first_bytes_{};        // bytes an added token can start with
  std::vector<SplitPattern> splits_;                 // Split stages, in order, before ByteLevel
  bool add_prefix_space_ = false;                    // ByteLevel's options
  bool byte_level_regex_ = false;
  bool ignore_merges_ = false;
  int unk_id_ = -1;
  bool fuse_unk_ = false;
  std::string method_;
};

}  // namespace ptxb::adapt
