// The machine-readable reasons of the verdicts a candidate can get (design.md §3.1: every finer
// status carries one), in one place: the evaluator uses these constants, docs/integrity.md lists
// them with the check that produces each, and the adversarial suite's manifest
// (testdata/integrity/expected.json) may only name reasons that appear in kVerdictReasons.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "trace/trace.h"

namespace ptxb::reason {

// ---- integrity: the candidate's work must be exactly its own kernels, in the call's window ----
// A kernel of the call ran on a stream other than the one passed to `run` (legacy default
// stream included).
inline constexpr std::string_view kForeignStream = "foreign_stream";
// GPU work not attributed to the call: enqueued by another thread, by a static initialiser, or
// after `run` returned.
inline constexpr std::string_view kOutOfWindow = "out_of_window";
// The call's outputs are right but the call enqueued no GPU work at all: the work happened
// outside the window (or the activity record was suppressed).
inline constexpr std::string_view kNoGpuWork = "no_gpu_work";
// A thread started by candidate code was still alive after `run` returned (and the device was
// synchronized).
inline constexpr std::string_view kLeftoverThread = "leftover_thread";
// A child process of the runner was alive after `run` returned.
inline constexpr std::string_view kLeftoverProcess = "leftover_process";
// A CUDA module whose hash is not the analysed cubin's was loaded (PTX JIT, a library).
inline constexpr std::string_view kRuntimeModule = "runtime_module";
// A kernel ran whose name is not a function of the analysed cubin (a library's kernel).
inline constexpr std::string_view kForeignKernel = "foreign_kernel";

// ---- integrity: results must be computed from this call's inputs ----
// Two calls on distinct input sets produced bit-identical outputs (a cache that ignores its key).
inline constexpr std::string_view kCachedOutput = "cached_output";
// Wrong outputs right after the inputs of a set were rewritten in place (fully, or one block of
// each input): a cache keyed by pointer or by a sample of the values.
inline constexpr std::string_view kStaleOutput = "stale_output";
// Calls on freshly rewritten inputs are much slower than the other calls: results are cached
// by content and only the timed repeats are fast.
inline constexpr std::string_view kFreshInputSlowdown = "fresh_input_slowdown";
// An input tensor changed during the call.
inline constexpr std::string_view kInputModified = "input_modified";
// Output elements kept the poison pattern in two consecutive calls with different patterns.
inline constexpr std::string_view kUnwrittenOutput = "unwritten_output";

// ---- integrity: times must be physically possible ----
inline constexpr std::string_view kBelowPhysicalFloor = "below_physical_floor";
inline constexpr std::string_view kDeviceTimeExceedsBracket = "device_time_exceeds_bracket";
// ---- integrity: the batch bound (docs/integrity.md "The batch bound") ----
// The in-process (CUPTI) median is below half of U, the per-call time the supervisor measured
// around a verified batch with its own clock: the reported times were forged.
inline constexpr std::string_view kBelowBatchBound = "below_batch_bound";
// A call of a batch left a wrong output (right in the ordinary calls, wrong when calls run back
// to back without a reply in between).
inline constexpr std::string_view kBatchOutput = "batch_output";
// Sampled output blocks changed after the runner had replied to a batch: the reply came before
// the work was done.
inline constexpr std::string_view kLateOutput = "late_output";
// Every batch was void: the supervisor's own input writes before it ran clearly slower than
// their calibration, i.e. candidate work was running on the GPU between calls.
inline constexpr std::string_view kBatchVoid = "batch_void";
// The call Nsight Compute profiled (a second runner, driven like the timed one) launched other
// kernels or shapes than the timed calls, or its GPU time is outside the band around the timed
// median: the code that was profiled is not the code that was timed (design.md §3.6).
inline constexpr std::string_view kProfileMismatch = "profile_mismatch";
// The profiled call executed less than kMinWorkFraction of the task's FLOP model (tensor-core
// and FMA arithmetic from ncu's counters; eval/work_done.h): work was skipped.
inline constexpr std::string_view kInsufficientWork = "insufficient_work";

// ---- correctness ----
inline constexpr std::string_view kMismatch = "mismatch";
inline constexpr std::string_view kNonfiniteOutput = "nonfinite_output";
inline constexpr std::string_view kNonfiniteReference = "nonfinite_reference";

// ---- faults of the candidate's process ----
inline constexpr std::string_view kCallTimeout = "call_timeout";
inline constexpr std::string_view kRunnerCrashed = "runner_crashed";
inline constexpr std::string_view kRunnerExited = "runner_exited";
inline constexpr std::string_view kCallFailed = "call_failed";
inline constexpr std::string_view kLoadFailed = "load_failed";
inline constexpr std::string_view kIllegalAddress = "illegal_address";
inline constexpr std::string_view kCudaError = "cuda_error";

// ---- the sandbox (supervisor/eval_sandbox.h; docs/integrity.md "Sandbox") ----
// FORBIDDEN: the seccomp filter stopped a call; the call's name follows after a colon
// ("sandbox_seccomp:ptrace") when the runner could report it.
inline constexpr std::string_view kSandboxSeccomp = "sandbox_seccomp";
// RUNTIME_ERROR: the process reached RLIMIT_CPU / RLIMIT_FSIZE.
inline constexpr std::string_view kSandboxCpuLimit = "sandbox_cpu_limit";
inline constexpr std::string_view kSandboxFileSizeLimit = "sandbox_file_size_limit";
// INFRA_ERROR: ptxbench-sandbox is missing, or could not set the sandbox up (or set up a
// weaker one than asked for). Nothing untrusted ran.
inline constexpr std::string_view kSandboxUnavailable = "sandbox_unavailable";
inline constexpr std::string_view kSandboxSetup = "sandbox_setup";
// Interleaved timing: a reference block moved more than drift_limit from the solo calibration, or
// ran that much slower right after the candidate (eval/interleave.h 4).
inline constexpr std::string_view kReferenceDrift = "reference_drift";

// ---- compile stage (compile/compiler.cc) ----
inline constexpr std::string_view kForbiddenHeader = "forbidden_header";
inline constexpr std::string_view kForbiddenSymbol = "forbidden_symbol";

struct VerdictReason {
  std::string_view reason;
  PtxbStatus status;
  std::string_view check;  // where it is decided (docs/integrity.md's "check" column)
};

// Every reason above with its status. Integrity reasons are REWARD_HACK or FORBIDDEN.
std::span<const VerdictReason> verdict_reasons();
// A reason with a detail after a colon ("sandbox_seccomp:socket") is found by its prefix.
std::optional<VerdictReason> find_verdict_reason(std::string_view reason);

}  // namespace ptxb::reason
