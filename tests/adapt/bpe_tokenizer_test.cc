// The byte-level BPE tokenizer of `export --tokenizer` against the Hugging Face `tokenizers`
// library: testdata/adapt/tokenizer/tokenizer.json (a small Qwen2-shaped BPE the library
// trained) and golden_ids.json (the library's ids for 24 varied strings under it and under
// pre-tokenizer variants; make_tokenizer.py made both). The ids must be equal, every one. Then
// the pre-tokenizer scanners on hand-checked splits, and every unsupported part of a
// tokenizer.json refused with its name.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "adapt/bpe_tokenizer.h"
#include "adapt/pretokenizer.h"
#include "adapt/unicode_class.h"
#include "core/fs.h"
#include "core/sha256.h"

namespace ptxb::adapt {
namespace {

const std::string kDir = std::string(PTXB_TESTDATA_DIR) + "/adapt/tokenizer/";

nlohmann::json read_testdata(const std::string& name) {
  return nlohmann::json::parse(read_file(kDir + name, 1u << 20).value());
}

// The test tokenizer with one part replaced, parsed from text.
Result<BpeTokenizer> edited(const std::string& json_pointer, const nlohmann::json& value) {
  nlohmann::json doc = read_testdata("tokenizer.json");
  doc[nlohmann::json::json_pointer(json_pointer)] = value;
  return BpeTokenizer::parse(doc.dump(), "edited.json");
}

std::vector<std::string> pieces(SplitPattern pattern, std::string_view text) {
  std::vector<std::string_view> views;
  split_pieces(pattern, text, views);
  return {views.begin(), views.end()};
}

TEST(BpeTokenizer, IdsEqualTheTokenizersLibrary) {
  const nlohmann::json golden = read_testdata("golden_ids.json");
  ASSERT_EQ(golden["cases"].size(), 24u);
  for (const auto& [variant, pre_tokenizer] : golden["variants"].items()) {
    auto tokenizer = edited("/pre_tokenizer", pre_tokenizer);
    ASSERT_TRUE(tokenizer.ok()) << variant << ": " << tokenizer.error().message;
    for (const nlohmann::json& c : golden["cases"]) {
      const std::string text = c["text"];
      EXPECT_EQ(tokenizer->encode(text), c["ids"][variant].get<std::vector<int>>())
          << variant << ": " << nlohmann::json(text).dump();
    }
  }
}

TEST(BpeTokenizer, LoadsTheFileAndNamesItByItsHash) {
  auto tokenizer = BpeTokenizer::load(kDir + "tokenizer.json");
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
  EXPECT_EQ(tokenizer->vocab_size(), 2000u);
  EXPECT_EQ(tokenizer->method(),
            "tokenizer: tokenizer.json sha256 " +
                sha256_hex(read_file(kDir + "tokenizer.json", 1u << 20).value()));
  // Special tokens are whole tokens; the text around them is encoded on its own.
  EXPECT_EQ(tokenizer->encode("<|im_start|>"), std::vector<int>{1});
  EXPECT_EQ(tokenizer->count("<|im_end|><|endoftext|>"), 2u);
  EXPECT_EQ(tokenizer->count(""), 0u);
  auto missing = BpeTokenizer::load(kDir + "no-such-tokenizer.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no-such-tokenizer.json"), std::string::npos);
}

TEST(BpeTokenizer, MergesAsStringsEqualMergesAsArrays) {
  nlohmann::json merges = nlohmann::json::array();
  for (const nlohmann::json& pair : read_testdata("tokenizer.json")["model"]["merges"])
    merges.push_back(pair[0].get<std::string>() + " " + pair[1].get<std::string>());
  auto as_strings = edited("/model/merges", merges);
  ASSERT_TRUE(as_strings.ok()) << as_strings.error().message;
  for (const nlohmann::json& c : read_testdata("golden_ids.json")["cases"])
    EXPECT_EQ(as_strings->encode(c["text"].get<std::string>()),
              c["ids"]["qwen2"].get<std::vector<int>>());
}

TEST(BpeTokenizer, AddedTokenStripsTheWhitespaceBesideIt) {
  const nlohmann::json stripped = {
      {"id", 1},        {"content", "<|im_start|>"}, {"single_word", false}, {"lstrip", true},
      {"rstrip", true}, {"normalized", false},       {"special", true}};
  auto tokenizer = edited("/added_tokens/1", stripped);
  ASSERT_TRUE(tokenizer.ok()) << tokenizer.error().message;
  auto plain = BpeTokenizer::load(kDir + "tokenizer.json");
  std::vector<int> expected = plain->encode("a");
  expected.push_back(1);
  for (int id : plain->encode("b")) expected.push_back(id);
  EXPECT_EQ(tokenizer->encode("a \t<|im_start|>\n b"), expected);
}

TEST(BpeTokenizer, RefusesWhatItCannotCountExactly) {
  const auto refused = [](const std::string& pointer, const nlohmann::json& value) {
    auto tokenizer = edited(pointer, value);
    return tokenizer.ok() ? std::string("(accepted)") : tokenizer.error().message;
  };
  EXPECT_NE(refused("/model/type", "WordPiece").find("model type 'WordPiece' is not supported"),
            std::string::npos);
  EXPECT_NE(refused("/pre_tokenizer", {{"type", "Metaspace"}, {"replacement", "_"}})
                .find("pre_tokenizer 'Metaspace' is not supported"),
            std::string::npos);
  EXPECT_NE(refused("/pre_tokenizer/pretokenizers/0/pattern", {{"Regex", "\\w+|\\s+"}})
                .find("Split regex '\\w+|\\s+' is not supported"),
            std::string::npos);
  EXPECT_NE(refused("/pre_tokenizer/pretokenizers/0/behavior", "Removed").find("Removed"),
            std::string::npos);
  EXPECT_NE(refused("/pre_tokenizer/pretokenizers/1", {{"type", "Digits"}}).find("'Digits'"),
            std::string::npos);
  EXPECT_NE(refused("/pre_tokenizer", nlohmann::json::parse(R"({"type": "Sequence",
              "pretokenizers": [{"type": "Split", "pattern": {"Regex": "\\s+"},
              "behavior": "Isolated", "invert": false}]})"))
                .find("Split regex"),
            std::string::npos);
  EXPECT_NE(refused("/pre_tokenizer/pretokenizers", nlohmann::json::array())
                .find("no ByteLevel pre-tokenizer"),
            std::string::npos);
  EXPECT_NE(refused("/normalizer", {{"type", "Lowercase"}}).find("normalizer 'Lowercase'"),
            std::string::npos);
  EXPECT_NE(refused("/model/byte_fallback", true).find("byte_fallback"), std::string::npos);
  EXPECT_NE(refused("/model/dropout", 0.1).find("dropout"), std::string::npos);
  EXPECT_NE(refused("/model/continuing_subword_prefix", "##").find("'##'"), std::string::npos);
  EXPECT_NE(refused("/added_tokens/0/single_word", true).find("single_word"), std::string::npos);
  EXPECT_NE(refused("/model/merges/0", "Ġ").find("not two tokens"), std::string::npos);
  EXPECT_NE(refused("/model/merges/0", {"Ġ", "no-such-token"}).find("'no-such-token'"),
            std::string::npos);
  auto not_json = BpeTokenizer::parse("{\"model\": ", "broken.json");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.error().message.find("not a tokenizer.json"), std::string::npos);
}

// Splits checked against the library's own pre_tokenize_str (and the regex by hand).
TEST(Pretokenizer, ScannersSplitAsTheRegexes) {
  const std::string text = "We're  here\r\n\r\n  x12";
  EXPECT_EQ(pieces(SplitPattern::kQwen2, text),
            (std::vector<std::string>{"We", "'re", " ", " here", "\r\n\r\n", " ", " x", "1", "2"}));
  EXPECT_EQ(pieces(SplitPattern::kLlama3, text),
            (std::vector<std::string>{"We", "'re", " ", " here", "\r\n\r\n", " ", " x", "12"}));
  EXPECT_EQ(pieces(SplitPattern::kGpt2, text),
            (std::vector<std::string>{"We", "'re", " ", " here", "\r\n\r\n ", " x", "12"}));
  // (?i) folds ſ to s; a symbol run keeps its line breaks; "(" leads the letters after it.
  EXPECT_EQ(pieces(SplitPattern::kQwen2, "it'\u017f x'S (foo) });\n\n}\r\n"),
            (std::vector<std::string>{"it", "'\u017f", " x", "'S", " (", "foo", ")", " });\n\n",
                                      "}\r\n"}));
  EXPECT_EQ(pieces(SplitPattern::kGpt2, "x'S"), (std::vector<std::string>{"x", "'", "S"}));
  EXPECT_TRUE(pieces(SplitPattern::kQwen2, "").empty());
  EXPECT_EQ(split_pattern_for_regex("\\s+"), std::nullopt);
}

TEST(UnicodeClass, ClassesOfCommonCodePoints) {
  EXPECT_EQ(char_class(U'\u00e9'), CharClass::kLetter);  // é
  EXPECT_EQ(char_class(U'\u0416'), CharClass::kLetter);  // Ж
  EXPECT_EQ(char_class(U'\u65e5'), CharClass::kLetter);  // 日
  EXPECT_EQ(char_class(U'\u00b2'), CharClass::kNumber);  // ²
  EXPECT_EQ(char_class(U'\u0663'), CharClass::kNumber);  // Arabic-Indic three
  EXPECT_EQ(char_class(U'\u2192'), CharClass::kOther);   // →
  EXPECT_EQ(char_class(U'\u00d7'), CharClass::kOther);   // ×
  EXPECT_EQ(char_class(U'\u0301'), CharClass::kOther);   // combining acute
  EXPECT_EQ(char_class(U'\u00a0'), CharClass::kWhitespace);
  EXPECT_EQ(char_class(U'\u3000'), CharClass::kWhitespace);
  std::size_t pos = 0;
  EXPECT_EQ(next_code_point("\xff", pos), U'\ufffd');  // not UTF-8: one byte, replaced
  EXPECT_EQ(pos, 1u);
}

}  // namespace
}  // namespace ptxb::adapt
