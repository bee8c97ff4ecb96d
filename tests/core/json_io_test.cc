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

}  // namespace
}  // namespace ptxb
