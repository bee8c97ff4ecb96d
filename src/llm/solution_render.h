// Kernels of the solutions folder as variants: one source file plus the macros defined in front
// of it. A causal (or, later, another head-dim) task reuses its base task's source with e.g.
// PTXB_CAUSAL=1 instead of keeping a copy. Models submit one self-contained file, so rendering
// puts the #defines first and inlines the source's local `#include "..."` of files in the folder
// (each once, `#pragma once` dropped); includes that name no such file (the packs' "ptxb/...")
// stay for the compiler's include path.
#pragma once

#include <map>
#include <string>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct SolutionVariant {
  std::string source;                          // relative to the solutions folder
  std::map<std::string, std::string> defines;  // macro -> replacement text, written in name order

  // "mha_bwd_d128/rung1_tma_wgmma.cu" or "mha_bwd_d128/rung1_tma_wgmma.cu with PTXB_CAUSAL=1".
  std::string describe() const;
};

// A replay.json kernel entry: a path string, or {"source": path, "defines": {NAME: "text"}}.
// Errors name `where`, the entry's JSON path ("$.tasks.X[1].defines.N: ...").
Result<SolutionVariant> parse_solution_variant(const Json& entry, const std::string& where);

// The self-contained kernel of `variant`, sources read below `dir`.
Result<std::string> render_solution(const std::string& dir, const SolutionVariant& variant);

}  // namespace ptxb
