#include "runner/runner_service.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <utility>

#include "core/version.h"
#include "cuda/cuda_check.h"
#include "cuda/l2_persistence.h"
#include "protocol/frame.h"
#include "runner/activity_collector.h"
#include "runner/attribution.h"
#include "runner/driver_warmup.h"
#include "runner/module_watch.h"

namespace ptxb {
namespace {

// A started frame must be complete within this time. The supervisor writes each request in one
// go, so only a broken or hostile peer ever hits it; the runner then exits instead of hanging.
constexpr std::chrono::milliseconds kFrameTimeout{10000};

// A thread the candidate joined, or a child it waited for, can still be listed for a moment
// after `run` returned (the kernel tears tasks down asynchronously). Before a leftover is
// reported it must survive this much longer; the pause only happens when something is found.
constexpr std::chrono::milliseconds kLeftoverGrace{50};

void log_line(const std::string& text) {
  std::fprintf(stderr, "ptxbench-runner: %s\n", text.c_str());
}

// The runner itself always leaves with _exit, so atexit handlers run only when candidate code
// calls exit(). Registered after the candidate's own (so it runs first), it ends the process at
// once: the static destructors of CUDA, CUPTI and the candidate could otherwise hang or crash
// and turn a plain "exited during the call" into a timeout or a signal.
void exit_called_by_candidate() {
  std::fflush(stdout);
  std::fprintf(stderr, "ptxbench-runner: the candidate called exit() during a call\n");
  std::fflush(stderr);
  ::_exit(kRunnerExitCandidateExit);
}

std::uint64_t cupti_now() {
  uint64_t timestamp = 0;
  cuptiGetTimestamp(&timestamp);  // the clock of activity records (ns)
  return timestamp;
}

}  // namespace

CudaErrorInfo cuda_error_info(cudaError_t status, const char* where) {
  return CudaErrorInfo{cudaGetErrorName(status), cudaGetErrorString(status), where};
}

Status RunnerService::initialize_gpu() {
  // CUPTI first: activity kinds enabled before the context exists see everything.
  if (cupti_) {
    PTXB_RETURN_IF_ERROR(ActivityCollector::instance().start());
    PTXB_RETURN_IF_ERROR(ModuleWatch::instance().start());
  }
  auto harness = correlation(true, kHarnessExternalId);
  PTXB_CUDA_CHECK(cudaSetDevice(0));   // the sandbox's CUDA_VISIBLE_DEVICES picks the GPU
  PTXB_CUDA_CHECK(cudaFree(nullptr));  // create the primary context now, not inside a call
  cudaDeviceProp properties{};
  PTXB_CUDA_CHECK(cudaGetDeviceProperties(&properties, 0));
  char pci_bus_id[64] = {};
  PTXB_CUDA_CHECK(cudaDeviceGetPCIBusId(pci_bus_id, sizeof pci_bus_id, 0));
  hello_.pid = ::getpid();
  hello_.device_ordinal = 0;
  hello_.device_name = properties.name;
  hello_.pci_bus_id = pci_bus_id;
  hello_.l2_bytes = properties.l2CacheSize;
  PTXB_CUDA_CHECK(cudaRuntimeGetVersion(&hello_.cuda_runtime_version));
  PTXB_CUDA_CHECK(cudaDriverGetVersion(&hello_.cuda_driver_version));
  if (cupti_) PTXB_CUPTI_CHECK(cuptiGetVersion(&hello_.cupti_version));
  hello_.runner_version = harness_version();
  // Non-blocking: the legacy default stream does not synchronise with it, so a candidate's
  // legacy-stream kernel is a separate, visible stream in the records (design.md §3.2).
  PTXB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  if (cupti_) PTXB_CUPTI_CHECK(cuptiGetStreamIdEx(nullptr, stream_, 0, &stream_id_));
  // The NULL stream of a program built without per-thread default streams (the compile stage's
  // flags) is the legacy stream: where synchronous copies and memsets land (attribution.h).
  // CUPTI has no id for it before work ran there (cuptiGetStreamIdEx on the NULL stream is
  // CUPTI_ERROR_INVALID_STREAM on the H200's driver), so one synchronous memset, as harness
  // work, names it: its record's stream is the legacy stream.
  void* probe = nullptr;
  PTXB_CUDA_CHECK(cudaMalloc(&probe, 16));
  PTXB_CUDA_CHECK(cudaMemset(probe, 0, 16));
  PTXB_CUDA_CHECK(cudaFree(probe));
  PTXB_RETURN_IF_ERROR(l2_flush_.allocate(static_cast<std::uint64_t>(properties.l2CacheSize)));
  hello_.l2_flush_bytes = static_cast<std::int64_t>(l2_flush_.bytes());
  // One flush now, so whatever the driver loads for a memset is loaded as the runner's.
  const cudaError_t warm = l2_flush_.flush(stream_);
  if (warm != cudaSuccess)
    return gpu::cuda_call_error(warm, "l2_flush_.flush(stream_)", __FILE__, __LINE__);
  // The driver's lazily started threads (host-function worker, ...) start now, as the
  // runner's, so the census sealed below trusts them (runner/driver_warmup.h).
  PTXB_RETURN_IF_ERROR(precreate_driver_threads(stream_));
  PTXB_CUDA_CHECK(cudaDeviceSynchronize());
  if (cupti_) {
    PTXB_RETURN_IF_ERROR(ActivityCollector::instance().flush());
    // Set-up records: all the runner's; only the probe memset's stream is kept.
    for (const ActivityRecord& record : ActivityCollector::instance().take_records())
      if (record.kind == "memset" && !record.async && record.stream_id != stream_id_)
        legacy_stream_id_ = record.stream_id;
    if (!legacy_stream_id_)
      return make_error("cupti", "no activity record for the legacy-stream probe memset");
  }
  if (nvml_.open(hello_.pci_bus_id)) hello_.sm_clock_mhz = nvml_.sm_clock_mhz();
  // Orphans of a candidate's double-forked processes become our children, where the leftover
  // check sees them (instead of init's, where it would not).
  if (!become_child_subreaper()) log_line("prctl(PR_SET_CHILD_SUBREAPER) failed");
  // No candidate code has run yet: every thread alive now is the runner's, the driver's,
  // CUPTI's or NVML's, and only these are ever trusted (process_census.h).
  thread_census_.seal(list_threads());
  gpu_ready_ = true;
  return ok_status();
}

Result<Json> RunnerService::handle_hello() {
  if (!gpu_ready_) PTXB_RETURN_IF_ERROR(initialize_gpu());
  hello_.sm_clock_mhz = nvml_.sm_clock_mhz();
  return to_json(hello_);
}

Result<Json> RunnerService::handle_load(const Json& request) {
  PTXB_ASSIGN_OR_RETURN(LoadRequest load, load_request_from_json(request));
  if (!gpu_ready_) return make_error("sequence", "load before a successful hello");
  ModuleWatch::instance().set_expected(load.expected_module_sha256);
  {
    // The candidate's static initialisers run inside dlopen: candidate code. A thread they
    // start is not in the sealed census, so it is a leftover at the end of every call.
    CandidatePhase phase;
    PTXB_RETURN_IF_ERROR(candidate_.load(load.so_path, load.expected_signature));
  }
  std::atexit(exit_called_by_candidate);
  LoadReply reply;
  reply.abi_signature = candidate_.signature();
  reply.modules = ModuleWatch::instance().take_new();
  return to_json(reply);
}

Result<Json> RunnerService::handle_bind(const Json& request) {
  PTXB_ASSIGN_OR_RETURN(BindRequest bind, bind_request_from_json(request));
  if (!candidate_.loaded()) return make_error("sequence", "bind before a successful load");
  auto harness = correlation(true, kHarnessExternalId);
  PTXB_RETURN_IF_ERROR(sets_.bind(bind, candidate_.layout(), stream_));
  BindReply reply;
  reply.set_count = sets_.set_count();
  reply.mapped_bytes = sets_.mapped_bytes();
  return to_json(reply);
}

Result<Json> RunnerService::handle_call(const Json& request) {
  PTXB_ASSIGN_OR_RETURN(CallRequest call, call_request_from_json(request));
  if (sets_.set_count() == 0) return make_error("sequence", "call before a successful bind");
  if (call.set >= sets_.set_count()) {
    return make_error("bad_request", "set {} out of range ({} sets bound)", call.set,
                      sets_.set_count());
  }
  CallReply reply;
  reply.call_index = ++call_count_;
  reply.external_id = call_count_;  // CUSTOM0 ids: one per call, never reused
  reply.expected_stream_id = stream_id_;

  // ---- before the window: L2 reset and flush (design.md §3.4) ----
  prepare_l2(call.flush_l2, reply);

  // ---- the window: only the candidate's host code between push and pop ----
  cudaError_t stream_status = cudaSuccess;
  cudaError_t last_error = cudaSuccess;
  if (!reply.cuda_error) {
    InvokeFunction invoke = candidate_.invoke();
    void* const* params = sets_.params(call.set);
    if (cupti_) reply.host_start_ns = cupti_now();
    const auto wall_start = std::chrono::steady_clock::now();
    {
      CandidatePhase phase;
      auto window = correlation(false, reply.external_id);
      // A launch refused for its configuration (too many threads, too much dynamic shared
      // memory) enqueues nothing and only sets this thread's last error in the candidate's
      // runtime (candidate_library.h). It is set at the launch, so it is cleared and read here,
      // inside the candidate's phase (the symbol comes from the candidate's side), and reported
      // only when no kernel ran (below), so a host API error the candidate ignores never fails a
      // call that did its work.
      (void)candidate_.take_last_error();
      invoke(params);
      last_error = static_cast<cudaError_t>(candidate_.take_last_error());
    }
    stream_status = cudaStreamSynchronize(stream_);
    const auto wall_end = std::chrono::steady_clock::now();
    if (cupti_) reply.host_end_ns = cupti_now();
    reply.host_wall_ns = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(wall_end - wall_start).count());
    if (stream_status != cudaSuccess)
      reply.cuda_error = cuda_error_info(stream_status, "cudaStreamSynchronize");
  }

  // ---- collection: every record of finished work exists after a device-wide synchronize ----
  {
    auto harness = correlation(true, kHarnessExternalId);
    const cudaError_t device_status = cudaDeviceSynchronize();
    if (device_status != cudaSuccess && !reply.cuda_error) {
      reply.cuda_error = cuda_error_info(device_status, "cudaDeviceSynchronize");
    }
  }
  PTXB_RETURN_IF_ERROR(collect_activity(call, reply));
  if (last_error != cudaSuccess && !reply.cuda_error && cupti_ && reply.kernel_count == 0)
    reply.cuda_error = cuda_error_info(last_error, "a launch in the call, which ran no kernel");
  reply.sm_clock_mhz = nvml_.sm_clock_mhz();
  report_leftovers(reply);
  return to_json(reply);
}

std::optional<ExternalCorrelationScope> RunnerService::correlation(bool harness,
                                                                   std::uint64_t id) const {
  if (!cupti_) return std::nullopt;
  return std::optional<ExternalCorrelationScope>(std::in_place, harness, id);
}

Status RunnerService::collect_activity(const CallRequest& call, CallReply& reply) {
  if (!cupti_) return ok_status();
  ActivityCollector& collector = ActivityCollector::instance();
  Status flushed = collector.flush();
  if (!flushed.ok()) {
    // After a sticky error CUPTI may refuse to flush; the CUDA error is then the answer.
    if (!reply.cuda_error) return flushed;
    log_line("after " + reply.cuda_error->name + ": " + flushed.error().message);
  }
  std::vector<ActivityRecord> records = collector.take_records();
  AttributionInput input;
  input.call_external_id = reply.external_id;
  input.expected_stream_id = stream_id_;
  input.legacy_stream_id = legacy_stream_id_;
  input.host_start_ns = reply.host_start_ns;
  input.host_end_ns = reply.host_end_ns;
  input.keep_activity = call.collect;
  collector.with_correlations([&](const CorrelationTable& table) {
    attribute_call(std::move(records), table, input, reply);
  });
  reply.new_modules = ModuleWatch::instance().take_new();
  for (const auto& module : ModuleWatch::instance().all()) {
    if (module.expected.has_value() && !*module.expected)
      reply.unexpected_modules.push_back(module);
  }
  reply.dropped_records = collector.dropped_records();
  return ok_status();
}

void RunnerService::prepare_l2(bool flush, CallReply& reply) {
  auto harness = correlation(true, kHarnessExternalId);
  // Reset first: a persisting line survives the flush's writes while the set-aside holds it.
  const L2ResetOutcome reset = reset_persisting_l2(stream_);
  if (reset.status != cudaSuccess) {
    reply.cuda_error = cuda_error_info(reset.status, reset.call);
    return;
  }
  if (!flush) return;
  const cudaError_t flushed = l2_flush_.flush(stream_);
  if (flushed != cudaSuccess)
    reply.cuda_error = cuda_error_info(flushed, "l2_flush (before the call)");
}

void RunnerService::report_leftovers(CallReply& reply) {
  // Runs after the device-wide synchronize: every legitimate piece of the call is over,
  // host functions included, so any thread not trusted at the seal is the candidate's.
  auto still_running = [&] { return thread_census_.untrusted_alive(list_threads()); };
  auto live_children = [] {
    std::vector<TaskEntry> children = list_children();
    children.erase(std::remove_if(children.begin(), children.end(),
                                  [](const TaskEntry& c) { return !c.alive(); }),
                   children.end());
    return children;
  };
  std::vector<TaskEntry> threads = still_running();
  std::vector<TaskEntry> children = live_children();
  if (threads.empty() && children.empty()) return;
  std::this_thread::sleep_for(kLeftoverGrace);
  for (const auto& t : still_running())
    reply.leftover_threads.push_back(LeftoverTask{t.id, t.name});
  for (const auto& c : live_children())
    reply.leftover_processes.push_back(LeftoverTask{c.id, c.name});
}

int RunnerService::serve() {
  FrameReadOptions options;
  options.first_byte_timeout = std::chrono::milliseconds(0);  // idle between requests: unbounded
  options.frame_timeout = kFrameTimeout;
  while (true) {
    auto frame = read_frame(channel_fd_, options);
    if (!frame.ok()) {
      if (frame.error().code == kFrameErrorEof) {
        log_line("channel closed by the supervisor without shutdown");
        return kRunnerExitChannelClosed;
      }
      log_line("malformed message: " + frame.error().message);
      return kRunnerExitMalformed;
    }
    auto message = parse_json(*frame, "request");
    if (!message.ok()) {
      log_line("malformed message: " + message.error().message);
      return kRunnerExitMalformed;
    }
    auto envelope = parse_request_envelope(*message);
    if (!envelope.ok()) {
      log_line("malformed message: " + envelope.error().message);
      return kRunnerExitMalformed;
    }
    const std::string& type = envelope->type;
    Result<Json> body = Json::object();
    if (type == kMsgHello) {
      body = handle_hello();
    } else if (type == kMsgLoad) {
      body = handle_load(*message);
    } else if (type == kMsgBind) {
      body = handle_bind(*message);
    } else if (type == kMsgCall) {
      body = handle_call(*message);
    } else if (type == kMsgBatch) {
      body = handle_batch(*message);
    }
    const Json reply = body.ok() ? make_ok_reply(type, envelope->seq, std::move(body).value())
                                 : make_error_reply(type, envelope->seq, body.error());
    if (!body.ok()) log_line(type + ": " + body.error().message);
    Status written = write_frame(channel_fd_, encode_message(reply));
    if (!written.ok()) {
      log_line("cannot reply: " + written.error().message);
      return kRunnerExitChannelClosed;
    }
    if (after_reply_) std::exchange(after_reply_, nullptr)();
    if (type == kMsgShutdown) return kRunnerExitOk;
    // A request body that does not parse is as malformed as a bad frame: answered (so the
    // supervisor sees why), then the runner stops rather than guess.
    if (!body.ok() && body.error().code == "protocol") return kRunnerExitMalformed;
    if (type == kMsgHello && !gpu_ready_) return kRunnerExitInitFailed;
  }
}

}  // namespace ptxb
