#include "runner/attribution.h"

#include <gtest/gtest.h>

namespace ptxb {
namespace {

ActivityRecord record(const char* kind, const char* name, std::uint32_t stream,
                      std::uint32_t correlation, std::uint64_t start, std::uint64_t end) {
  ActivityRecord r;
  r.kind = kind;
  r.name = name;
  r.stream_id = stream;
  r.correlation_id = correlation;
  r.start_ns = start;
  r.end_ns = end;
  return r;
}

// Correlations: 10, 11 → call 5 (CUSTOM0); 20 → harness (CUSTOM1); 30 → call 4; 40 absent.
CorrelationTable table() {
  return {{10, {false, 5}}, {11, {false, 5}}, {20, {true, 1}}, {30, {false, 4}}};
}

AttributionInput input(bool keep = false) {
  AttributionInput in;
  in.call_external_id = 5;
  in.expected_stream_id = 7;
  in.host_start_ns = 50;
  in.host_end_ns = 1000;
  in.keep_activity = keep;
  in.legacy_stream_id = 1;  // the context's legacy default stream
  return in;
}

ActivityRecord async_record(const char* kind, std::uint32_t stream, std::uint32_t correlation,
                            std::uint64_t start, std::uint64_t end) {
  ActivityRecord r = record(kind, kind, stream, correlation, start, end);
  r.async = true;
  return r;
}

TEST(Attribution, WindowSpansFirstStartToLastEndOfTheCallsRecords) {
  CallReply reply;
  attribute_call(
      {record("kernel", "k2", 7, 11, 300, 500), record("memset", "memset", 7, 10, 100, 120),
       record("memset", "flush", 7, 20, 0, 90)},
      table(), input(true), reply);
  ASSERT_TRUE(reply.has_window);
  EXPECT_EQ(reply.window_start_ns, 100u);
  EXPECT_EQ(reply.window_end_ns, 500u);
  EXPECT_EQ(reply.device_ns, 400u);
  EXPECT_EQ(reply.kernel_count, 1u);
  EXPECT_EQ(reply.memset_count, 1u);
  EXPECT_TRUE(reply.out_of_window.empty());  // the harness flush is neither counted nor flagged
  ASSERT_EQ(reply.activity.size(), 2u);
  EXPECT_EQ(reply.activity[0].name, "memset");  // sorted by start
  EXPECT_EQ(reply.activity[1].external_id, 5u);
}

TEST(Attribution, CallSpansOfATimedBatchAreTakenPerCallId) {
  // Calls 4 and 5 of a timed batch (correlations 30 and 10/11); the harness flush (20) and an
  // unattributed record (40) are not anyone's time.
  const auto spans = call_spans(
      {record("kernel", "k", 7, 30, 1000, 1400), record("kernel", "k2", 7, 11, 2300, 2500),
       record("memset", "m", 7, 10, 2000, 2050), record("memset", "flush", 7, 20, 0, 3000),
       record("kernel", "x", 7, 40, 0, 9000)},
      table(), 4, 3);
  EXPECT_EQ(spans, (std::vector<std::uint64_t>{400, 500, 0}));  // call 6 recorded nothing
}

TEST(Attribution, KernelOnAnotherStreamIsForeignButCopiesAreTolerated) {
  CallReply reply;
  attribute_call(
      {record("kernel", "legacy", 1, 10, 100, 200), record("memcpy", "memcpy HtoD", 1, 11, 50, 60),
       record("kernel", "good", 7, 11, 210, 300)},
      table(), input(), reply);
  ASSERT_EQ(reply.foreign_stream.size(), 1u);
  EXPECT_EQ(reply.foreign_stream[0].name, "legacy");
  EXPECT_EQ(reply.kernel_count, 2u);
  EXPECT_EQ(reply.memcpy_count, 1u);
  EXPECT_EQ(reply.window_start_ns, 50u);  // the legacy-stream copy is timed with the call
  EXPECT_TRUE(reply.activity.empty());    // collect off
  // Every kernel of the call is named once, whatever its stream (the foreign-kernel check).
  EXPECT_EQ(reply.kernel_names, (std::vector<std::string>{"legacy", "good"}));
}

TEST(Attribution, SynchronousLegacyCopiesAndMemsetsAreToleratedAndMarked) {
  CallReply reply;
  attribute_call({record("memcpy", "memcpy HtoD", 1, 10, 50, 60),
                  record("memset", "memset", 1, 11, 70, 80), record("kernel", "k", 7, 11, 90, 99)},
                 table(), input(true), reply);
  EXPECT_TRUE(reply.foreign_stream.empty());
  EXPECT_EQ(reply.memcpy_count, 1u);
  EXPECT_EQ(reply.memset_count, 1u);
  ASSERT_EQ(reply.activity.size(), 3u);
  EXPECT_TRUE(reply.activity[0].legacy_stream);
  EXPECT_FALSE(reply.activity[0].async);
  EXPECT_FALSE(reply.activity[2].legacy_stream);  // the call's own stream
}

TEST(Attribution, AsyncCopyOrMemsetOffTheCallsStreamIsForeign) {
  CallReply reply;
  // A private stream (9), and async work on the legacy stream (1): both off-stream, both async.
  attribute_call({async_record("memcpy", 9, 10, 50, 60), async_record("memset", 1, 11, 70, 80),
                  async_record("memcpy", 7, 11, 90, 95), record("kernel", "k", 7, 11, 96, 99)},
                 table(), input(), reply);
  ASSERT_EQ(reply.foreign_stream.size(), 2u);
  EXPECT_EQ(reply.foreign_stream[0].kind, "memcpy");
  EXPECT_EQ(reply.foreign_stream[0].stream_id, 9u);
  EXPECT_FALSE(reply.foreign_stream[0].legacy_stream);
  EXPECT_EQ(reply.foreign_stream[1].kind, "memset");
  EXPECT_TRUE(reply.foreign_stream[1].legacy_stream);
  EXPECT_EQ(reply.memcpy_count, 2u);  // counted and timed with the call all the same
}

TEST(Attribution, SynchronousCopyOnAPrivateStreamIsForeign) {
  // Only the legacy stream's synchronous copies are tolerated; a record that is not async but
  // sits on another stream (a per-thread default stream, say) is not the documented exception.
  CallReply reply;
  attribute_call({record("memcpy", "memcpy DtoD", 9, 10, 50, 60)}, table(), input(), reply);
  ASSERT_EQ(reply.foreign_stream.size(), 1u);
}

TEST(Attribution, WithoutTheLegacyStreamsIdNoOffStreamWorkIsTolerated) {
  AttributionInput in = input();
  in.legacy_stream_id.reset();
  CallReply reply;
  attribute_call({record("memset", "memset", 1, 10, 50, 60)}, table(), in, reply);
  ASSERT_EQ(reply.foreign_stream.size(), 1u);
  EXPECT_FALSE(reply.foreign_stream[0].legacy_stream);
}

TEST(Attribution, KernelOnTheLegacyStreamIsForeignEvenWhenCopiesThereAreNot) {
  CallReply reply;
  attribute_call({record("kernel", "legacy", 1, 10, 50, 60)}, table(), input(), reply);
  ASSERT_EQ(reply.foreign_stream.size(), 1u);
  EXPECT_TRUE(reply.foreign_stream[0].legacy_stream);
}

TEST(Attribution, KernelNamesAreDistinctAndOnlyTheCalls) {
  CallReply reply;
  attribute_call({record("kernel", "k", 7, 10, 100, 200), record("kernel", "k", 7, 11, 210, 300),
                  record("kernel", "late", 7, 40, 400, 500)},
                 table(), input(), reply);
  EXPECT_EQ(reply.kernel_names, std::vector<std::string>{"k"});
}

TEST(Attribution, UnattributedAndOtherCallRecordsAreOutOfWindowWithTheirRelation) {
  CallReply reply;
  attribute_call(
      {record("kernel", "call", 7, 10, 100, 200), record("kernel", "thread-early", 9, 40, 10, 20),
       record("kernel", "thread-during", 9, 41, 150, 250),
       record("kernel", "late", 7, 30, 300, 400)},
      table(), input(), reply);
  ASSERT_EQ(reply.out_of_window.size(), 3u);
  EXPECT_EQ(reply.out_of_window[0].name, "thread-early");
  EXPECT_EQ(reply.out_of_window[0].relation, "before");
  EXPECT_EQ(reply.out_of_window[0].attribution, "unattributed");
  EXPECT_EQ(reply.out_of_window[1].relation, "during");
  EXPECT_EQ(reply.out_of_window[2].attribution, "other_call");
  EXPECT_EQ(reply.out_of_window[2].external_id, 4u);
  EXPECT_EQ(reply.out_of_window[2].relation, "after");
  EXPECT_EQ(reply.device_ns, 100u);  // out-of-window work never stretches the window
}

TEST(Attribution, WithoutOwnRecordsTheHostBracketIsTheReference) {
  CallReply reply;
  attribute_call(
      {record("kernel", "thread", 9, 40, 500, 600), record("kernel", "after", 9, 41, 2000, 2100)},
      table(), input(), reply);
  EXPECT_FALSE(reply.has_window);
  EXPECT_EQ(reply.device_ns, 0u);
  EXPECT_EQ(reply.kernel_count, 0u);
  ASSERT_EQ(reply.out_of_window.size(), 2u);
  EXPECT_EQ(reply.out_of_window[0].relation, "during");
  EXPECT_EQ(reply.out_of_window[1].relation, "after");
}

TEST(Attribution, LaunchShapesOfTheCallsKernelsOnly) {
  CallReply reply;
  ActivityRecord a = record("kernel", "k", 7, 10, 100, 200);
  a.grid = {132, 1, 1};
  a.block = {384, 1, 1};
  ActivityRecord b = a;
  b.correlation_id = 11;
  b.start_ns = 210;
  b.end_ns = 300;
  ActivityRecord elsewhere = a;  // another call's kernel: not this call's shape
  elsewhere.correlation_id = 30;
  elsewhere.grid = {1, 1, 1};
  attribute_call({a, b, elsewhere}, table(), input(), reply);
  ASSERT_EQ(reply.kernel_launches.size(), 1u);
  EXPECT_EQ(reply.kernel_launches[0].name, "k");
  EXPECT_EQ(reply.kernel_launches[0].grid, a.grid);
  EXPECT_EQ(reply.kernel_launches[0].count, 2u);
  EXPECT_EQ(reply.kernel_launches[0].device_ns, 190u);  // (200 - 100) + (300 - 210)
}

}  // namespace
}  // namespace ptxb
