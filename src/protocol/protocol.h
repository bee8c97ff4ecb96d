// The supervisor ↔ runner protocol (docs/runner.md "Protocol"): typed messages and their JSON.
//
// Strictly request/response over one channel (protocol/frame.h). Every request is an object
// {"type": T, "seq": N, ...}; the reply echoes type and seq and carries "ok": true plus the
// reply fields, or "ok": false and "error": {"code", "message"} for a request the runner
// understood but could not carry out (bad set index, dlopen failure). A message the runner
// cannot parse is not answered: the runner logs it and exits non-zero (it never guesses).
//
// The runner reports facts (records, hashes, CUDA error names); verdicts are the supervisor's
// (design.md §3.3). Plain C++: the supervisor side needs no CUDA to speak it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

inline constexpr int kRunnerProtocolVersion = 1;

// ---- hello ----
struct HelloReply {
  int protocol_version = kRunnerProtocolVersion;
  std::int64_t pid = 0;
  int device_ordinal = 0;
  std::string device_name;
  std::string pci_bus_id;
  int cuda_runtime_version = 0;     // cudaRuntimeGetVersion: 13000 = 13.0
  int cuda_driver_version = 0;      // cudaDriverGetVersion
  std::uint32_t cupti_version = 0;  // cuptiGetVersion (API version, e.g. 130001)
  std::int64_t l2_bytes = 0;
  std::int64_t l2_flush_bytes = 0;            // size of the runner's flush buffer (≥ 2 × L2)
  std::optional<std::uint32_t> sm_clock_mhz;  // NVML, when libnvidia-ml is loadable
  std::string runner_version;
};

// ---- load ----
struct LoadRequest {
  std::string so_path;
  std::string expected_signature;  // RunSignature::declaration(); empty: not checked
  // SHA-256 (hex) of the cubins the candidate may load; empty: module check off (references).
  std::vector<std::string> expected_module_sha256;
};

// A CUDA module seen by the CUPTI resource callback (MODULE_LOADED).
struct ModuleInfo {
  std::uint32_t module_id = 0;
  std::string sha256;  // of the cubin bytes CUPTI hands the callback
  std::uint64_t bytes = 0;
  std::string origin;            // "runner" (harness's own, excluded) or "candidate"
  std::optional<bool> expected;  // nullopt: no expectation given (check off)
};

struct LoadReply {
  std::string abi_signature;        // what ptxbench_abi_signature() returned
  std::vector<ModuleInfo> modules;  // loaded so far (eager loading, static initialisers)
};

// ---- bind ----
struct IpcBuffer {
  std::array<std::uint8_t, 64> handle{};  // cudaIpcMemHandle_t bytes, hex on the wire
  std::uint64_t bytes = 0;
};

// One `run` parameter's value. Pointers: {"buffer": i, "offset": bytes}; by-value parameters:
// their exact little-endian storage ({"i64": n}, {"i32": n}, {"f32": x}, {"bool": b} or
// {"raw_hex": "..."} for bf16/f16/fp8 bit patterns). The trailing stream is never sent: the
// runner supplies its own.
struct ParamValue {
  bool is_buffer = false;
  std::uint32_t buffer = 0;
  std::uint64_t offset = 0;
  std::string storage;  // raw bytes of a by-value parameter
};

struct BindRequest {
  std::vector<IpcBuffer> buffers;
  std::vector<std::vector<ParamValue>> sets;  // input sets rotated by the supervisor (§3.4)
};

struct BindReply {
  std::uint64_t set_count = 0;
  std::uint64_t mapped_bytes = 0;
};

// ---- call ----
struct CallRequest {
  std::uint64_t set = 0;
  bool flush_l2 = true;
  bool collect = false;  // include every activity record in the reply (summaries always come)
};

struct ActivityRecord {
  std::string kind;  // "kernel", "memcpy", "memset"
  std::string name;  // kernel name; "memcpy HtoD", "memset" ...
  std::uint32_t stream_id = 0;
  std::uint32_t correlation_id = 0;
  std::optional<std::uint64_t> external_id;  // CUSTOM0 id of the call it belongs to
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t bytes = 0;
  // "call" (this call), "harness" (the runner's own work), "other_call" (an earlier call's
  // id), "unattributed" (no call pushed: another thread, or after `run` returned).
  std::string attribution;
  // For out-of-window records: "before", "during", "after" relative to this call's window
  // (or to its host bracket when the call itself recorded nothing).
  std::string relation;
  // Copies and memsets: CUPTI's CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC / _MEMSET_ASYNC, i.e. issued
  // by an *Async API. False for kernels. With legacy_stream it decides whether off-stream work
  // is tolerated (a synchronous cudaMemcpy/cudaMemset on the legacy stream) or foreign.
  bool async = false;
  // The record's stream is the context's legacy default (NULL) stream.
  bool legacy_stream = false;
  // Kernels only: the launch shape from CUPTI's kernel record (gridX/Y/Z, blockX/Y/Z); zeros for
  // copies and memsets. The profile stage checks that Nsight Compute saw the same launches.
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
};

// One distinct kernel launch shape of a call: name (mangled), grid and block, and how many of
// the call's kernels had it.
struct KernelLaunch {
  std::string name;
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
  std::uint32_t count = 0;
  // Sum of the launches' CUPTI durations (end - start): the per-kernel time that lets the
  // profile stage compare a subset of a call's kernels (supervisor/profile_check.h). 0 from a
  // runner that did not record it.
  std::uint64_t device_ns = 0;

  bool same_shape(const KernelLaunch& other) const {
    return name == other.name && grid == other.grid && block == other.block;
  }
};

// Counts `record` (a kernel) into `launches`: an existing entry of the same shape, or a new one.
void note_kernel_launch(std::vector<KernelLaunch>& launches, const ActivityRecord& record);

struct CudaErrorInfo {
  std::string name;     // cudaGetErrorName, e.g. "cudaErrorIllegalAddress"
  std::string message;  // cudaGetErrorString
  std::string where;    // which runner step saw it: "cudaStreamSynchronize", ...
};

// A thread or child process the candidate left running after `run` returned (design.md §3.2: all
// work is enqueued before `run` returns, so nothing of the candidate may outlive the call).
struct LeftoverTask {
  std::int64_t id = 0;  // thread id or process id, as the runner's /proc shows it
  std::string name;     // /proc/<id>/comm
};

struct CallReply {
  std::uint64_t call_index = 0;   // 1-based count of calls made by this runner
  std::uint64_t external_id = 0;  // CUSTOM0 correlation id pushed around this call
  std::optional<CudaErrorInfo> cuda_error;
  bool has_window = false;
  std::uint64_t window_start_ns = 0;  // first start of this call's records (CUPTI clock)
  std::uint64_t window_end_ns = 0;    // last end
  std::uint64_t device_ns = 0;        // window_end_ns - window_start_ns (0 without records)
  std::uint32_t kernel_count = 0;
  std::uint32_t memcpy_count = 0;
  std::uint32_t memset_count = 0;
  std::uint32_t expected_stream_id = 0;          // CUPTI id of the runner's stream
  std::vector<ActivityRecord> foreign_stream;    // work of this call off its stream (attribution.h)
  std::vector<ActivityRecord> out_of_window;     // activity not attributed to this call
  std::vector<ModuleInfo> new_modules;           // loaded since the previous reply
  std::vector<ModuleInfo> unexpected_modules;    // candidate modules not in the expected list
  std::vector<ActivityRecord> activity;          // all of this call's records (collect only)
  std::vector<std::string> kernel_names;         // distinct names of this call's kernels (mangled)
  std::vector<LeftoverTask> leftover_threads;    // threads started during the call, still alive
  std::vector<LeftoverTask> leftover_processes;  // children started during the call, still alive
  std::uint64_t host_wall_ns = 0;                // runner's clock: push → stream synchronized
  std::uint64_t host_start_ns = 0;               // CUPTI timestamp at push (same clock as records)
  std::uint64_t host_end_ns = 0;                 // CUPTI timestamp after the stream synchronize
  std::uint64_t dropped_records = 0;  // CUPTI dropped records so far (non-zero: distrust)
  std::optional<std::uint32_t> sm_clock_mhz;
  // The distinct launch shapes of this call's kernels (summary, on every call like
  // kernel_names): what the profile stage compares Nsight Compute's launches with.
  std::vector<KernelLaunch> kernel_launches;
};

// ---- batch ----
// K calls back to back on the runner's stream with no L2 flush and no reply in between, then one
// synchronize and one reply: the supervisor brackets the whole batch with its own clock and
// verifies every call's outputs itself (the batch bound, docs/integrity.md). The runner's own
// timing is not asked for: nothing in the reply can move the bound.
struct BatchRequest {
  std::vector<std::uint64_t> sets;  // one call per entry, in order; empty: only the synchronize
  // The paper's recipe (--timing-protocol paper): the L2 flushed before every call, and each
  // call's CUPTI span reported. Off for the batch bound (no flush, nothing measured inside).
  bool flush_l2 = false;
  bool timed = false;
};

struct BatchReply {
  std::uint64_t calls = 0;               // calls made
  std::vector<std::uint64_t> device_ns;  // per call, when the request was `timed`
  std::optional<CudaErrorInfo> cuda_error;
  std::vector<LeftoverTask> leftover_threads;
  std::vector<LeftoverTask> leftover_processes;
};

// ---- envelope ----
inline constexpr const char* kMsgHello = "hello";
inline constexpr const char* kMsgLoad = "load";
inline constexpr const char* kMsgBind = "bind";
inline constexpr const char* kMsgCall = "call";
inline constexpr const char* kMsgShutdown = "shutdown";
inline constexpr const char* kMsgBatch = "batch";

// {"type": type, "seq": seq} + body's fields.
Json make_request(const std::string& type, std::uint64_t seq, Json body = Json::object());
// {"type", "seq", "ok": true} + body's fields.
Json make_ok_reply(const std::string& type, std::uint64_t seq, Json body = Json::object());
// {"type", "seq", "ok": false, "error": {"code", "message"}}.
Json make_error_reply(const std::string& type, std::uint64_t seq, const Error& error);

struct Envelope {
  std::string type;
  std::uint64_t seq = 0;
};
// The wire text of a message: compact JSON; invalid UTF-8 inside strings (a path or a dlerror
// text) is replaced with U+FFFD instead of failing the reply.
std::string encode_message(const Json& message);

// Validates the envelope of a request (type is one of the six, seq a non-negative integer).
Result<Envelope> parse_request_envelope(const Json& message);
// Checks that `reply` answers (type, seq); returns its error as an Error when ok is false
// (code "runner:<code>").
Status check_reply(const Json& reply, const std::string& type, std::uint64_t seq);

// ---- bodies ----
Json to_json(const HelloReply& value);
Json to_json(const LoadRequest& value);
Json to_json(const ModuleInfo& value);
Json to_json(const LoadReply& value);
Json to_json(const ParamValue& value);
Json to_json(const BindRequest& value);
Json to_json(const BindReply& value);
Json to_json(const CallRequest& value);
Json to_json(const ActivityRecord& value);
Json to_json(const CudaErrorInfo& value);
Json to_json(const LeftoverTask& value);
Json to_json(const KernelLaunch& value);
Json to_json(const CallReply& value);
Json to_json(const BatchRequest& value);
Json to_json(const BatchReply& value);

Result<HelloReply> hello_reply_from_json(const Json& json);
Result<LoadRequest> load_request_from_json(const Json& json);
Result<ModuleInfo> module_info_from_json(const Json& json);
Result<LoadReply> load_reply_from_json(const Json& json);
Result<ParamValue> param_value_from_json(const Json& json);
Result<BindRequest> bind_request_from_json(const Json& json);
Result<BindReply> bind_reply_from_json(const Json& json);
Result<CallRequest> call_request_from_json(const Json& json);
Result<ActivityRecord> activity_record_from_json(const Json& json);
Result<LeftoverTask> leftover_task_from_json(const Json& json);
// The optional "cuda_error" object of a call or batch reply (absent or null: none).
Result<std::optional<CudaErrorInfo>> optional_cuda_error_from_json(const Json& json);
Result<KernelLaunch> kernel_launch_from_json(const Json& json);
Result<CallReply> call_reply_from_json(const Json& json);
Result<BatchRequest> batch_request_from_json(const Json& json);
Result<BatchReply> batch_reply_from_json(const Json& json);

// Hex helpers for IPC handles and raw scalar storage.
std::string to_hex(const void* data, std::size_t size);
Result<std::string> from_hex(const std::string& hex);

}  // namespace ptxb
