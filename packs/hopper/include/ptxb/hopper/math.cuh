// PTXBench knowledge pack, Hopper (sm_90a): fast math and bf16 packing used in epilogues and
// softmax.
#pragma once

#include <cstdint>

#include "ptxb/hopper/common.cuh"

namespace ptxb {

// 2^x with the MUFU.EX2 unit (PTX ISA "ex2": .approx.ftz, max relative error 2^-22 over the
// full range; subnormal inputs/outputs flushed to zero). exp(x) = exp2(x * log2(e)): fold
// log2(e) into the softmax scale once instead of calling expf.
PTXB_DEVICE float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

// Two floats -> one register of two bf16, round-to-nearest-even (PTX ISA "cvt", .bf16x2 form:
// the FIRST source goes to the UPPER half). Here `lo` lands in bits 0-15 (the lower column /
// lower address in memory), `hi` in bits 16-31 -- the order wgmma A fragments, ldmatrix and
// stmatrix expect.
PTXB_DEVICE uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

}  // namespace ptxb
