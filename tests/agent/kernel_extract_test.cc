// Kernel extraction: the last cuda/cpp/c++ block that defines `run`, and a precise reason
// when there is none.
#include <gtest/gtest.h>

#include "agent/kernel_extract.h"

namespace ptxb {
namespace {

constexpr const char* kKernel =
    "__global__ void k() {}\nvoid run(const float* a, float* b, int64_t n, cudaStream_t stream) "
    "{\n  k<<<1, 1, 0, stream>>>();\n}\n";

TEST(KernelExtract, TakesTheLastKernelBlockThatDefinesRun) {
  const std::string reply = std::string("Draft:\n```cuda\nvoid run(int x) { /* v1 */ }\n```\n") +
                            "Usage:\n```python\nrun(a, b)\n```\nFinal:\n```cuda\n" + kKernel +
                            "```\nAnd the declaration alone:\n```cpp\nvoid run(const float*, "
                            "float*, int64_t, cudaStream_t);\n```\n";
  const ExtractedKernel k = extract_kernel(reply);
  ASSERT_TRUE(k.found) << k.no_code_reason;
  EXPECT_EQ(k.source, kKernel);
  EXPECT_EQ(k.blocks, 4);
  EXPECT_EQ(k.kernel_tagged_blocks, 3);
  EXPECT_EQ(k.chosen_block, 2);
}

TEST(KernelExtract, AcceptsCppAndCxxTagsAndTildeFences) {
  for (const std::string fence : {"```cpp", "```c++", "```CUDA", "~~~cuda", "````cuda"}) {
    const std::string close = fence.substr(0, fence.find_first_not_of(fence[0]));
    const ExtractedKernel k = extract_kernel(fence + "\n" + kKernel + close + "\n");
    EXPECT_TRUE(k.found) << fence;
    EXPECT_EQ(k.source, kKernel) << fence;
  }
}

TEST(KernelExtract, ReasonsWhenThereIsNoKernel) {
  EXPECT_EQ(extract_kernel("I would tile it 128x256.").no_code_reason,
            "the reply contains no fenced code block");
  EXPECT_EQ(extract_kernel("```python\nprint(1)\n```\n```\nvoid run() {}\n```\n").no_code_reason,
            "the reply contains 2 fenced code blocks, none tagged cuda, cpp or c++ (tags: python, "
            "(untagged))");
  EXPECT_EQ(extract_kernel("```cuda\n__global__ void k() {}\n```\n```cuda\nrun(a);\n```\n")
                .no_code_reason,
            "none of the 2 code blocks tagged cuda, cpp or c++ defines the host function `run`");
  EXPECT_EQ(extract_kernel(std::string("```cuda\n") + kKernel).no_code_reason,
            "the reply's ```cuda block is not closed (the reply was probably cut off)");
}

TEST(KernelExtract, RunDefinitionsNotCallsDeclarationsOrComments) {
  EXPECT_TRUE(defines_run("void run(int a)\n{\n}"));
  EXPECT_TRUE(defines_run("static void run(const float* __restrict__ x) noexcept { }"));
  EXPECT_TRUE(defines_run("void run(float* (*f)(int), int n) {}"));  // nested parentheses
  EXPECT_FALSE(defines_run("void run(int a);"));
  EXPECT_FALSE(defines_run("int main() { run(1); if (run(2)) {} }"));
  EXPECT_FALSE(
      defines_run("// void run(int a) {}\n/* void run() {} */ const char* s = \"void run() {\";"));
  EXPECT_FALSE(defines_run("void Runner::run(int a) {}"));
  EXPECT_FALSE(defines_run("void rerun(int a) {} void run_all() {}"));
}

TEST(KernelExtract, NoCodeFeedbackAsksForOneBlockWithTheSignature) {
  const ExtractedKernel k = extract_kernel("no code");
  const std::string text =
      no_code_feedback(k, "void run(const float* a, cudaStream_t stream)", "length");
  EXPECT_NE(text.find("Nothing was compiled: the reply contains no fenced code block."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("output-token limit"), std::string::npos);
  EXPECT_NE(text.find("```cuda\nvoid run(const float* a, cudaStream_t stream);\n```"),
            std::string::npos);
}

}  // namespace
}  // namespace ptxb
