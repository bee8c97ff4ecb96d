// The safetensors reader on the GQA workloads' real index files (golden values computed from
// tasks/tools/generate_builtin_set.py's layout) and on malformed files.
#include "trace/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "core/fs.h"

namespace ptxb {
namespace {

const std::string kGqaBlobs = std::string(PTXB_SOURCE_DIR) + "/tasks/blob/workloads/";

TEST(Safetensors, ReadsTheRaggedWorkloadIndptr) {
  auto t = read_safetensors_tensor(kGqaBlobs +
                                       "gqa_ragged/gqa_ragged_prefill_causal_h32_kv4_d128/"
                                       "029edbb8-bf4f-5ef5-baed-ed3c07f62000.safetensors",
                                   "qo_indptr");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->dtype, DType::kInt32);
  EXPECT_EQ(t->shape, std::vector<std::int64_t>{5});
  std::vector<std::int32_t> values(5);
  ASSERT_EQ(t->bytes.size(), 20u);
  std::memcpy(values.data(), t->bytes.data(), 20);
  // 4 requests x 2048 tokens.
  EXPECT_EQ(values, (std::vector<std::int32_t>{0, 2048, 4096, 6144, 8192}));
}

TEST(Safetensors, ReadsTheDecodePageTable) {
  const std::string path = kGqaBlobs +
                           "gqa_paged/gqa_paged_decode_h24_kv8_d128_ps1/"
                           "65970c11-9cc3-5679-95da-6213fa3b2d5e.safetensors";
  auto indices = read_safetensors_tensor(path, "kv_indices");
  ASSERT_TRUE(indices.ok()) << indices.error().message;
  EXPECT_EQ(indices->elements(), 65536);
  auto indptr = read_safetensors_tensor(path, "kv_indptr");
  ASSERT_TRUE(indptr.ok());
  std::int32_t last = 0;
  std::memcpy(&last, indptr->bytes.data() + 32 * 4, 4);
  EXPECT_EQ(last, 65536);  // kv_indptr[-1] == num_kv_indices, the definition's constraint
  auto missing = read_safetensors_tensor(path, "qo_indptr");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no tensor 'qo_indptr'"), std::string::npos);
}

// A file whose header is `header` followed by `data_bytes` zero bytes.
std::string write_safetensors_file(const std::string& dir, const std::string& header,
                                   std::size_t data_bytes) {
  const std::string path = dir + "/t.safetensors";
  std::ofstream out(path, std::ios::binary);
  std::uint64_t n = header.size();
  out.write(reinterpret_cast<const char*>(&n), 8);
  out << header << std::string(data_bytes, '\0');
  return path;
}

TEST(Safetensors, RejectsMalformedFiles) {
  auto dir = make_temp_directory("ptxb-safetensors");
  ASSERT_TRUE(dir.ok());
  struct Case {
    std::string header;
    std::size_t data;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {R"({"x": {"dtype": "I32", "shape": [4], "data_offsets": [0, 12]}})", 16,
            "data_offsets [0, 12) do not hold 16 bytes"},
           {R"({"x": {"dtype": "I32", "shape": [4], "data_offsets": [0, 16]}})", 8,
            "data_offsets [0, 16) do not hold 16 bytes"},
           {R"({"x": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})", 4,
            "unsupported dtype U8"},
           {R"({"x": {"dtype": "I32", "shape": [4]}})", 16, "lacks dtype, shape or data_offsets"},
           {R"(not json)", 0, "the header is not a JSON object"}}) {
    auto t = read_safetensors_tensor(write_safetensors_file(*dir, c.header, c.data), "x");
    ASSERT_FALSE(t.ok()) << c.header;
    EXPECT_NE(t.error().message.find(c.message), std::string::npos) << t.error().message;
  }
  EXPECT_FALSE(read_safetensors_tensor(*dir + "/absent", "x").ok());
  remove_tree(*dir);
}

}  // namespace
}  // namespace ptxb
