// Canonical source: a renamed, reformatted, recommented copy of a kernel is the same key; a real
// variant (a missing fence, another tile constant) is not.
#include <gtest/gtest.h>

#include "adapt/source_tokens.h"

namespace ptxb::adapt {
namespace {

constexpr const char* kKernel = R"(// tile loop
__global__ void gemm(const float* a, float* c, int n) {
  int tile = blockIdx.x * 128;  /* 128-wide tile */
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  for (int i = 0; i < n; ++i) c[tile + i] = a[tile + i];
}
)";

constexpr const char* kRenamed = R"(__global__ void my_gemm(const float* A, float* C,
                        int count) {
  int base = blockIdx.x * 128;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");   // fence
  for (int k = 0; k < count; ++k) C[base + k] = A[base + k];
})";

TEST(SourceTokens, StripsCommentsButKeepsStrings) {
  const std::string stripped = strip_comments("a // x\n\"// not a comment\" /* y */ b");
  EXPECT_EQ(stripped.find('x'), std::string::npos);
  EXPECT_EQ(stripped.find('y'), std::string::npos);
  EXPECT_NE(stripped.find("\"// not a comment\""), std::string::npos);
}

TEST(SourceTokens, IdentifierTokensInOrder) {
  EXPECT_EQ(identifier_tokens("int x2 = foo(3); // bar"),
            (std::vector<std::string>{"int", "x2", "foo"}));
}

TEST(SourceTokens, RenamedCopyHasTheSameCanonicalKey) {
  EXPECT_EQ(canonical_source(kKernel), canonical_source(kRenamed));
  EXPECT_EQ(canonical_source_hash(kKernel), canonical_source_hash(kRenamed));
}

TEST(SourceTokens, RealVariantsKeepTheirOwnKey) {
  std::string no_fence = kKernel;
  no_fence.replace(
      no_fence.find("  asm volatile"),
      std::string("  asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n").size(),
      "");
  std::string other_tile = kKernel;
  other_tile.replace(other_tile.find("* 128;"), 6, "* 64; ");
  std::string swapped_index = kKernel;  // c[tile + i] = a[tile + n]: another variable, same names
  swapped_index.replace(swapped_index.find("a[tile + i]"), 11, "a[tile + n]");
  EXPECT_NE(canonical_source_hash(kKernel), canonical_source_hash(no_fence));
  EXPECT_NE(canonical_source_hash(kKernel), canonical_source_hash(other_tile));
  EXPECT_NE(canonical_source_hash(kKernel), canonical_source_hash(swapped_index));
}

}  // namespace
}  // namespace ptxb::adapt
