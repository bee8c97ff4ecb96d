// CUPTI activity collection for the runner (design.md §3.4, docs/runner.md "Timing").
//
// Enabled kinds: CONCURRENT_KERNEL, MEMCPY, MEMSET (the work that is timed), EXTERNAL_CORRELATION
// (how that work is attributed to a call, runner/attribution.h) and RUNTIME + DRIVER: CUPTI only
// emits an external-correlation record for an *API activity record* created inside a push/pop
// region (cupti_activity.h, cuptiActivityPushExternalCorrelationId), so API tracing must be on
// for the correlation to exist. API records themselves are counted and dropped.
//
// CUPTI hands completed buffers to a C callback (possibly on its own thread), so the collector
// is a process-wide singleton whose state is guarded by a mutex. Records are copied out of the
// buffers at once (kernel names included: CUPTI owns those strings).
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <cstdint>
#include <mutex>
#include <vector>

#include "core/result.h"
#include "protocol/protocol.h"
#include "runner/attribution.h"

namespace ptxb {

class ActivityCollector {
 public:
  static ActivityCollector& instance();

  // Registers the buffer callbacks and enables the kinds above. Call before the first CUDA call
  // (CUPTI recommends enabling before context creation so nothing is missed).
  Status start();
  // Forces CUPTI to hand over every buffer, complete or not (CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  // call after a device synchronize so that all records of finished work exist.
  Status flush();
  // Moves out the kernel/memcpy/memset records gathered since the previous take.
  std::vector<ActivityRecord> take_records();
  // Runs `visit` on every correlation seen so far (correlation id → pushed external id), under
  // the lock (the table grows with every API call; it is not copied per call).
  template <typename Visit>
  void with_correlations(Visit&& visit) const {
    std::lock_guard<std::mutex> lock(mutex_);
    visit(correlations_);
  }
  std::uint64_t dropped_records() const;
  std::uint64_t api_records() const;

  // CUPTI buffer callbacks (cuptiActivityRegisterCallbacks).
  static void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                           size_t size, size_t valid_size);

 private:
  ActivityCollector() = default;
  void consume(uint8_t* buffer, size_t valid_size);

  mutable std::mutex mutex_;
  std::vector<ActivityRecord> records_;
  CorrelationTable correlations_;
  std::uint64_t dropped_ = 0;
  std::uint64_t api_records_ = 0;
  bool started_ = false;
};

// RAII push/pop of a CUPTI external correlation id on the calling thread.
class ExternalCorrelationScope {
 public:
  ExternalCorrelationScope(bool harness, std::uint64_t id);
  ~ExternalCorrelationScope();
  ExternalCorrelationScope(const ExternalCorrelationScope&) = delete;
  ExternalCorrelationScope& operator=(const ExternalCorrelationScope&) = delete;

 private:
  CUpti_ExternalCorrelationKind kind_;
  bool pushed_ = false;
};

// The runner's own GPU work (flush, buffer setup) runs inside this scope: its records are tagged
// CUSTOM1 and never counted as a call's (attribution "harness").
inline constexpr std::uint64_t kHarnessExternalId = 1;

}  // namespace ptxb
