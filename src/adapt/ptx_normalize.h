// Normalized PTX: the leakage-control key between training rows and test kernels. Two kernels
// whose sources differ only in names, comments and layout compile to the same instructions, but
// their PTX still differs in the mangled kernel name (and every `_param_N` name built from it),
// in nvcc's register and label numbering, and with -lineinfo in .loc/.file lines. The canonical
// form removes exactly those:
//   dropped   comments (// and /* */), .loc and .file directives, .section blocks (DWARF of -G),
//             whitespace (tokens are joined by one space)
//   renamed   registers of a `.reg` family (%r12, %rd3, %p1, %f7) by first appearance within
//             their family (%r0, %r1, ...), keeping the family (its type); labels ($L__BB0_2)
//             by first appearance ($L0, ...); names declared by .entry/.func/.param/.shared/
//             .global/.const/.local (kernel, parameter and variable names) by first
//             appearance (N0, N1, ...)
//   kept      opcodes with their modifiers, types, special registers (%tid.x, %ctaid.y, ...),
//             immediates, .maxntid and every other directive, external functions (vprintf)
// So a renamed copy has the same key, and a real variant (another tile constant, one more
// instruction such as a fence) does not (tests/adapt/ptx_normalize_test.cc, on PTX from nvcc).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"

namespace ptxb::adapt {

std::string normalized_ptx(std::string_view ptx);
// sha256 of normalized_ptx: the key written to manifests.
std::string normalized_ptx_hash(std::string_view ptx);

// One kernel's PTX with where it comes from ("RUN_DIR/turns/ID/turn3.ptx", a training row id).
struct PtxKernel {
  std::string id;
  std::string ptx;
};

struct PtxDedupResult {
  std::vector<std::string> kept;  // training ids, input order
  Json drops;                     // [{"id", "reason": "same_ptx_as_test_kernel", "collides_with",
                                  //   "normalized_ptx_sha256"}]
};

// Drops every training kernel whose normalized PTX equals a test kernel's, naming the test
// kernel it collided with (the first in input order with that key).
PtxDedupResult dedup_by_normalized_ptx(const std::vector<PtxKernel>& train,
                                       const std::vector<PtxKernel>& test);

}  // namespace ptxb::adapt
