#include "compile/trampoline.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

RunSignature gemm_signature() {
  RunSignature s;
  s.parameters = {{AbiParameter::Kind::kInput, "const __nv_bfloat16*", "A", "A", false},
                  {AbiParameter::Kind::kInput, "const __nv_bfloat16*", "B", "B", false},
                  {AbiParameter::Kind::kOutput, "__nv_bfloat16*", "C", "C", false},
                  {AbiParameter::Kind::kAxis, "int64_t", "M", "M", false},
                  {AbiParameter::Kind::kStream, "cudaStream_t", "stream", "", false}};
  return s;
}

TEST(Trampoline, DeclaresRunAndUnpacksParamsInOrder) {
  const std::string source = generate_trampoline(gemm_signature());
  EXPECT_NE(
      source.find(
          "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M, "
          "cudaStream_t stream);"),
      std::string::npos);
  EXPECT_NE(source.find("extern \"C\" __attribute__((visibility(\"default\"))) void "
                        "ptxbench_invoke(void* const* params)"),
            std::string::npos);
  EXPECT_NE(source.find("*static_cast<const __nv_bfloat16* const*>(params[0])"), std::string::npos);
  EXPECT_NE(source.find("*static_cast<int64_t const*>(params[3])"), std::string::npos);
  EXPECT_NE(source.find("*static_cast<cudaStream_t const*>(params[4])"), std::string::npos);
  EXPECT_NE(source.find("return \"void run(const __nv_bfloat16* A"), std::string::npos);
  EXPECT_NE(source.find("ptxbench_abi_parameter_count() { return 5; }"), std::string::npos);
}

TEST(Trampoline, MangledRunRecognised) {
  EXPECT_TRUE(is_mangled_run_symbol("_Z3runPKfPflP11CUstream_st"));
  EXPECT_FALSE(is_mangled_run_symbol("_Z6runnerv"));
  EXPECT_FALSE(is_mangled_run_symbol("run"));
}

}  // namespace
}  // namespace ptxb
