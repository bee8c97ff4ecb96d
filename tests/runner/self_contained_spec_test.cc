#include "protocol/self_contained_spec.h"

#include <gtest/gtest.h>

#include <cstring>

namespace ptxb {
namespace {

TEST(SelfContainedSpec, ParsesTensorsAndScalarsInOrder) {
  Json json = Json::parse(
      R"J({"seed": 7, "signature": "void run(const float* x, float* y, int64_t n, cudaStream_t stream)",
    "params": [{"name": "x", "tensor": {"dtype": "float32", "elements": 1000, "init": "normal"}},
               {"name": "y", "tensor": {"dtype": "float32", "elements": 1000}},
               {"name": "n", "i64": 1000}]})J");
  auto spec = self_contained_spec_from_json(json);
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->seed, 7u);
  ASSERT_EQ(spec->params.size(), 3u);
  EXPECT_EQ(spec->params[0].tensor->init, "normal");
  EXPECT_EQ(spec->params[1].tensor->init, "zeros");  // default
  EXPECT_FALSE(spec->params[2].tensor.has_value());
  EXPECT_EQ(spec->params[2].scalar.storage.size(), 8u);
}

TEST(SelfContainedSpec, RejectsBadTensors) {
  auto parse = [](const char* text) { return self_contained_spec_from_json(Json::parse(text)); };
  EXPECT_FALSE(parse(R"({"params": [{"tensor": {"dtype": "float128", "elements": 4}}]})").ok());
  EXPECT_FALSE(parse(R"({"params": [{"tensor": {"dtype": "float32", "elements": 0}}]})").ok());
  EXPECT_FALSE(
      parse(R"({"params": [{"tensor": {"dtype": "int32", "elements": 4, "init": "normal"}}]})")
          .ok());
  EXPECT_FALSE(
      parse(R"({"params": [{"tensor": {"dtype": "float32", "elements": 4, "init": "ones"}}]})")
          .ok());
  EXPECT_FALSE(
      parse(R"({"params": [{"tensor": {"dtype": "float32", "elements": 100000000000}}]})").ok());
  EXPECT_FALSE(parse(R"({"params": [{"buffer": 0}]})").ok());
  EXPECT_FALSE(parse(R"({"seed": 1})").ok());
}

TEST(SelfContainedSpec, DataInitIsExactlyTheGivenBytes) {
  auto parse = [](const char* text) { return self_contained_spec_from_json(Json::parse(text)); };
  auto spec = parse(
      R"({"params": [{"tensor": {"dtype": "int32", "elements": 2, "init": "data",
                                  "data_hex": "0100000002000000"}}]})");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto bytes = generate_tensor_bytes(*spec->params[0].tensor, 9, 0);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, std::string("\x01\0\0\0\x02\0\0\0", 8));
  auto short_data = parse(
      R"({"params": [{"tensor": {"dtype": "int32", "elements": 3, "init": "data",
                                  "data_hex": "0100000002000000"}}]})");
  ASSERT_FALSE(short_data.ok());
  EXPECT_NE(short_data.error().message.find("data_hex holds 8 bytes, 3 int32 elements need 12"),
            std::string::npos)
      << short_data.error().message;
  EXPECT_FALSE(parse(R"({"params": [{"tensor": {"dtype": "int32", "elements": 1, "init": "data",
                                                 "data_hex": "zz000000"}}]})")
                   .ok());
  EXPECT_FALSE(
      parse(R"({"params": [{"tensor": {"dtype": "int32", "elements": 1, "init": "data"}}]})").ok());
}

TEST(SelfContainedSpec, NormalValuesAreDeterministicAndPlausible) {
  SelfContainedTensor tensor{"float32", 10001, "normal"};
  auto first = generate_tensor_bytes(tensor, 42, 0);
  auto again = generate_tensor_bytes(tensor, 42, 0);
  auto other = generate_tensor_bytes(tensor, 42, 1);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, *again);
  EXPECT_NE(*first, *other);  // tensors of one spec are independent
  std::vector<float> values(tensor.elements);
  std::memcpy(values.data(), first->data(), first->size());
  double sum = 0, sum_sq = 0;
  for (float v : values) {
    sum += v;
    sum_sq += static_cast<double>(v) * v;
  }
  const double mean = sum / values.size();
  // N(0,1) over 10^4 samples: |mean| < 0.05 (5 sigma), variance within ±10 %.
  EXPECT_LT(std::abs(mean), 0.05);
  EXPECT_NEAR(sum_sq / values.size() - mean * mean, 1.0, 0.1);
  auto zeros = generate_tensor_bytes(SelfContainedTensor{"bfloat16", 8, "zeros"}, 42, 0);
  EXPECT_EQ(*zeros, std::string(16, '\0'));
}

TEST(HalfConversions, RoundToNearestEven) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(-2.0f), 0xc000);
  // 1 + 2^-8 is halfway between bf16 1.0 and 1.0078125: ties to even → 1.0.
  EXPECT_EQ(float_to_bf16_bits(1.00390625f), 0x3f80);
  EXPECT_EQ(float_to_bf16_bits(1.01171875f), 0x3f82);  // 1 + 3·2^-8: tie → even (0x3f82)
  EXPECT_EQ(float_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_f16_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_f16_bits(1e6f), 0x7c00);           // overflow → inf
  EXPECT_EQ(float_to_f16_bits(5.9604645e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_f16_bits(0.0f), 0x0000);
}

}  // namespace
}  // namespace ptxb
