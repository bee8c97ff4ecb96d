// Parser for the resource report ptxas prints with `-Xptxas -v` (nvcc ... -Xptxas -v).
//
// Per entry function ptxas prints, in order:
//   ptxas info    : Compiling entry function '<mangled>' for 'sm_90a'
//   ptxas info    : Function properties for <mangled>
//       <N> bytes stack frame, <N> bytes spill stores, <N> bytes spill loads
//   ptxas info    : Used <N> registers, used <N> barriers, <N> bytes smem, <N> bytes cmem[0], ...
// and, before the per-kernel sections, advisory lines such as
//   ptxas info    : (C7508) Potential Performance Loss: 'setmaxnreg' ignored; ...
//   ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are
//                   serialized ... in the function '<mangled>'
// Those warnings matter to the model (a serialized wgmma pipeline or an ignored setmaxnreg
// explains a slow kernel), so every one is kept, attributed to the kernel it names when it names
// one. Golden inputs: testdata/compile/golden/*.ptxas.log (real ptxas 13.0 output).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"

namespace ptxb {

struct PtxasDiagnostic {
  std::string code;               // "C7508"; empty when ptxas printed none
  std::string kernel;             // mangled name the message names, empty if it names none
  std::string message;            // the text after "ptxas info    : " / "ptxas warning : "
  bool performance_loss = false;  // "Potential Performance Loss" advisories
};

// Worth the kernel author's attention: ptxas's "Potential Performance Loss" advisories (wgmma
// serialisation, setmaxnreg ignored) and an injected warpgroup.wait (C7517): ptxas stops the
// warpgroup for its in-flight wgmma groups where the source meant to overlap them. Measured on
// the H200: such a wait before a staging store cost the fused-dQ backward expert 3 points of
// speedup (bench/results/bwd_sweep.md, round 5). An injected warpgroup.arrive (C7519) is a fence
// and is not listed.
bool slows_the_kernel(const PtxasDiagnostic& diagnostic);

struct PtxasKernelReport {
  std::string name;      // mangled entry name
  std::string arch;      // "sm_90a"
  bool is_entry = true;  // false for non-inlined device functions (Function properties only)
  int registers = 0;
  int barriers = 0;
  std::int64_t shared_bytes = 0;  // static shared memory ("smem")
  std::int64_t stack_frame_bytes = 0;
  std::int64_t spill_store_bytes = 0;
  std::int64_t spill_load_bytes = 0;
  std::int64_t local_bytes = 0;  // "lmem"
  std::int64_t cumulative_stack_bytes = 0;
  std::vector<std::pair<std::string, std::int64_t>> constant_bytes;  // "cmem[0]" -> bytes
  std::vector<PtxasDiagnostic> diagnostics;  // advisories naming this kernel
};

struct PtxasReport {
  std::vector<PtxasKernelReport> kernels;    // in the order ptxas reported them
  std::vector<PtxasDiagnostic> diagnostics;  // every advisory/warning line, in order
  std::int64_t global_bytes = 0;             // "0 bytes gmem"

  const PtxasKernelReport* find(std::string_view name) const;
  // Advisories that name no kernel (e.g. C7508 does not say which function it means).
  std::vector<PtxasDiagnostic> unattributed() const;
};

// Parses the combined stderr of an nvcc/ptxas run. Lines that are not ptxas output (nvcc
// warnings, host compiler output) are ignored, so the whole compile log can be passed.
PtxasReport parse_ptxas_report(std::string_view log);

Json ptxas_report_to_json(const PtxasReport& report);
PtxasReport ptxas_report_from_json(const Json& json);

}  // namespace ptxb
