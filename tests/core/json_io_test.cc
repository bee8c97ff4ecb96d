#include "core/json_io.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

TEST(JsonIo, KeepsInsertionOrderThroughARoundTrip) {
  auto parsed = parse_json(R"({"zeta": 1, "alpha": {"M": 1, "K": 2, "B": 3}, "mid": [1, 2]})", "t");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  std::vector<std::string> keys;
  for (const auto& [key, value] : parsed->items()) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_EQ(parsed->dump(), R"({"zeta":1,"alpha":{"M":1,"K":2,"B":3},"mid":[1,2]})");
}

TEST(JsonIo, RejectsEmptyInput) {
  auto parsed = parse_json("  \n ", "defs/x.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "defs/x.json: empty file (expected a JSON document)");
}

TEST(JsonIo, RejectsBinaryAndInvalidUtf8WithOffsets) {
  auto binary = parse_json(std::string("{\"a\":\0}", 7), "b.json");
  ASSERT_FALSE(binary.ok());
  EXPECT_NE(binary.error().message.find("NUL byte at offset 5"), std::string::npos);
  auto latin1 = parse_json("{\"a\": \"caf\xe9\"}", "c.json");
  ASSERT_FALSE(latin1.ok());
  EXPECT_NE(latin1.error().message.find("not UTF-8"), std::string::npos);
  EXPECT_NE(latin1.error().message.find("offset 10"), std::string::npos);
}

TEST(JsonIo, Utf8ValidatorRejectsOverlongAndSurrogates) {
  EXPECT_EQ(find_utf8_error("plain ascii"), "");
  EXPECT_EQ(find_utf8_error("\xe2\x82\xac euro"), "");
  EXPECT_NE(find_utf8_error("\xc0\xaf"), "");      // overlong '/'
  EXPECT_NE(find_utf8_error("\xed\xa0\x80"), "");  // UTF-16 surrogate
  EXPECT_NE(find_utf8_error("\xe2\x82"), "");      // truncated
}

TEST(JsonIo, MalformedJsonNamesTheOrigin) {
  auto parsed = parse_json("{\"a\": [1, 2}", "w.jsonl:3");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message.rfind("w.jsonl:3: malformed JSON: ", 0), 0u)
      << parsed.error().message;
}

// Issue 21, defect 1: nlohmann throws out_of_range for a number beyond a double; that used to
// escape parse_json and abort the program.
TEST(JsonIo, NumberBeyondADoubleIsAParseErrorNotAnAbort) {
  for (const char* text : {R"({"name":1e999999})", R"({"temperature": 1e999})", "[-1e400]"}) {
    auto parsed = parse_json(text, "x.json");
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.error().code, "parse");
    EXPECT_NE(parsed.error().message.find("x.json: malformed JSON: number overflow"),
              std::string::npos)
        << parsed.error().message;
    EXPECT_NE(parsed.error().message.find("outside the range of a double"), std::string::npos);
  }
  EXPECT_TRUE(parse_json("[1e308, -1e308, 1e-400]", "ok.json").ok());  // underflow is 0
}

TEST(JsonIo, ToValidUtf8ReplacesOnlyInvalidBytes) {
  EXPECT_EQ(to_valid_utf8("plain \xe2\x82\xac"), "plain \xe2\x82\xac");
  EXPECT_EQ(to_valid_utf8(std::string("a") + '\x90' + "b"), "a\uFFFD" + std::string("b"));
  EXPECT_EQ(to_valid_utf8("\xe2\x82"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // truncated sequence
  EXPECT_EQ(find_utf8_error(to_valid_utf8("\xc0\xaf\xed\xa0\x80 ok")), "");
}

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// Issue 21, defect 2: nesting is limited before the parser runs (one linear pass).
TEST(JsonIo, NestingIsLimitedToKMaxJsonDepth) {
  EXPECT_TRUE(parse_json(nested_arrays(kMaxJsonDepth), "ok.json").ok());
  auto deep = parse_json(nested_arrays(kMaxJsonDepth + 1), "deep.json");
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().message,
            "deep.json: malformed JSON: nested deeper than 256 levels at byte offset 256");
  // Brackets inside strings do not count, escaped quotes do not end a string.
  const std::string in_string = R"([")" + std::string(1000, '[') + R"(\"{{{"])";
  EXPECT_TRUE(parse_json(in_string, "s.json").ok());
  // 200,000 levels (the issue's OOM input) fail fast.
  auto huge = parse_json(std::string(200000, '[') + R"({"a":)" + std::string(200000, ']'), "h");
  ASSERT_FALSE(huge.ok());
  EXPECT_NE(huge.error().message.find("nested deeper than 256"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
