// The runner's request loop (docs/runner.md): one candidate per process, one channel, strictly
// request/response. The runner reports facts — CUPTI records, module hashes, CUDA error names —
// and never decides or prints a verdict (design.md §3.3).
//
// Exit codes of `ptxbench-runner --channel-fd N` (the supervisor reads them only as a
// diagnosis; a crash shows as a signal instead):
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/json_io.h"
#include "core/result.h"
#include "cuda/l2_flush.h"
#include "protocol/protocol.h"
#include "runner/activity_collector.h"
#include "runner/bound_sets.h"
#include "runner/candidate_library.h"
#include "runner/nvml_clock.h"
#include "runner/process_census.h"

namespace ptxb {

inline constexpr int kRunnerExitOk = 0;             // after `shutdown`
inline constexpr int kRunnerExitUsage = 1;          // bad command line
inline constexpr int kRunnerExitMalformed = 2;      // malformed/oversize/truncated message
inline constexpr int kRunnerExitChannelClosed = 3;  // supervisor went away without `shutdown`
inline constexpr int kRunnerExitInitFailed = 4;     // CUDA/CUPTI set-up failed (after replying)
inline constexpr int kRunnerExitCandidateExit = 5;  // the candidate called exit() (atexit guard)

// A CUDA error as the protocol reports it: its name, its text and the runner step that saw it.
CudaErrorInfo cuda_error_info(cudaError_t status, const char* where);

class RunnerService {
 public:
  // `cupti` false (`--no-cupti`): the runner under Nsight Compute, which owns CUPTI in the
  // process (a second subscriber is refused). Calls then report no records, no window and no
  // modules — the supervisor reads that runner's kernels from the profiler instead.
  explicit RunnerService(int channel_fd, bool cupti = true)
      : channel_fd_(channel_fd), cupti_(cupti) {}
  // Serves requests until shutdown or a fatal channel problem; returns the exit code.
  int serve();

 private:
  Result<Json> handle_hello();
  Result<Json> handle_load(const Json& request);
  Result<Json> handle_bind(const Json& request);
  Result<Json> handle_call(const Json& request);
  // runner_batch.cc: K calls back to back, one synchronize, one reply (the batch bound).
  Result<Json> handle_batch(const Json& request);
  Status initialize_gpu();
  // Before every call, outside the window: persisting-L2 state reset, then the flush.
  void prepare_l2(bool flush, CallReply& reply);
  void report_leftovers(CallReply& reply);
  // The CUPTI external-correlation scope (none without CUPTI).
  std::optional<ExternalCorrelationScope> correlation(bool harness, std::uint64_t id) const;
  // The call's records, window and modules from CUPTI (skipped without CUPTI).
  Status collect_activity(const CallRequest& call, CallReply& reply);

  int channel_fd_;
  bool cupti_ = true;
  // Harness work a handler leaves for after its reply is written (runner_batch.cc).
  std::function<void()> after_reply_;
  bool gpu_ready_ = false;
  cudaStream_t stream_ = nullptr;
  std::uint32_t stream_id_ = 0;  // CUPTI's id of stream_ (cuptiGetStreamIdEx)
  L2Flush l2_flush_;
  NvmlClock nvml_;
  CandidateLibrary candidate_;
  BoundSets sets_;
  std::uint64_t call_count_ = 0;
  HelloReply hello_;
  std::optional<std::uint32_t> legacy_stream_id_;  // CUPTI's id of the legacy default stream
  ThreadCensus thread_census_;                     // sealed at the end of initialize_gpu
};

}  // namespace ptxb
