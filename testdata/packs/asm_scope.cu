// The inline-PTX scoping pitfalls of the packs' debugging hints (packs/*/debugging.md §4.5),
// compiled by tests/packs/wrappers_compile_test.cc once per PTXB_ASM_SCOPE value:
//   0  a label and a .reg in an asm body inlined twice: ptxas rejects the duplicate definitions
//   1  the same names made unique per asm instance with %=: assembles
//   2  the same body in { }, which scopes labels and .reg declarations: assembles
//   3  a .reg declared in one braced asm and used in the next: ptxas rejects the unknown name
// Build: nvcc -gencode arch=compute_90a,code=sm_90a -DPTXB_ASM_SCOPE=N -c asm_scope.cu
#include <cstdint>

__device__ __forceinline__ void wait_phase(uint32_t bar, uint32_t parity) {
#if PTXB_ASM_SCOPE == 0
  asm volatile(
      ".reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#elif PTXB_ASM_SCOPE == 1
  asm volatile(
      ".reg .pred done%=;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done%=, [%0], %1;\n"
      "@!done%= bra WAIT_%=;\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#elif PTXB_ASM_SCOPE == 2
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
#else
  asm volatile("{\n.reg .pred done;\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n}\n" ::"r"(bar),
               "r"(parity)
               : "memory");
  asm volatile("{\nWAIT:\n@!done bra WAIT;\n}\n" ::: "memory");
#endif
}

// Two call sites: the helper is inlined twice into one kernel.
__global__ void two_waits(uint32_t bar) {
  wait_phase(bar, 0);
  wait_phase(bar, 1);
}
