// Symbol names as the tools print them (core/symbol_names.h).
#include "core/symbol_names.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

TEST(SymbolNames, DemanglesOrReturnsTheNameItself) {
  EXPECT_EQ(demangle_symbol("_Z11gemm_kernelPfi"), "gemm_kernel(float*, int)");
  EXPECT_EQ(demangle_symbol("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle_symbol("_Z99short"), "_Z99short");  // not a valid mangling
  EXPECT_EQ(demangle_symbol("_Z"), "_Z");
}

TEST(SymbolNames, KernelIdentifierIsTheFunctionAlone) {
  // As Nsight Compute's raw page named the backward rung-1 kernel on the H200 (2026-12-02).
  EXPECT_EQ(kernel_identifier("_ZN41_GLOBAL__N__966ad472_9_kernel_cu_a73ee1b812dk_dv_kernelE14CUten"
                              "sorMap_stS0_S0_S0_PKfS2_P13__nv_bfloat16S4_i"),
            "dk_dv_kernel");
  EXPECT_EQ(kernel_identifier("_Z9bwd_dq_dkPK13__nv_bfloat16"), "bwd_dq_dk");
  EXPECT_EQ(kernel_identifier("_ZN12_GLOBAL__N_16reduceEPfi"), "reduce");
  EXPECT_EQ(kernel_identifier("void ns::tiled<64, 32>(float*)"), "tiled");
  EXPECT_EQ(kernel_identifier("(anonymous namespace)::first_column(const __nv_bfloat16 *)"),
            "first_column");
  EXPECT_EQ(kernel_identifier("plain_c_kernel"), "plain_c_kernel");
}

}  // namespace
}  // namespace ptxb
