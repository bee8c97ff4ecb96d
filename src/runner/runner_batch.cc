// The batch request (docs/runner.md "Protocol", docs/integrity.md "The batch bound"): K calls on
// K input sets back to back on the runner's stream, one synchronize, one reply.
//
// For the batch bound nothing here measures time: the supervisor stamps the batch with its own
// clock and verifies every call's outputs from its own context, so whatever candidate code does
// to this process (its replies included) cannot make the bound smaller than the real work. No
// L2 flush sits between the calls: the supervisor rotates over sets much larger than L2
// instead, so the bracket holds only the candidate's work.
// A `timed` batch with `flush_l2` is the paper's recipe instead (supervisor/stage_paper.cc):
// back-to-back calls with a flush before each, every call's CUPTI span reported.
#include <cuda_runtime_api.h>

#include "runner/activity_collector.h"
#include "runner/attribution.h"
#include "runner/module_watch.h"
#include "runner/runner_service.h"

namespace ptxb {

Result<Json> RunnerService::handle_batch(const Json& request) {
  PTXB_ASSIGN_OR_RETURN(BatchRequest batch, batch_request_from_json(request));
  if (sets_.set_count() == 0) return make_error("sequence", "batch before a successful bind");
  for (std::uint64_t set : batch.sets)
    if (set >= sets_.set_count())
      return make_error("bad_request", "set {} out of range ({} sets bound)", set,
                        sets_.set_count());

  BatchReply reply;
  // Persisting-L2 state is reset before a batch as before every timed call; no flush between
  // the calls (see above).
  CallReply prepared;
  prepare_l2(/*flush=*/false, prepared);
  if (prepared.cuda_error) {
    reply.cuda_error = prepared.cuda_error;
    return to_json(reply);
  }
  if (batch.timed && !cupti_)
    return make_error("bad_request", "a timed batch needs CUPTI (this runner runs without it)");
  const InvokeFunction invoke = candidate_.invoke();
  const std::uint64_t first_id = call_count_ + 1;
  for (std::uint64_t set : batch.sets) {
    // The paper's recipe flushes L2 before every call (harness work, outside the call's id).
    if (batch.flush_l2) {
      CallReply flushed;
      prepare_l2(/*flush=*/true, flushed);
      if (flushed.cuda_error) {
        reply.cuda_error = flushed.cuda_error;
        return to_json(reply);
      }
    }
    // Each call gets its own CUSTOM0 id, as a timed call does, so the activity of a batch is
    // never taken for the harness's.
    ++call_count_;
    {
      CandidatePhase phase;
      auto window = correlation(false, call_count_);
      invoke(sets_.params(set));
    }
    ++reply.calls;
  }
  const cudaError_t synced = cudaStreamSynchronize(stream_);
  if (synced != cudaSuccess && !reply.cuda_error)
    reply.cuda_error = cuda_error_info(synced, "cudaStreamSynchronize");
  {
    auto harness = correlation(true, kHarnessExternalId);
    const cudaError_t device = cudaDeviceSynchronize();
    if (device != cudaSuccess && !reply.cuda_error)
      reply.cuda_error = cuda_error_info(device, "cudaDeviceSynchronize");
  }
  if (batch.timed && !reply.cuda_error) {
    // Each call's CUPTI span, as a timed call reports it, from the records under its id. (After
    // a CUDA error the error is the answer; CUPTI may refuse to flush then.)
    ActivityCollector& collector = ActivityCollector::instance();
    PTXB_RETURN_IF_ERROR(collector.flush());
    const std::vector<ActivityRecord> records = collector.take_records();
    collector.with_correlations([&](const CorrelationTable& table) {
      reply.device_ns = call_spans(records, table, first_id, batch.sets.size());
    });
  } else if (cupti_) {
    // The batch's records are not attributed to a call (the batch is judged from outside); they
    // are dropped so that the next call's out-of-window analysis starts clean. After the reply:
    // a CUPTI flush costs most of a millisecond, which would only add to the overhead O that
    // the supervisor subtracts (and to its noise).
    after_reply_ = [] {
      ActivityCollector& collector = ActivityCollector::instance();
      if (collector.flush().ok()) (void)collector.take_records();
    };
  }
  CallReply leftovers;
  report_leftovers(leftovers);
  reply.leftover_threads = std::move(leftovers.leftover_threads);
  reply.leftover_processes = std::move(leftovers.leftover_processes);
  return to_json(reply);
}

}  // namespace ptxb
