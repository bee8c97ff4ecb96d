// The supervisor's integrity decisions that need no GPU (docs/integrity.md): which tripwires a
// call reply trips, whether a kernel belongs to the analysed cubin, when the timing loop rewrites
// inputs in place, and whether calls on fresh inputs are suspiciously slow. The evaluator's
// stages (supervisor/stage_*.cc, sequenced by evaluator.cc) apply them; each is unit-tested alone.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "eval/eval_types.h"
#include "protocol/protocol.h"

namespace ptxb {

struct ReplyCheckOptions {
  // Off for trusted code in the slot (the reference runner, A/A mode): the libraries load their
  // own modules and may keep worker threads.
  bool check_modules = true;
  bool check_leftovers = true;
  // Off for the libraries too: cuDNN's SDPA graphs issue an asynchronous memset on a stream of
  // their own (seen on the H200 with cuDNN 9.19); their kernels are still held to the stream.
  bool check_copies_off_stream = true;
  // SASS function names of the analysed cubin (mangled). Empty: the name check is off (no SASS).
  std::vector<std::string> cubin_functions;
};

// The first tripwire a call reply trips, in the order a reader can act on: a CUDA error, a
// foreign module or kernel, a leftover process or thread, a kernel on a foreign stream, work
// outside the window, dropped CUPTI records. A leftover thread is reported before the
// out-of-window work it may cause, because whether that work lands in this call's records or
// the next one's is a race; the thread is not.
std::optional<Finding> reply_findings(const CallReply& reply, const ReplyCheckOptions& options);

// Whether a kernel name from a CUPTI record is one of the cubin's functions: equal as mangled
// names, as demangled ones, or by bare function identifier (`simt_gemm` for
// "(anonymous namespace)::simt_gemm(__nv_bfloat16 const*, ...)"). CUPTI and cuobjdump both give
// mangled names; the looser forms keep a demangler difference on either side from failing a
// legitimate kernel. The check is for library kernels (sm90_xmma_*, cutlass::*, ...), whose
// modules the hash check catches first anyway; a deliberate name clash only reaches that check.
bool kernel_in_cubin(const std::string& kernel, const std::vector<std::string>& cubin_functions);

// Anti-caching rewrites of the timing loop (design.md §3.4): before a verified call the set's
// inputs are rewritten in place. kFull regenerates every input (defeats a cache keyed by
// pointer); kBlock rewrites one random block of 1/256 of each input, so a cache keyed by a
// sample of the values most likely misses the change and returns the stale result.
enum class RefreshKind { kFull, kBlock };
// Whether a timed call is verified, drawn from the supervisor's secret generator: each call
// independently with probability `fraction`, early and late alike, so neither the call count
// nor the buffers tell a candidate which calls are checked. A third of the rewrites are full.
std::optional<RefreshKind> draw_verified_call(std::mt19937_64& secret, double fraction);
// One timed call in eight: about 6 of the first 50 samples, 50 of 400.
inline constexpr double kVerifiedCallFraction = 0.125;
const char* refresh_kind_name(RefreshKind kind);

// REWARD_HACK fresh_input_slowdown when the median device time of the calls made right after an
// in-place rewrite exceeds `limit` × the median of the other timed calls: a legitimate kernel's
// time does not depend on its input values; a result cache is fast only on repeats.
std::optional<Finding> fresh_input_finding(const std::vector<double>& fresh_ns,
                                           double repeat_median_ns, double limit);

// Bit-identical outputs for two different input sets (hash of every output tensor of the call,
// per set): REWARD_HACK cached_output. `seen` holds (set, hash) of the calls so far.
std::optional<Finding> cached_output_finding(const std::vector<std::pair<int, std::uint64_t>>& seen,
                                             int set, std::uint64_t output_hash);

}  // namespace ptxb
