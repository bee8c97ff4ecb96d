#include "trace/definition.h"

#include <gtest/gtest.h>

#include "trace/schema_json.h"

namespace ptxb {
namespace {

// A definition whose axes, inputs and outputs are deliberately not in alphabetical order:
// the order is the calling convention and must survive parse and dump unchanged.
constexpr const char* kUnordered = R"({
  "op_type": "mha",
  "name": "order_probe",
  "axes": {"S": {"type": "var"}, "B": {"type": "const", "value": 2}, "H": {"type": "const", "value": 3}},
  "inputs": {"V": {"shape": ["B", "H", "S"], "dtype": "bfloat16"},
             "Q": {"shape": ["B", "H", "S"], "dtype": "bfloat16"},
             "K": {"shape": ["B", "H", "S"], "dtype": "bfloat16"}},
  "outputs": {"O": {"shape": ["B", "H", "S"], "dtype": "bfloat16"},
              "LSE": {"shape": ["B", "H"], "dtype": "float32"}},
  "reference": "def run(V, Q, K):\n    pass\n",
  "zz_unknown": {"b": 1, "a": [2, 3]}
})";

Json parse(const std::string& text) {
  auto document = parse_trace_json(text, "test.json");
  EXPECT_TRUE(document.ok()) << document.error().message;
  return document.ok() ? document.value() : Json();
}

std::string errors_of(const std::string& text) {
  auto definition = parse_definition(parse(text), "test.json");
  return definition.ok() ? "" : definition.error().message;
}

TEST(Definition, ParsesInDocumentOrder) {
  auto definition = parse_definition(parse(kUnordered), "test.json");
  ASSERT_TRUE(definition.ok()) << definition.error().message;
  ASSERT_EQ(definition->axes.size(), 3u);
  EXPECT_EQ(definition->axes[0].name, "S");
  EXPECT_TRUE(definition->axes[0].is_var);
  EXPECT_EQ(definition->axes[1].name, "B");
  EXPECT_EQ(*definition->axes[1].value, 2);
  EXPECT_EQ(definition->axes[2].name, "H");
  ASSERT_EQ(definition->inputs.size(), 3u);
  EXPECT_EQ(definition->inputs[0].name, "V");
  EXPECT_EQ(definition->inputs[1].name, "Q");
  EXPECT_EQ(definition->inputs[2].name, "K");
  EXPECT_EQ(definition->outputs[1].name, "LSE");
  EXPECT_EQ(definition->outputs[1].dtype, DType::kFloat32);
  EXPECT_EQ(definition->var_axis_names(), std::vector<std::string>{"S"});
}

TEST(Definition, RoundTripKeepsKeyOrderAndUnknownFields) {
  const Json original = parse(kUnordered);
  auto definition = parse_definition(original, "test.json");
  ASSERT_TRUE(definition.ok());
  const Json written = definition_to_json(*definition);
  EXPECT_EQ(written.dump(), original.dump());
  // Spelled out, so that a switch to a sorting JSON type cannot pass by accident.
  std::vector<std::string> axis_keys, input_keys, top_keys;
  for (const auto& [key, value] : written["axes"].items()) axis_keys.push_back(key);
  for (const auto& [key, value] : written["inputs"].items()) input_keys.push_back(key);
  for (const auto& [key, value] : written.items()) top_keys.push_back(key);
  EXPECT_EQ(axis_keys, (std::vector<std::string>{"S", "B", "H"}));
  EXPECT_EQ(input_keys, (std::vector<std::string>{"V", "Q", "K"}));
  EXPECT_EQ(top_keys.front(), "op_type");
  EXPECT_EQ(top_keys.back(), "zz_unknown");
  // Re-parsing the dump gives the same text again.
  EXPECT_EQ(parse(written.dump()).dump(), original.dump());
}

TEST(Definition, MissingRequiredField) {
  const auto errors = errors_of(R"({"name": "x", "op_type": "gemm",
    "axes": {"M": {"type": "var"}}, "inputs": {"A": {"shape": ["M"], "dtype": "bfloat16"}},
    "reference": "def run(A):\n  pass"})");
  EXPECT_NE(errors.find("test.json: $: missing required field 'outputs'"), std::string::npos)
      << errors;
}

TEST(Definition, WrongTypes) {
  const auto errors = errors_of(R"({"name": "x", "op_type": "gemm",
    "axes": {"M": {"type": "var"}, "K": {"type": "const", "value": "64"}},
    "inputs": {"A": {"shape": "M", "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M"], "dtype": 3}}, "reference": "def run(A):\n  pass"})");
  EXPECT_NE(errors.find("$.axes.K.value: expected an integer, got a string"), std::string::npos)
      << errors;
  EXPECT_NE(errors.find("$.inputs.A.shape: expected an array of axis names or null"),
            std::string::npos);
  EXPECT_NE(errors.find("$.outputs.C.dtype: expected a string, got an integer"), std::string::npos);
}

TEST(Definition, UndeclaredAxisInShape) {
  const auto errors = errors_of(R"({"name": "x", "op_type": "gemm",
    "axes": {"M": {"type": "var"}}, "inputs": {"A": {"shape": ["M", "Q"], "dtype": "bfloat16"}},
    "outputs": {"C": {"shape": ["M"], "dtype": "bfloat16"}}, "reference": "def run(A):\n  pass"})");
  EXPECT_EQ(errors, "test.json: $.inputs.A.shape[1]: axis 'Q' is not declared in $.axes");
}

TEST(Definition, DuplicateKeysAreRejectedAtParse) {
  auto document = parse_trace_json(R"({"inputs": {"A": 1, "B": 2, "A": 3}})", "dup.json");
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.error().message,
            "dup.json: $.inputs: duplicate key 'A' (names in an object must be unique)");
  auto nested = parse_trace_json(R"({"x": [{"k": 1}, {"k": 2, "k": 3}]})", "dup.json");
  ASSERT_FALSE(nested.ok());
  EXPECT_NE(nested.error().message.find("$.x[1]: duplicate key 'k'"), std::string::npos);
}

// Issue 21, defect 2: each frame of the duplicate-key pass keeps its own path element, not the
// whole path, so a deep document costs memory linear in its size; the path is still exact.
TEST(Definition, DuplicateKeyPathIsExactAtTheDepthLimit) {
  std::string text, expected = "$";
  // 127 × (object + array) + the innermost object: 255 levels.
  for (int level = 0; level < 127; ++level) {
    text += R"({"level_key": [)";
    expected += ".level_key[0]";
  }
  text += R"({"k": 1, "k": 2})";
  for (int level = 0; level < 127; ++level) text += "]}";
  auto document = parse_trace_json(text, "deep.json");
  ASSERT_FALSE(document.ok());
  EXPECT_EQ(document.error().message,
            "deep.json: " + expected + ": duplicate key 'k' (names in an object must be unique)");
  auto too_deep = parse_trace_json("[[" + text + "]]", "deeper.json");
  ASSERT_FALSE(too_deep.ok());
  EXPECT_NE(too_deep.error().message.find("nested deeper than 256 levels"), std::string::npos);
}

TEST(Definition, InputOutputNameClash) {
  const auto errors = errors_of(R"({"name": "x", "op_type": "gemm",
    "axes": {"M": {"type": "var"}}, "inputs": {"A": {"shape": ["M"], "dtype": "bfloat16"}},
    "outputs": {"A": {"shape": ["M"], "dtype": "bfloat16"}}, "reference": "def run(A):\n  pass"})");
  EXPECT_NE(errors.find("$.outputs.A: 'A' is both an input and an output"), std::string::npos)
      << errors;
}

TEST(Definition, DtypeEnumAndIdentifiersAndAxisRules) {
  const auto errors = errors_of(R"({"name": "bad-name", "op_type": "gemm",
    "axes": {"M": {"type": "var", "value": 3}, "2K": {"type": "const", "value": 0},
             "T": {"type": "ragged"}},
    "inputs": {"my tensor": {"shape": ["M"], "dtype": "bf16"}},
    "outputs": {"C": {"shape": null, "dtype": "float32"}}, "reference": "return 1"})");
  EXPECT_NE(errors.find("$.name: definition name 'bad-name' must be a C identifier"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("$.axes.M.value: a 'var' axis takes its value from each workload"),
            std::string::npos);
  EXPECT_NE(errors.find("$.axes.2K: axis name '2K' is not a valid C identifier"),
            std::string::npos);
  EXPECT_NE(errors.find("$.axes.2K.value: const axis value must be positive, got 0"),
            std::string::npos);
  EXPECT_NE(errors.find("$.axes.T.type: unknown axis type 'ragged'"), std::string::npos);
  EXPECT_NE(errors.find("$.inputs.my tensor: tensor name 'my tensor' is not a valid C identifier"),
            std::string::npos);
  EXPECT_NE(errors.find("$.inputs.my tensor.dtype: unknown dtype 'bf16' (expected one of: "
                        "bfloat16, float16"),
            std::string::npos);
  EXPECT_NE(errors.find("$.reference: must define a top-level function 'def run(...)'"),
            std::string::npos);
}

TEST(Definition, ScalarShapeIsNull) {
  auto definition = parse_definition(parse(R"({"name": "s", "op_type": "x",
    "axes": {"N": {"type": "var"}},
    "inputs": {"x": {"shape": ["N"], "dtype": "float32"}, "alpha": {"shape": null, "dtype": "float32"}},
    "outputs": {"y": {"shape": ["N"], "dtype": "float32"}}, "reference": "def run(x, alpha):\n  pass"})"),
                                     "s.json");
  ASSERT_TRUE(definition.ok()) << definition.error().message;
  EXPECT_TRUE(definition->inputs[1].is_scalar());
  EXPECT_FALSE(definition->inputs[0].is_scalar());
}

TEST(Definition, NotAnObject) {
  auto definition = parse_definition(Json::array(), "a.json");
  ASSERT_FALSE(definition.ok());
  EXPECT_EQ(definition.error().message, "a.json: $: expected an object, got an array");
}

}  // namespace
}  // namespace ptxb
