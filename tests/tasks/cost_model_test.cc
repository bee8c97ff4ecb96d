#include "tasks/cost_model.h"

#include <gtest/gtest.h>

#include "trace/schema_json.h"

namespace ptxb {
namespace {

Definition attention_forward() {
  auto document = parse_trace_json(R"({"name": "f", "op_type": "mha",
    "axes": {"B": {"type": "const", "value": 4}, "H": {"type": "const", "value": 48},
             "D": {"type": "const", "value": 128}, "S": {"type": "var"}},
    "inputs": {"Q": {"shape": ["B", "H", "S", "D"], "dtype": "bfloat16"},
               "K": {"shape": ["B", "H", "S", "D"], "dtype": "bfloat16"},
               "V": {"shape": ["B", "H", "S", "D"], "dtype": "bfloat16"}},
    "outputs": {"O": {"shape": ["B", "H", "S", "D"], "dtype": "bfloat16"},
                "LSE": {"shape": ["B", "H", "S"], "dtype": "float32"}},
    "reference": "def run(Q, K, V):\n  pass"})",
                                   "f.json");
  return parse_definition(*document, "f.json").value();
}

const std::map<std::string, std::int64_t> kPaperAttention = {
    {"B", 4}, {"H", 48}, {"D", 128}, {"S", 4096}};

TEST(CostModel, AttentionForward) {
  auto cost = compute_cost("attention_fwd", attention_forward(), kPaperAttention);
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  // 4 * B * H * S^2 * D = 4 * 4 * 48 * 4096^2 * 128
  EXPECT_DOUBLE_EQ(cost->flops, 4.0 * 4 * 48 * 4096.0 * 4096 * 128);
  // Q, K, V, O: 4 * (4*48*4096*128) * 2 bytes; LSE: 4*48*4096 * 4 bytes
  EXPECT_DOUBLE_EQ(cost->min_bytes, 4.0 * 4 * 48 * 4096 * 128 * 2 + 4.0 * 48 * 4096 * 4);
}

TEST(CostModel, CausalCountsTheUnmaskedTriangle) {
  auto causal = compute_cost("attention_fwd_causal", attention_forward(), kPaperAttention);
  ASSERT_TRUE(causal.ok());
  EXPECT_DOUBLE_EQ(causal->flops, 4.0 * 4 * 48 * 128 * (4096.0 * 4097 / 2));
  auto backward = compute_cost("attention_bwd_causal", attention_forward(), kPaperAttention);
  ASSERT_TRUE(backward.ok());
  EXPECT_DOUBLE_EQ(backward->flops, 2.5 * causal->flops);
}

TEST(CostModel, ErrorsNameModelAndAxis) {
  auto cost = compute_cost("gemm", attention_forward(), kPaperAttention);
  ASSERT_FALSE(cost.ok());
  EXPECT_EQ(cost.error().message, "cost model 'gemm' needs axis M");
  auto unknown = compute_cost("conv", attention_forward(), kPaperAttention);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("unknown cost model 'conv'"), std::string::npos);
  auto ragged = compute_cost("gqa_ragged_prefill_causal", attention_forward(),
                             {{"num_qo_heads", 32},
                              {"head_dim", 128},
                              {"total_q", 10},
                              {"total_kv", 10},
                              {"len_indptr", 4}});
  ASSERT_FALSE(ragged.ok());
  EXPECT_NE(ragged.error().message.find("equal-length requests"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
