// `ptxbench-runner --self-contained --so PATH --params-json FILE`: one call of the candidate on
// inputs the runner allocates itself (protocol/self_contained_spec.h), for Nsight Compute and
// compute-sanitizer (design.md §3.3 last bullet, §3.6).
//
// The call is bracketed by cudaProfilerStart/cudaProfilerStop, so `ncu --profile-from-start off`
// (and `compute-sanitizer`'s equivalent) restrict themselves to exactly the candidate's work:
// input generation and copies happen before cudaProfilerStart. No CUPTI here: profilers and the
// sanitizer inject their own CUPTI client, and a second subscriber would fail.
// Exit 0 when the call and its synchronize succeeded, 1 otherwise (the reason on stderr).
#pragma once

#include <string>

namespace ptxb {

int run_self_contained(const std::string& so_path, const std::string& params_json_path);

}  // namespace ptxb
