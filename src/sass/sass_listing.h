// A kernel binary's SASS instruction by instruction: what cuobjdump -sass prints, kept with each
// instruction's offset in its function. The profile stage maps Nsight Compute's per-address
// counters onto it (analysis/ncu_pc_source.h), so the source page need not be imported.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxb {

struct SassInstruction {
  std::uint64_t offset = 0;  // bytes from the function's entry (the /*0a10*/ comment)
  std::string text;          // "@!P0 UTMALDG.2D [UR8], [UR4]": guard and operands, no ';'
};

// One line of cuobjdump -sass as an instruction:
//   "        /*0070*/   @P0 EXIT ;   /* 0x000000000000094d */" -> {0x70, "@P0 EXIT"};
// nullopt for any other line (headers, the encoding-only second half of an instruction).
std::optional<SassInstruction> sass_instruction_of_line(std::string_view line);

// Function (mangled, as after "Function :") -> its instructions in offset order.
using SassListing = std::map<std::string, std::vector<SassInstruction>>;

// Parses cuobjdump -sass text, keeping the functions compiled for `arch` ("sm_90a"; every
// function when empty). Fails, naming `origin` and the line, on a function listed twice for
// the architecture, on offsets out of order, and on text without any function.
Result<SassListing> parse_sass_listing(std::string_view text, std::string_view arch,
                                       const std::string& origin);

}  // namespace ptxb
