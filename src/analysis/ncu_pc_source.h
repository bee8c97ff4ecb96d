// The dynamic check's per-instruction counts without ncu's source page (design.md §3.6): the
// raw page, printed with --print-metric-instances details, lists inst_executed and
// thread_inst_executed_true per instruction address of each profiled launch, and the compile
// stage's cuobjdump listing (sass/sass_listing.h) says which instruction sits at each offset.
// Importing the source page costs a second ncu start-up and grows with the kernel's size
// (bench/results/profile_cost.md); the raw page is imported anyway.
//
// The mapping: a launch's lowest listed address is its function's entry (offset 0 is the first
// instruction every thread runs; the lists hold only issued instructions), every other address
// is entry + offset. It must land on an instruction of the listing, and the per-opcode sums it
// gives must equal ncu's own sass__thread_inst_executed_true_per_opcode, which ncu derives from
// the SASS the GPU actually ran: a kernel of the same name from another module (different code
// at the same offsets) fails that check, so the verdict is then unknown, never positive.
#pragma once

#include <string>
#include <vector>

#include "analysis/ncu_launches.h"
#include "analysis/ncu_source.h"
#include "core/result.h"
#include "sass/sass_listing.h"

namespace ptxb {

// One NcuKernelSource per profiled function (launches of one function merged per instruction
// with the maximum, as parse_ncu_source_csv merges a source page), every instruction of the
// listing present, unissued ones with zero counts. Fails, saying why, when a launch lacks the
// per-address counters, its function is not in the listing, an address falls between or past
// the listing's instructions, or the per-opcode check disagrees.
Result<std::vector<NcuKernelSource>> source_from_pc_counts(const std::vector<NcuLaunch>& launches,
                                                           const SassListing& listing);

}  // namespace ptxb
