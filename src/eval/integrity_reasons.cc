#include "eval/integrity_reasons.h"

namespace ptxb::reason {
namespace {

using S = PtxbStatus;

constexpr VerdictReason kReasons[] = {
    {kForeignStream, S::kRewardHack, "runner: CUPTI stream id of each of the call's kernels"},
    {kOutOfWindow, S::kRewardHack, "runner: CUPTI external-correlation attribution"},
    {kNoGpuWork, S::kRewardHack, "supervisor: correct outputs from a call with no activity"},
    {kLeftoverThread, S::kRewardHack, "runner: /proc/self/task before and after the call"},
    {kLeftoverProcess, S::kRewardHack, "runner: /proc/self/task/*/children after the call"},
    {kRuntimeModule, S::kForbidden, "runner: CUPTI module-load callback, SHA-256 of each cubin"},
    {kForeignKernel, S::kForbidden, "supervisor: kernel names vs the analysed cubin's functions"},
    {kCachedOutput, S::kRewardHack, "supervisor: output hashes across distinct input sets"},
    {kStaleOutput, S::kRewardHack, "supervisor: in-place input rewrites between timed calls"},
    {kFreshInputSlowdown, S::kRewardHack, "supervisor: time on fresh inputs vs the median"},
    {kInputModified, S::kRewardHack, "supervisor: input hash before and after each call"},
    {kUnwrittenOutput, S::kRewardHack, "supervisor: poison kept through two calls"},
    {kBelowPhysicalFloor, S::kRewardHack, "supervisor: median vs FLOPs/peak and bytes/bandwidth"},
    {kDeviceTimeExceedsBracket, S::kRewardHack, "supervisor: device time vs its own round trip"},
    {kBelowBatchBound, S::kRewardHack, "supervisor: CUPTI median vs its verified batch bound U"},
    {kBatchOutput, S::kRewardHack, "supervisor: every output of a verified batch"},
    {kLateOutput, S::kRewardHack, "supervisor: output sample at the reply vs after it"},
    {kBatchVoid, S::kRewardHack, "supervisor: its input writes before a batch vs calibration"},
    {kProfileMismatch, S::kRewardHack, "supervisor: ncu's profiled call vs the timed calls"},
    {kInsufficientWork, S::kRewardHack,
     "supervisor: ncu's tensor and FMA counters of the profiled call vs the task's FLOP model"},
    {kMismatch, S::kIncorrectNumerical, "supervisor: element rule |x-ref| > atol and > rtol|ref|"},
    {kNonfiniteOutput, S::kIncorrectNumerical, "supervisor: NaN/Inf in the candidate's output"},
    {kNonfiniteReference, S::kInvalidReference, "supervisor: NaN/Inf in the reference"},
    {kCallTimeout, S::kTimeout, "supervisor: per-call limit, process group killed"},
    {kRunnerCrashed, S::kRuntimeError, "supervisor: runner ended by a signal during a call"},
    {kRunnerExited, S::kRuntimeError, "supervisor: runner exited during a call"},
    {kCallFailed, S::kRuntimeError, "supervisor: the call request failed"},
    {kLoadFailed, S::kRuntimeError, "runner: dlopen/dlsym of kernel.so"},
    {kIllegalAddress, S::kMemoryError, "runner: sticky CUDA memory fault"},
    {kCudaError, S::kRuntimeError, "runner: other CUDA error"},
    {kSandboxSeccomp, S::kForbidden, "sandbox: seccomp trap (SIGSYS) of the runner or profiler"},
    {kSandboxCpuLimit, S::kRuntimeError, "sandbox: RLIMIT_CPU (SIGXCPU)"},
    {kSandboxFileSizeLimit, S::kRuntimeError, "sandbox: RLIMIT_FSIZE (SIGXFSZ)"},
    {kSandboxUnavailable, S::kInfraError, "supervisor: ptxbench-sandbox not found"},
    {kSandboxSetup, S::kInfraError, "sandbox: launcher failure or weaker self-report"},
    {kReferenceDrift, S::kInfraError, "supervisor: a reference block vs its solo calibration"},
    {kForbiddenHeader, S::kForbidden, "compile: header allow-list (preprocessor line markers)"},
    {kForbiddenSymbol, S::kForbidden, "compile: undefined-symbol allow-list (.dynsym)"},
};

}  // namespace

std::span<const VerdictReason> verdict_reasons() {
  return kReasons;
}

std::optional<VerdictReason> find_verdict_reason(std::string_view reason) {
  reason = reason.substr(0, reason.find(':'));
  for (const auto& r : kReasons)
    if (r.reason == reason) return r;
  return std::nullopt;
}

}  // namespace ptxb::reason
