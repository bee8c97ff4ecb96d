#include "runner/activity_collector.h"

#include <cstdio>
#include <cstdlib>

#include "cuda/cuda_check.h"

namespace ptxb {
namespace {

// CUPTI buffers: 8 MiB holds ~30k kernel records, far more than one call produces; CUPTI asks
// for another buffer when one fills, so this bounds memory per buffer, not records per call.
constexpr size_t kActivityBufferBytes = 8u << 20;
// CUPTI requires 8-byte aligned activity buffers (cupti_activity.h,
// CUpti_BuffersCallbackRequestFunc).
constexpr size_t kActivityBufferAlign = 8;

const char* memcpy_kind_name(uint8_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "memcpy HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "memcpy DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "memcpy DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "memcpy HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "memcpy PtoP";
    default:
      return "memcpy";
  }
}

}  // namespace

ActivityCollector& ActivityCollector::instance() {
  static ActivityCollector collector;
  return collector;
}

Status ActivityCollector::start() {
  if (started_) return ok_status();
  PTXB_CUPTI_CHECK(cuptiActivityRegisterCallbacks(&ActivityCollector::on_buffer_requested,
                                                  &ActivityCollector::on_buffer_completed));
  PTXB_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
  PTXB_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME));
  PTXB_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER));
  // CONCURRENT_KERNEL, not KERNEL: KERNEL serialises all kernels (cupti_activity.h), which would
  // change what is being measured.
  PTXB_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  PTXB_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY));
  PTXB_CUPTI_CHECK(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET));
  started_ = true;
  return ok_status();
}

Status ActivityCollector::flush() {
  PTXB_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  return ok_status();
}

void CUPTIAPI ActivityCollector::on_buffer_requested(uint8_t** buffer, size_t* size,
                                                     size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kActivityBufferAlign, kActivityBufferBytes));
  *size = *buffer != nullptr ? kActivityBufferBytes : 0;  // size 0: CUPTI drops and counts records
  *max_records = 0;                                       // as many as fit
}

void CUPTIAPI ActivityCollector::on_buffer_completed(CUcontext context, uint32_t stream_id,
                                                     uint8_t* buffer, size_t /*size*/,
                                                     size_t valid_size) {
  ActivityCollector& self = instance();
  if (buffer != nullptr && valid_size > 0) self.consume(buffer, valid_size);
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS &&
      dropped > 0) {
    std::lock_guard<std::mutex> lock(self.mutex_);
    self.dropped_ += dropped;
  }
  std::free(buffer);
}

void ActivityCollector::consume(uint8_t* buffer, size_t valid_size) {
  std::lock_guard<std::mutex> lock(mutex_);
  CUpti_Activity* raw = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &raw) == CUPTI_SUCCESS) {
    ActivityRecord record;
    switch (raw->kind) {
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      case CUPTI_ACTIVITY_KIND_KERNEL: {
        // CUDA 13's kernel record is CUpti_ActivityKernel10 (cupti_activity.h).
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(raw);
        record.kind = "kernel";
        record.name = kernel->name != nullptr ? kernel->name : "(unnamed kernel)";
        record.stream_id = kernel->streamId;
        record.correlation_id = kernel->correlationId;
        record.start_ns = kernel->start;
        record.end_ns = kernel->end;
        record.grid = {static_cast<std::uint32_t>(kernel->gridX),
                       static_cast<std::uint32_t>(kernel->gridY),
                       static_cast<std::uint32_t>(kernel->gridZ)};
        record.block = {static_cast<std::uint32_t>(kernel->blockX),
                        static_cast<std::uint32_t>(kernel->blockY),
                        static_cast<std::uint32_t>(kernel->blockZ)};
        records_.push_back(std::move(record));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(raw);
        record.kind = "memcpy";
        record.name = memcpy_kind_name(copy->copyKind);
        record.stream_id = copy->streamId;
        record.correlation_id = copy->correlationId;
        record.start_ns = copy->start;
        record.end_ns = copy->end;
        record.bytes = copy->bytes;
        record.async = (copy->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
        records_.push_back(std::move(record));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* set = reinterpret_cast<const CUpti_ActivityMemset4*>(raw);
        record.kind = "memset";
        record.name = "memset";
        record.stream_id = set->streamId;
        record.correlation_id = set->correlationId;
        record.start_ns = set->start;
        record.end_ns = set->end;
        record.bytes = set->bytes;
        record.async = (set->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC) != 0;
        records_.push_back(std::move(record));
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* link = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(raw);
        if (link->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
          correlations_[link->correlationId] = ExternalTag{false, link->externalId};
        } else if (link->externalKind == CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1) {
          correlations_[link->correlationId] = ExternalTag{true, link->externalId};
        }
        break;
      }
      case CUPTI_ACTIVITY_KIND_RUNTIME:
      case CUPTI_ACTIVITY_KIND_DRIVER:
        ++api_records_;
        break;
      default:
        break;
    }
  }
}

std::vector<ActivityRecord> ActivityCollector::take_records() {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<ActivityRecord> out;
  out.swap(records_);
  return out;
}

std::uint64_t ActivityCollector::dropped_records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

std::uint64_t ActivityCollector::api_records() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return api_records_;
}

ExternalCorrelationScope::ExternalCorrelationScope(bool harness, std::uint64_t id)
    : kind_(harness ? CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1
                    : CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) {
  const CUptiResult status = cuptiActivityPushExternalCorrelationId(kind_, id);
  pushed_ = status == CUPTI_SUCCESS;
  if (!pushed_) {
    // Not fatal here: the call then has no attributed records (window absent), which the
    // supervisor treats as a failed sample; the log says why.
    const char* text = nullptr;
    cuptiGetResultString(status, &text);
    std::fprintf(stderr, "ptxbench-runner: cuptiActivityPushExternalCorrelationId: %s\n",
                 text ? text : "?");
  }
}

ExternalCorrelationScope::~ExternalCorrelationScope() {
  if (!pushed_) return;
  uint64_t last_id = 0;
  cuptiActivityPopExternalCorrelationId(kind_, &last_id);
}

}  // namespace ptxb
