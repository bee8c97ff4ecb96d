#include "adapt/bpe_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <queue>

#include <nlohmann/json.hpp>

#include "adapt/unicode_class.h"
#include "core/fs.h"
#include "core/sha256.h"

namespace ptxb::adapt {
namespace {

// The plain (std::map) JSON type, not core's ordered Json: an ordered object looks keys up by
// linear search, and a real vocab has 150,000 of them.
using TokenizerJson = nlohmann::json;

std::string utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
  return out;
}

// GPT-2's byte-to-unicode table: the printable bytes of Latin-1 stand for themselves, the
// other 68 (controls, space, NBSP, soft hyphen) for U+0100, U+0101, … in byte order, so every
// token of the vocab is a printable string.
std::array<std::string, 256> byte_level_chars() {
  std::array<std::string, 256> chars;
  char32_t next_stand_in = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    chars[b] = utf8(printable ? static_cast<char32_t>(b) : next_stand_in++);
  }
  return chars;
}

std::string type_of(const TokenizerJson& component) {
  if (!component.is_object()) return component.is_null() ? "none" : component.dump();
  return component.value("type", std::string("(no type)"));
}

// True when `key` is absent, null or `accepted`: an option left at the value that changes
// nothing.
bool null_or(const TokenizerJson& object, const char* key, const TokenizerJson& accepted) {
  return !object.contains(key) || object[key].is_null() || object[key] == accepted;
}

std::uint64_t pair_key(int left, int right) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

// The width in bytes of the code point that ends at `end` (> 0) when it is whitespace, else 0:
// an added token's lstrip walks left with it.
std::size_t whitespace_before(std::string_view text, std::size_t end) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  std::size_t pos = start;
  const char32_t c = next_code_point(text, pos);
  return pos == end && is_whitespace(c) ? end - start : 0;
}

// The width in bytes of the whitespace code point at `start`, else 0 (rstrip).
std::size_t whitespace_at(std::string_view text, std::size_t start) {
  std::size_t pos = start;
  return start < text.size() && is_whitespace(next_code_point(text, pos)) ? pos - start : 0;
}

}  // namespace

Result<BpeTokenizer> BpeTokenizer::load(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxTokenizerFileBytes));
  auto tokenizer = parse(text, std::filesystem::path(path).filename().string());
  if (!tokenizer.ok()) return tokenizer.error().with_context(path);
  return tokenizer;
}

// model: a BPE's vocab and merges, and the options that would change its ids refused.
Status BpeTokenizer::read_model(const nlohmann::json& doc) {
  const TokenizerJson& model = doc.at("model");
  if (type_of(model) != "BPE")
    return make_error("tokenizer", "model type '{}' is not supported (byte-level BPE only)",
                      type_of(model));
  // Options of the BPE model that would change the ids: refused, not ignored.
  if (!null_or(model, "dropout", 0.0) && model["dropout"].get<double>() != 0.0)
    return make_error("tokenizer", "BPE dropout is not supported (counts must be repeatable)");
  if (!null_or(model, "byte_fallback", false))
    return make_error("tokenizer", "BPE byte_fallback is not supported (byte-level BPE only)");
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (!null_or(model, affix, ""))
      return make_error("tokenizer", "BPE {} '{}' is not supported", affix,
                        model[affix].get<std::string>());
  ignore_merges_ = model.value("ignore_merges", false);
  fuse_unk_ = model.value("fuse_unk", false);

  for (const auto& [token, id] : model.at("vocab").items()) vocab_[token] = id.get<int>();
  const auto id_of = [this](const std::string& token) -> Result<int> {
    auto found = vocab_.find(token);
    if (found == vocab_.end())
      return make_error("tokenizer", "token '{}' is not in the vocab", token);
    return found->second;
  };
  int rank = 0;
  for (const TokenizerJson& merge : model.at("merges")) {
    std::string left, right;
    if (merge.is_array() && merge.size() == 2) {
      left = merge[0].get<std::string>(), right = merge[1].get<std::string>();
    } else {
      const std::string spelled = merge.get<std::string>();
      const std::size_t space = spelled.find(' ');
      if (space == std::string::npos || spelled.find(' ', space + 1) != std::string::npos)
        return make_error("tokenizer", "merge {} '{}' is not two tokens", rank, spelled);
      left = spelled.substr(0, space), right = spelled.substr(space + 1);
    }
    PTXB_ASSIGN_OR_RETURN(const int left_id, id_of(left));
    PTXB_ASSIGN_OR_RETURN(const int right_id, id_of(right));
    PTXB_ASSIGN_OR_RETURN(const int result, id_of(left + right));
    // A repeated pair takes its last rank, as in the library's map.
    merges_.insert_or_assign(pair_key(left_id, right_id), Merge{rank, result});
    ++rank;
  }
  if (model.contains("unk_token") && model["unk_token"].is_string()) {
    PTXB_ASSIGN_OR_RETURN(unk_id_, id_of(model["unk_token"].get<std::string>()));
  }
  return ok_status();
}

// normalizer and pre_tokenizer: the stages that cut the text before the model sees it.
Status BpeTokenizer::read_pre_tokenizer(const nlohmann::json& doc) {
  const TokenizerJson normalizer = doc.value("normalizer", TokenizerJson());
  if (!normalizer.is_null() && type_of(normalizer) != "NFC")
    return make_error("tokenizer", "normalizer '{}' is not supported (none or NFC)",
                      type_of(normalizer));

  const TokenizerJson pre = doc.value("pre_tokenizer", TokenizerJson());
  const TokenizerJson stages =
      type_of(pre) == "Sequence" ? pre.at("pretokenizers") : TokenizerJson::array({pre});
  bool byte_level = false;
  for (const TokenizerJson& stage : stages) {
    const std::string type = type_of(stage);
    if (byte_level)
      return make_error("tokenizer", "pre_tokenizer '{}' after ByteLevel is not supported", type);
    if (type == "ByteLevel") {
      byte_level = true;
      // The library's defaults for fields an older file leaves out.
      add_prefix_space_ = stage.value("add_prefix_space", true);
      byte_level_regex_ = stage.value("use_regex", true);
    } else if (type == "Split") {
      if (!stage.at("pattern").contains("Regex"))
        return make_error("tokenizer", "Split pattern {} is not supported (a Regex only)",
                          stage.at("pattern").dump());
      const std::string regex = stage.at("pattern").at("Regex").get<std::string>();
      const auto pattern = split_pattern_for_regex(regex);
      if (!pattern)
        return make_error("tokenizer",
                          "Split regex '{}' is not supported (the GPT-2, Qwen2 or Llama 3 "
                          "pattern, docs/adaptation.md)",
                          regex);
      if (stage.value("behavior", std::string()) != "Isolated" || stage.value("invert", false))
        return make_error("tokenizer", "Split behavior '{}'{} is not supported (Isolated)",
                          stage.value("behavior", std::string()),
                          stage.value("invert", false) ? " inverted" : "");
      splits_.push_back(*pattern);
    } else {
      return make_error("tokenizer",
                        "pre_tokenizer '{}' is not supported (ByteLevel, or a Sequence of "
                        "Split and ByteLevel: a byte-level BPE)",
                        type);
    }
  }
  if (!byte_level)
    return make_error("tokenizer", "no ByteLevel pre-tokenizer: not a byte-level BPE");
  return ok_status();
}

Status BpeTokenizer::read_added_tokens(const nlohmann::json& doc) {
  // An added token's id is not the "id" the file writes but the one the library assigns
  // when it loads the file: the vocab's id of that content, else the next id after the vocab
  // and the tokens added before it (the same ids in any file the library itself wrote).
  const int vocab_size = static_cast<int>(vocab_.size());
  int max_added_id = -1;
  for (const TokenizerJson& added : doc.value("added_tokens", TokenizerJson::array())) {
    const std::string content = added.at("content").get<std::string>();
    int id = 0;
    if (auto in_vocab = vocab_.find(content); in_vocab != vocab_.end())
      id = in_vocab->second;
    else
      id = max_added_id >= vocab_size ? max_added_id + 1 : vocab_size;
    max_added_id = std::max(max_added_id, id);
    AddedToken token{content, id, added.value("normalized", false), added.value("lstrip", false),
                     added.value("rstrip", false)};
    if (added.value("single_word", false))
      return make_error("tokenizer", "added token '{}' is single_word: not supported",
                        token.content);
    if (token.content.empty()) continue;
    added_first_bytes_[static_cast<unsigned char>(token.content[0])] = true;
    added_.push_back(std::move(token));
  }
  // Longest first: the first that matches at a position is the longest there.
  std::stable_sort(added_.begin(), added_.end(), [](const auto& a, const auto& b) {
    return a.content.size() > b.content.size();
  });
  return ok_status();
}

Result<BpeTokenizer> BpeTokenizer::parse(std::string_view text, const std::string& name) {
  BpeTokenizer t;
  t.method_ = "tokenizer: " + name + " sha256 " + sha256_hex(text);
  try {
    const TokenizerJson doc = TokenizerJson::parse(text);
    PTXB_RETURN_IF_ERROR(t.read_model(doc));
    PTXB_RETURN_IF_ERROR(t.read_pre_tokenizer(doc));
    PTXB_RETURN_IF_ERROR(t.read_added_tokens(doc));
  } catch (const TokenizerJson::exception& e) {
    return make_error("tokenizer", "not a tokenizer.json: {}", e.what());
  }
  t.byte_chars_ = byte_level_chars();
  for (int b = 0; b < 256; ++b) {
    auto found = t.vocab_.find(t.byte_chars_[b]);
    t.byte_ids_[b] = found == t.vocab_.end() ? -1 : found->second;
  }
  return t;
}

// Cuts the added tokens of one pass out of the text segments: leftmost, then longest.
void BpeTokenizer::split_added(std::vector<Segment>& segments, bool normalized) const {
  std::vector<Segment> out;
  for (const Segment& segment : segments) {
    if (segment.added_id >= 0) {
      out.push_back(segment);
      continue;
    }
    const std::string_view text = segment.text;
    std::size_t start_offset = 0, pos = 0;
    while (pos < text.size()) {
      const AddedToken* match = nullptr;
      if (added_first_bytes_[static_cast<unsigned char>(text[pos])])
        for (const AddedToken& token : added_)
          if (token.normalized == normalized && text.substr(pos).starts_with(token.content)) {
            match = &token;
            break;
          }
      if (!match) {
        ++pos;
        continue;
      }
      std::size_t start = pos, stop = pos + match->content.size();
      // lstrip / rstrip: the whitespace beside the token goes with it, not to the model.
      for (std::size_t w;
           match->lstrip && start > start_offset && (w = whitespace_before(text, start)) > 0;)
        start -= w;
      for (std::size_t w; match->rstrip && (w = whitespace_at(text, stop)) > 0;) stop += w;
      if (start > start_offset) out.push_back({text.substr(start_offset, start - start_offset)});
      out.push_back({text.substr(start, stop - start), match->id});
      start_offset = pos = stop;
    }
    if (start_offset < text.size()) out.push_back({text.substr(start_offset)});
  }
  segments = std::move(out);
}

std::vector<int> BpeTokenizer::encode(std::string_view text) const {
  std::vector<Segment> segments = {{text}};
  // Tokens matched on the raw text first, then those matched after the normalizer (which is
  // the identity here: none or NFC, bpe_tokenizer.h).
  split_added(segments, false);
  split_added(segments, true);
  std::vector<int> ids;
  for (const Segment& segment : segments) {
    if (segment.added_id >= 0)
      ids.push_back(segment.added_id);
    else
      encode_segment(segment.text, ids);
  }
  return ids;
}

void BpeTokenizer::encode_segment(std::string_view segment, std::vector<int>& ids) const {
  std::vector<std::string_view> pieces = {segment}, next;
  for (SplitPattern pattern : splits_) {
    next.clear();
    for (std::string_view piece : pieces) split_pieces(pattern, piece, next);
    pieces.swap(next);
  }
  // ByteLevel: a space before each piece (add_prefix_space), then its own GPT-2 split.
  std::vector<std::string> prefixed;
  if (add_prefix_space_) {
    prefixed.reserve(pieces.size());
    for (std::string_view& piece : pieces) {
      if (piece.empty()) continue;  // the library drops empty pieces before this
      prefixed.push_back(piece.starts_with(' ') ? std::string(piece) : " " + std::string(piece));
      piece = prefixed.back();
    }
  }
  if (byte_level_regex_) {
    next.clear();
    for (std::string_view piece : pieces) split_pieces(SplitPattern::kGpt2, piece, next);
    pieces.swap(next);
  }
  for (std::string_view piece : pieces)
    if (!piece.empty()) encode_piece(piece, ids);
}

// BPE on one piece: its bytes' ids, then the best-ranked adjacent pair merged, again and
// again; a min-heap of (rank, position) entries, the stale ones skipped when popped.
void BpeTokenizer::encode_piece(std::string_view piece, std::vector<int>& ids) const {
  if (ignore_merges_) {
    std::string word;
    for (char byte : piece) word += byte_chars_[static_cast<unsigned char>(byte)];
    if (auto found = vocab_.find(word); found != vocab_.end()) {
      ids.push_back(found->second);
      return;
    }
  }
  struct Symbol {
    int id;
    int prev, next;  // neighbours in the list of live symbols, -1 at the ends
    bool merged_away = false;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(piece.size());
  for (char byte : piece) {
    int id = byte_ids_[static_cast<unsigned char>(byte)];
    if (id < 0) {
      // A byte with no token: the unknown token (fused with a previous one under fuse_unk),
      // or nothing at all when there is none, as the library does.
      if (unk_id_ < 0 || (fuse_unk_ && !symbols.empty() && symbols.back().id == unk_id_)) continue;
      id = unk_id_;
    }
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, index - 1, -1});
    if (index > 0) symbols[index - 1].next = index;
  }
  struct Candidate {
    int rank, pos, result;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto consider = [&](int left) {
    const int right = symbols[left].next;
    if (right < 0) return;
    auto merge = merges_.find(pair_key(symbols[left].id, symbols[right].id));
    if (merge != merges_.end()) queue.push({merge->second.rank, left, merge->second.result});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.merged_away || left.next < 0) continue;
    // Stale when either side has changed since: the pair no longer makes this token.
    auto merge = merges_.find(pair_key(left.id, symbols[left.next].id));
    if (merge == merges_.end() || merge->second.result != top.result) continue;
    Symbol& right = symbols[left.next];
    right.merged_away = true;
    left.id = top.result;
    left.next = right.next;
    if (right.next >= 0) symbols[right.next].prev = top.pos;
    if (left.prev >= 0) consider(left.prev);
    consider(top.pos);
  }
  for (const Symbol& symbol : symbols)
    if (!symbol.merged_away) ids.push_back(symbol.id);
}

}  // namespace ptxb::adapt
