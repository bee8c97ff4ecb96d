// The one strict field reader (core/json_fields.h): required fields name their JSON path when
// missing or mistyped, optional ones keep their default, nested objects report full paths.
#include <gtest/gtest.h>

#include "core/json_fields.h"

namespace ptxb {
namespace {

struct Inner {
  int count = 0;
  static Result<Inner> from_json(const Json& json) {
    Inner inner;
    PTXB_RETURN_IF_ERROR(FieldReader(json).required("count", inner.count).status());
    return inner;
  }
};

TEST(FieldReader, MissingRequiredFieldNamesItsPath) {
  std::string name;
  Status s = FieldReader(Json{{"other", 1}}).required("name", name).status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "$.name: missing required field");
  // null is not a value for a required field.
  s = FieldReader(Json{{"name", nullptr}}).required("name", name).status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "$.name: missing required field");
}

TEST(FieldReader, WrongTypeAndRangeAreErrors) {
  int n = 0;
  Status s = FieldReader(Json{{"n", "3"}}).required("n", n).status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "$.n: expected an integer, got string");
  std::uint32_t u = 0;
  s = FieldReader(Json{{"u", -1}}).required("u", u).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("non-negative"), std::string::npos);
  s = FieldReader(Json{{"u", 1ull << 40}}).required("u", u).status();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("out of range"), std::string::npos);
  EXPECT_FALSE(FieldReader(Json::array()).status().ok());
}

TEST(FieldReader, OptionalFieldsKeepTheirDefault) {
  int n = 7;
  std::optional<double> x = 1.0;
  Status s = FieldReader(Json{{"x", nullptr}}).optional("n", n).optional("x", x).status();
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(n, 7);
  EXPECT_FALSE(x.has_value());
  s = FieldReader(Json{{"n", 2}, {"x", 0.5}}).optional("n", n).optional("x", x).status();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(n, 2);
  EXPECT_EQ(x, 0.5);
}

TEST(FieldReader, NestedErrorsCarryTheFullPath) {
  std::vector<Inner> items;
  const Json json = Json::parse(R"({"items": [{"count": 1}, {"cnt": 2}]})");
  Status s = FieldReader(json).required("items", items).status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "$.items[1].count: missing required field");
  std::map<std::string, Inner> by_name;
  s = FieldReader(Json::parse(R"({"m": {"a": {"count": "x"}}})")).required("m", by_name).status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "$.m.a.count: expected an integer, got string");
}

TEST(FieldReader, TheFirstErrorIsKept) {
  int a = 0, b = 0;
  Status s = FieldReader(Json::object()).required("a", a).required("b", b).status();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "$.a: missing required field");
}

}  // namespace
}  // namespace ptxb
