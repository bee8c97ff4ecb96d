// Resetting what a candidate may have set up in L2 for itself, before every sample (design.md
// §3.4, docs/integrity.md "L2 state").
//
// The flush (cuda/l2_flush.h) writes 2 × L2 of ordinary lines, but *persisting* lines are not
// evicted by normal accesses while the set-aside is in force (CUDA C++ Programming Guide,
// "L2 Cache Set-Aside for Persisting Accesses"): a candidate that sets a persisting access-policy
// window over its inputs on the call's stream (cudaStreamAttributeAccessPolicyWindow) and a
// set-aside (cudaLimitPersistingL2CacheSize) would find its inputs still in L2 at the next
// sample, flush or not. Within one call such a window is a legitimate optimisation; across
// samples it is a warm cache the timing contract rules out. So the harness, outside the window
// and before the flush, puts L2 back into its default state:
//   1. the stream's access-policy window cleared (num_bytes = 0): a window set once and
//      "cached" by the candidate does not apply to later calls;
//   2. the persisting set-aside back to 0 (cudaDeviceSetLimit), so nothing is held back from
//      eviction by the flush;
//   3. every persisting line demoted to normal (cudaCtxResetPersistingL2Cache), so the flush
//      that follows evicts it.
// A candidate that sets the window and the limit again inside every call only gets what it
// prefetches during that call: timed, allowed.
#pragma once

#include <cuda_runtime_api.h>

#include "core/result.h"

namespace ptxb {

// The raw status of the first step that failed, and which call it was: after a candidate's
// sticky error this is where the harness may first see it, and the reply names the error
// (like L2Flush::flush). {cudaSuccess, ""} when all steps succeeded or the device has no
// persisting L2 (cudaDevAttrMaxPersistingL2CacheSize == 0: nothing to reset).
struct L2ResetOutcome {
  cudaError_t status = cudaSuccess;
  const char* call = "";
};

// Runs the three steps above for the current device and `stream` (the runner's call stream).
// Call as harness work (outside the call's window), before the L2 flush.
L2ResetOutcome reset_persisting_l2(cudaStream_t stream);
// The same as a Status ("<file>:<line>: <call>: <CUDA error>"), for callers that stop on any
// failure (a batch of calls, a GPU test).
Status reset_persisting_l2_or_error(cudaStream_t stream);

}  // namespace ptxb
