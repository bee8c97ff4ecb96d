#include "runner/attribution.h"

#include <algorithm>

namespace ptxb {
namespace {

const char* relation_to(const ActivityRecord& record, std::uint64_t start, std::uint64_t end) {
  if (record.end_ns <= start) return "before";
  if (record.start_ns >= end) return "after";
  return "during";
}

}  // namespace

bool off_stream_tolerated(const ActivityRecord& record) {
  const bool copy_or_set = record.kind == "memcpy" || record.kind == "memset";
  return copy_or_set && record.legacy_stream && !record.async;
}

std::vector<std::uint64_t> call_spans(const std::vector<ActivityRecord>& records,
                                      const CorrelationTable& correlations, std::uint64_t first_id,
                                      std::size_t count) {
  std::vector<std::uint64_t> start(count, ~0ull), end(count, 0);
  for (const auto& record : records) {
    auto tag = correlations.find(record.correlation_id);
    if (tag == correlations.end() || tag->second.harness) continue;
    if (tag->second.id < first_id || tag->second.id - first_id >= count) continue;
    const std::size_t i = tag->second.id - first_id;
    start[i] = std::min(start[i], record.start_ns);
    end[i] = std::max(end[i], record.end_ns);
  }
  std::vector<std::uint64_t> spans(count, 0);
  for (std::size_t i = 0; i < count; ++i)
    if (end[i] > start[i] && start[i] != ~0ull) spans[i] = end[i] - start[i];
  return spans;
}

void attribute_call(std::vector<ActivityRecord> records, const CorrelationTable& correlations,
                    const AttributionInput& input, CallReply& reply) {
  // Device order makes the reply readable and the window computation obvious.
  std::sort(records.begin(), records.end(), [](const ActivityRecord& a, const ActivityRecord& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.correlation_id < b.correlation_id;
  });

  std::vector<ActivityRecord> others;
  reply.has_window = false;
  reply.window_start_ns = reply.window_end_ns = reply.device_ns = 0;
  reply.kernel_count = reply.memcpy_count = reply.memset_count = 0;
  reply.kernel_names.clear();
  reply.kernel_launches.clear();
  reply.expected_stream_id = input.expected_stream_id;

  for (auto& record : records) {
    record.legacy_stream = input.legacy_stream_id && record.stream_id == *input.legacy_stream_id;
    auto tag = correlations.find(record.correlation_id);
    if (tag == correlations.end()) {
      record.attribution = "unattributed";
      others.push_back(std::move(record));
      continue;
    }
    if (tag->second.harness) continue;  // the runner's own flush/setup work
    record.external_id = tag->second.id;
    if (tag->second.id != input.call_external_id) {
      record.attribution = "other_call";
      others.push_back(std::move(record));
      continue;
    }
    record.attribution = "call";
    if (!reply.has_window) {
      reply.has_window = true;
      reply.window_start_ns = record.start_ns;
      reply.window_end_ns = record.end_ns;
    }
    reply.window_start_ns = std::min(reply.window_start_ns, record.start_ns);
    reply.window_end_ns = std::max(reply.window_end_ns, record.end_ns);
    if (record.kind == "kernel") {
      ++reply.kernel_count;
      if (std::find(reply.kernel_names.begin(), reply.kernel_names.end(), record.name) ==
          reply.kernel_names.end())
        reply.kernel_names.push_back(record.name);
      note_kernel_launch(reply.kernel_launches, record);
    } else if (record.kind == "memcpy") {
      ++reply.memcpy_count;
    } else if (record.kind == "memset") {
      ++reply.memset_count;
    }
    if (record.stream_id != input.expected_stream_id && !off_stream_tolerated(record))
      reply.foreign_stream.push_back(record);
    if (input.keep_activity) reply.activity.push_back(std::move(record));
  }
  if (reply.has_window) reply.device_ns = reply.window_end_ns - reply.window_start_ns;

  // Without records of its own, the call's host bracket is the reference for "during".
  const std::uint64_t start = reply.has_window ? reply.window_start_ns : input.host_start_ns;
  const std::uint64_t end = reply.has_window ? reply.window_end_ns : input.host_end_ns;
  for (auto& record : others) {
    record.relation = relation_to(record, start, end);
    reply.out_of_window.push_back(std::move(record));
  }
}

}  // namespace ptxb
