// Static target-instruction analysis of a kernel binary's SASS (design.md §3.6).
//
// Input: the text of `cuobjdump -sass <kernel.so>` (or of a cubin). Output per kernel: an opcode
// histogram, the target-instruction family counts and local-memory traffic; per binary: the
// static verdict for the task's architecture.
//
// Families, on the base opcode (the mnemonic before the first '.'):
//   GMMA  any opcode containing "GMMA" (HGMMA, IGMMA, QGMMA, BGMMA: Hopper warpgroup MMA).
//   TMA   UTMALDG, UTMASTG, UTMAREDG only. UTMAPF (tensor prefetch to L2), UTMACCTL (descriptor
//         cache control) and UBLKCP (non-tensor bulk copy) move no tile through the tensor
//         memory accelerator into/out of shared memory, so they do not count.
//   UTC   Blackwell tensor-core/tensor-memory ops (opcodes beginning "UTC": UTCHMMA, UTCBAR,
//         UTCATOMSWS, ...), plus LDTM / STTM (tcgen05.ld / tcgen05.st) as their own families.
// Hopper (sm_90a) qualifies with GMMA or TMA; Blackwell (sm_100a) only with UTC, LDTM or STTM.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// Family names as they appear in JSON and in task manifests' target_families.
inline constexpr std::string_view kFamilyGmma = "GMMA";
inline constexpr std::string_view kFamilyTma = "TMA";
inline constexpr std::string_view kFamilyUtc = "UTC";
inline constexpr std::string_view kFamilyLdtm = "LDTM";
inline constexpr std::string_view kFamilySttm = "STTM";

// The family a base opcode belongs to, if any ("HGMMA" -> GMMA, "UTMAPF" -> none).
std::optional<std::string> sass_family_of(std::string_view base_opcode);

// Families that make a binary qualify for `arch` ("sm_90a" -> GMMA, TMA). Empty for an
// architecture we do not know.
std::vector<std::string> qualifying_families(std::string_view arch);

struct SassKernel {
  std::string name;  // mangled, as cuobjdump prints it after "Function :"
  std::string arch;  // "sm_90a", from the "code for sm_90a" header
  int instruction_count = 0;
  std::map<std::string, int> opcode_histogram;  // base opcode -> count
  std::map<std::string, int> family_counts;     // family -> count (only families present)
  int local_loads = 0;                          // LDL
  int local_stores = 0;                         // STL
};

struct SassSummary {
  std::vector<SassKernel> kernels;
  std::map<std::string, int> family_totals;  // over all kernels
  // Static verdict for the target architecture: true iff some kernel holds a qualifying family.
  std::string target_arch;
  std::vector<std::string> qualifying_families_found;
  bool target_present = false;

  const SassKernel* find(std::string_view name) const;
};

// Parses cuobjdump -sass text. `origin` names the input in errors. Fails on text that holds no
// "Function :" section at all (an empty or foreign dump must not read as "no target instructions").
Result<std::vector<SassKernel>> parse_cuobjdump_sass(std::string_view text,
                                                     const std::string& origin);

// Totals and the static verdict for `target_arch`.
SassSummary summarize_sass(std::vector<SassKernel> kernels, const std::string& target_arch);

Json sass_summary_to_json(const SassSummary& summary);
SassSummary sass_summary_from_json(const Json& json);

}  // namespace ptxb
