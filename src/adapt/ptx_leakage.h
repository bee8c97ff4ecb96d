// Leakage control by normalized PTX (ptx_normalize.h) in `fixit export` and `kernelgen export`
// with --ptx-dedup: every kernel of the --heldout-run directories and every training row's
// kernels are compiled to PTX by the compile stage (cached, so the kernels a run already
// compiled cost nothing), and a row whose supervised kernel (or, for Fixit, its failing
// kernel) has the normalized PTX of a test kernel is dropped, naming that kernel. The
// canonical-source key (source_tokens.h) still runs first; the PTX key also catches copies that
// differ in the source but not in the code nvcc makes of it (a macro for a constant, an
// inlined helper). A kernel that does not compile has no PTX and is counted, never guessed at.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "adapt/ptx_normalize.h"
#include "adapt/sft_record.h"
#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {
class TaskRegistry;
class Toolchain;
}  // namespace ptxb

namespace ptxb::adapt {

// (task name, kernel source) -> PTX text; an Error when it does not compile.
using PtxOfKernel = std::function<Result<std::string>(const std::string&, const std::string&)>;

// Through compile_solution with the task's run signature and default options (compile cache on).
PtxOfKernel compile_stage_ptx(const TaskRegistry& registry, const Toolchain& toolchain);

struct PtxLeakageResult {
  std::vector<SftExample> kept;
  Json drops = Json::array();  // as dedup_by_normalized_ptx, one per dropped row
  Json counts;                 // test_kernels, test_kernels_without_ptx, rows_without_ptx
};

// The PTX of every turn kernel of `test_runs` (task from turns.jsonl), then the rows of
// `examples` that collide with one of them are dropped.
Result<PtxLeakageResult> drop_ptx_collisions(std::vector<SftExample> examples,
                                             const std::vector<std::string>& test_runs,
                                             const PtxOfKernel& ptx_of);

}  // namespace ptxb::adapt
