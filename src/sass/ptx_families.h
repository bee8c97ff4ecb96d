// PTX-level family counts per entry function (design.md §3.6 checks SASS; these counts tell the
// model what it *wrote*, which helps when ptxas turned it into something else).
//
// Families are instruction-name prefixes at the start of a PTX statement (after an optional
// guard predicate): "wgmma." (PTX ISA 9.7.15), "cp.async.bulk.tensor" (9.7.9.25; the tensor
// prefetch is spelled cp.async.bulk.prefetch.tensor and deliberately does not match),
// "mbarrier." (9.7.13.15), "setmaxnreg." (9.7.19.5), "tcgen05." (9.7.16).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"

namespace ptxb {

const std::vector<std::string>& ptx_family_prefixes();

struct PtxFunctionFamilies {
  std::string name;                   // mangled .entry / .func name
  bool is_entry = true;               // false for .func
  std::map<std::string, int> counts;  // prefix -> statements (only prefixes present)
};

struct PtxFamilyCounts {
  std::vector<PtxFunctionFamilies> functions;
  std::map<std::string, int> totals;
};

PtxFamilyCounts count_ptx_families(std::string_view ptx);

Json ptx_family_counts_to_json(const PtxFamilyCounts& counts);
PtxFamilyCounts ptx_family_counts_from_json(const Json& json);

}  // namespace ptxb
