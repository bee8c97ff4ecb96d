// Which CUPTI records belong to a call, and what the call's device window is (design.md §3.4).
//
// The runner pushes a CUPTI external correlation id around each call (kind CUSTOM0, one id per
// call) and around its own GPU work (kind CUSTOM1: L2 flush, buffer setup). CUPTI then emits an
// EXTERNAL_CORRELATION record mapping the correlation id of every CUDA API call made on that
// thread inside the push/pop to our id (cupti_activity.h, cuptiActivityPushExternalCorrelationId),
// and each kernel/memcpy/memset record carries the correlation id of the API call that enqueued
// it. Attribution is therefore by *who enqueued the work*, not by when it ran: a kernel launched
// by another thread of the candidate, or after `run` returned, has no pushed id and can never
// count as this call's work — it is reported as out-of-window instead.
//
// Pure C++ so the rules are unit-tested without a GPU; the runner feeds it the records it
// collected (src/runner/activity_collector.*).
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "protocol/protocol.h"

namespace ptxb {

// External id namespace of a correlation (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0/1).
struct ExternalTag {
  bool harness = false;  // CUSTOM1: the runner's own work
  std::uint64_t id = 0;
};

// CUPTI correlation id (of an API call) → the external id pushed when it was made.
using CorrelationTable = std::unordered_map<std::uint32_t, ExternalTag>;

struct AttributionInput {
  std::uint64_t call_external_id = 0;
  std::uint32_t expected_stream_id = 0;
  // CUPTI id of the context's legacy default stream (cuptiGetStreamIdEx of the NULL stream);
  // nullopt when unknown: then no off-stream copy or memset is tolerated.
  std::optional<std::uint32_t> legacy_stream_id;
  std::uint64_t host_start_ns = 0;  // CUPTI clock at push
  std::uint64_t host_end_ns = 0;    // CUPTI clock after the stream synchronize
  bool keep_activity = false;       // copy this call's records into reply.activity
};

// Classifies `records` (kernel/memcpy/memset records flushed since the previous call; each with
// attribution empty) and fills reply's window, counts, foreign_stream, out_of_window and
// (keep_activity) activity. Harness records are dropped; every record gets legacy_stream set.
// Records of this call on a stream other than expected_stream_id go to foreign_stream
// (design.md §3.2 violation) unless off_stream_tolerated(); tolerated ones stay in the window.
// The one stream rule (docs/integrity.md): all GPU work of a call belongs to its stream. The
// single exception is a copy or memset issued *synchronously* on the legacy default stream
// (cudaMemcpy, cudaMemset, cudaMemcpyToSymbol: common in model-written code, and the host
// waits for it inside `run`, so it is timed with the call). A kernel anywhere else, or an
// async copy/memset on any other stream (a private one or the legacy one), is foreign.
// Host functions (cudaLaunchHostFunc) leave no activity record; on the call's stream they are
// ordinary stream work.
bool off_stream_tolerated(const ActivityRecord& record);

void attribute_call(std::vector<ActivityRecord> records, const CorrelationTable& correlations,
                    const AttributionInput& input, CallReply& reply);

// The CUPTI span (first start to last end of the records made under the call's external id) of
// each of `count` consecutive calls with ids first_id, first_id + 1, ...; 0 for a call that
// recorded nothing. Harness and unattributed records are ignored (a timed batch: the paper's
// recipe, supervisor/paper_timing.cc).
std::vector<std::uint64_t> call_spans(const std::vector<ActivityRecord>& records,
                                      const CorrelationTable& correlations, std::uint64_t first_id,
                                      std::size_t count);

}  // namespace ptxb
