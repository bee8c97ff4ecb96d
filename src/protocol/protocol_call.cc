// The bind and call halves of the protocol (declared in protocol/protocol.h).
#include <cstring>

#include "protocol/json_fields.h"
#include "protocol/protocol.h"

namespace ptxb {

using namespace protocol_detail;

namespace {

// Largest by-value parameter: a scalar of the ABI is at most 8 bytes (int64_t); 16 leaves room
// for a future 128-bit type without letting a message smuggle a large blob into the runner.
constexpr std::size_t kMaxScalarBytes = 16;

// [x, y, z] of a grid or block; absent (an older runner, a non-kernel record) reads as zeros.
Result<std::array<std::uint32_t, 3>> dims_from_json(const Json& json, const char* key,
                                                    const std::string& what) {
  std::array<std::uint32_t, 3> dims{};
  auto it = json.find(key);
  if (it == json.end()) return dims;
  if (!it->is_array() || it->size() != 3)
    return make_error("protocol", "{}: {} must be [x, y, z]", what, key);
  for (std::size_t i = 0; i < 3; ++i) {
    if (!(*it)[i].is_number_unsigned() || (*it)[i].get<std::uint64_t>() > UINT32_MAX)
      return make_error("protocol", "{}: {}[{}] must be an unsigned 32-bit number", what, key, i);
    dims[i] = (*it)[i].get<std::uint32_t>();
  }
  return dims;
}

template <typename T>
std::string storage_of(T value) {
  std::string bytes(sizeof(T), '\0');
  std::memcpy(bytes.data(), &value, sizeof(T));  // x86-64 and aarch64 are little-endian
  return bytes;
}

}  // namespace

// ---- bind ----

Json to_json(const ParamValue& value) {
  if (value.is_buffer) return {{"buffer", value.buffer}, {"offset", value.offset}};
  return {{"raw_hex", to_hex(value.storage.data(), value.storage.size())}};
}

Result<ParamValue> param_value_from_json(const Json& json) {
  const std::string what = "parameter value";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  if (json.size() != 1 &&
      !(json.size() == 2 && json.contains("buffer") && json.contains("offset"))) {
    return make_error("protocol",
                      "{}: expected exactly one of buffer(+offset), i64, i32, f32, bool, raw_hex",
                      what);
  }
  ParamValue value;
  if (json.contains("buffer")) {
    value.is_buffer = true;
    PTXB_ASSIGN_OR_RETURN(value.buffer, get_u32(json, "buffer", what));
    if (json.contains("offset")) {
      PTXB_ASSIGN_OR_RETURN(value.offset, get_u64(json, "offset", what));
    }
    return value;
  }
  if (json.contains("i64")) {
    PTXB_ASSIGN_OR_RETURN(std::int64_t v, get_i64(json, "i64", what));
    value.storage = storage_of<std::int64_t>(v);
  } else if (json.contains("i32")) {
    PTXB_ASSIGN_OR_RETURN(std::int64_t v, get_i64(json, "i32", what));
    if (v < INT32_MIN || v > INT32_MAX)
      return make_error("protocol", "{}: i32 {} out of range", what, v);
    value.storage = storage_of<std::int32_t>(static_cast<std::int32_t>(v));
  } else if (json.contains("f32")) {
    if (!json["f32"].is_number()) return make_error("protocol", "{}: f32 must be a number", what);
    value.storage = storage_of<float>(json["f32"].get<float>());
  } else if (json.contains("bool")) {
    PTXB_ASSIGN_OR_RETURN(bool v, get_bool(json, "bool", what, std::nullopt));
    value.storage = storage_of<bool>(v);
  } else if (json.contains("raw_hex")) {
    PTXB_ASSIGN_OR_RETURN(std::string hex, get_string(json, "raw_hex", what));
    PTXB_ASSIGN_OR_RETURN(value.storage, from_hex(hex));
  } else {
    return make_error("protocol", "{}: unknown kind '{}'", what, json.begin().key());
  }
  if (value.storage.empty() || value.storage.size() > kMaxScalarBytes) {
    return make_error("protocol", "{}: by-value storage of {} bytes (1..{} allowed)", what,
                      value.storage.size(), kMaxScalarBytes);
  }
  return value;
}

Json to_json(const BindRequest& value) {
  Json buffers = Json::array();
  for (const auto& buffer : value.buffers) {
    buffers.push_back({{"ipc_handle", to_hex(buffer.handle.data(), buffer.handle.size())},
                       {"bytes", buffer.bytes}});
  }
  Json sets = Json::array();
  for (const auto& set : value.sets) sets.push_back(list_to_json(set));
  return {{"buffers", std::move(buffers)}, {"sets", std::move(sets)}};
}

Result<BindRequest> bind_request_from_json(const Json& json) {
  const std::string what = "bind request";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  BindRequest value;
  PTXB_ASSIGN_OR_RETURN(
      value.buffers,
      parse_list<IpcBuffer>(json, "buffers", what, [](const Json& item) -> Result<IpcBuffer> {
        PTXB_RETURN_IF_ERROR(require_object(item, "buffer"));
        IpcBuffer buffer;
        PTXB_ASSIGN_OR_RETURN(std::string hex, get_string(item, "ipc_handle", "buffer"));
        PTXB_ASSIGN_OR_RETURN(std::string raw, from_hex(hex));
        if (raw.size() != buffer.handle.size()) {
          return make_error("protocol", "ipc_handle has {} bytes, expected {}", raw.size(),
                            buffer.handle.size());
        }
        std::memcpy(buffer.handle.data(), raw.data(), raw.size());
        PTXB_ASSIGN_OR_RETURN(buffer.bytes, get_u64(item, "bytes", "buffer"));
        return buffer;
      }));
  PTXB_ASSIGN_OR_RETURN(const Json* sets, get_array(json, "sets", what));
  for (std::size_t s = 0; s < sets->size(); ++s) {
    const Json& set = (*sets)[s];
    const std::string set_what = fmt::format("{}.sets[{}]", what, s);
    if (!set.is_array())
      return make_error("protocol", "{}: expected an array of parameter values", set_what);
    std::vector<ParamValue> params;
    for (std::size_t i = 0; i < set.size(); ++i) {
      auto param = param_value_from_json(set[i]);
      if (!param.ok()) return param.error().with_context(fmt::format("{}[{}]", set_what, i));
      if (param->is_buffer && param->buffer >= value.buffers.size()) {
        return make_error("protocol", "{}[{}]: buffer index {} out of range ({} buffers)", set_what,
                          i, param->buffer, value.buffers.size());
      }
      if (param->is_buffer && param->offset > value.buffers[param->buffer].bytes) {
        return make_error("protocol", "{}[{}]: offset {} beyond buffer {} ({} bytes)", set_what, i,
                          param->offset, param->buffer, value.buffers[param->buffer].bytes);
      }
      params.push_back(std::move(param).value());
    }
    value.sets.push_back(std::move(params));
  }
  return value;
}

Json to_json(const BindReply& value) {
  return {{"set_count", value.set_count}, {"mapped_bytes", value.mapped_bytes}};
}

Result<BindReply> bind_reply_from_json(const Json& json) {
  PTXB_RETURN_IF_ERROR(require_object(json, "bind reply"));
  BindReply value;
  PTXB_ASSIGN_OR_RETURN(value.set_count, get_u64(json, "set_count", "bind reply"));
  PTXB_ASSIGN_OR_RETURN(value.mapped_bytes, get_u64(json, "mapped_bytes", "bind reply"));
  return value;
}

// ---- call ----

Json to_json(const CallRequest& value) {
  return {{"set", value.set}, {"flush_l2", value.flush_l2}, {"collect", value.collect}};
}

Result<CallRequest> call_request_from_json(const Json& json) {
  const std::string what = "call request";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  CallRequest value;
  PTXB_ASSIGN_OR_RETURN(value.set, get_u64(json, "set", what));
  PTXB_ASSIGN_OR_RETURN(value.flush_l2, get_bool(json, "flush_l2", what, true));
  PTXB_ASSIGN_OR_RETURN(value.collect, get_bool(json, "collect", what, false));
  return value;
}

Json to_json(const ActivityRecord& value) {
  Json json = {{"kind", value.kind},
               {"name", value.name},
               {"stream_id", value.stream_id},
               {"correlation_id", value.correlation_id}};
  json["external_id"] = value.external_id ? Json(*value.external_id) : Json(nullptr);
  json["start_ns"] = value.start_ns;
  json["end_ns"] = value.end_ns;
  json["bytes"] = value.bytes;
  json["attribution"] = value.attribution;
  if (!value.relation.empty()) json["relation"] = value.relation;
  json["async"] = value.async;
  json["legacy_stream"] = value.legacy_stream;
  json["grid"] = value.grid;
  json["block"] = value.block;
  return json;
}

Result<ActivityRecord> activity_record_from_json(const Json& json) {
  const std::string what = "activity record";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  ActivityRecord value;
  PTXB_ASSIGN_OR_RETURN(value.kind, get_string(json, "kind", what));
  PTXB_ASSIGN_OR_RETURN(value.name, get_string(json, "name", what));
  PTXB_ASSIGN_OR_RETURN(value.stream_id, get_u32(json, "stream_id", what));
  PTXB_ASSIGN_OR_RETURN(value.correlation_id, get_u32(json, "correlation_id", what));
  auto ext = json.find("external_id");
  if (ext != json.end() && ext->is_number_unsigned()) value.external_id = ext->get<std::uint64_t>();
  PTXB_ASSIGN_OR_RETURN(value.start_ns, get_u64(json, "start_ns", what));
  PTXB_ASSIGN_OR_RETURN(value.end_ns, get_u64(json, "end_ns", what));
  PTXB_ASSIGN_OR_RETURN(value.bytes, get_u64(json, "bytes", what));
  PTXB_ASSIGN_OR_RETURN(value.attribution, get_string(json, "attribution", what));
  if (json.contains("relation")) {
    PTXB_ASSIGN_OR_RETURN(value.relation, get_string(json, "relation", what));
  }
  // Optional with a default: replies of runners built before the stream rule covered copies.
  PTXB_ASSIGN_OR_RETURN(value.async, get_bool(json, "async", what, false));
  PTXB_ASSIGN_OR_RETURN(value.legacy_stream, get_bool(json, "legacy_stream", what, false));
  PTXB_ASSIGN_OR_RETURN(value.grid, dims_from_json(json, "grid", what));
  PTXB_ASSIGN_OR_RETURN(value.block, dims_from_json(json, "block", what));
  return value;
}

void note_kernel_launch(std::vector<KernelLaunch>& launches, const ActivityRecord& record) {
  const std::uint64_t ns = record.end_ns > record.start_ns ? record.end_ns - record.start_ns : 0;
  KernelLaunch launch{record.name, record.grid, record.block, 1, ns};
  for (auto& known : launches)
    if (known.same_shape(launch)) {
      ++known.count;
      known.device_ns += ns;
      return;
    }
  launches.push_back(std::move(launch));
}

Json to_json(const KernelLaunch& value) {
  return {{"name", value.name},
          {"grid", value.grid},
          {"block", value.block},
          {"count", value.count},
          {"device_ns", value.device_ns}};
}

Result<KernelLaunch> kernel_launch_from_json(const Json& json) {
  const std::string what = "kernel launch";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  KernelLaunch value;
  PTXB_ASSIGN_OR_RETURN(value.name, get_string(json, "name", what));
  PTXB_ASSIGN_OR_RETURN(value.grid, dims_from_json(json, "grid", what));
  PTXB_ASSIGN_OR_RETURN(value.block, dims_from_json(json, "block", what));
  PTXB_ASSIGN_OR_RETURN(value.count, get_u32(json, "count", what));
  if (json.contains("device_ns")) {
    PTXB_ASSIGN_OR_RETURN(value.device_ns, get_u64(json, "device_ns", what));
  }
  return value;
}

Json to_json(const CudaErrorInfo& value) {
  return {{"name", value.name}, {"message", value.message}, {"where", value.where}};
}

Json to_json(const LeftoverTask& value) {
  return {{"id", value.id}, {"name", value.name}};
}

Result<LeftoverTask> leftover_task_from_json(const Json& json) {
  const std::string what = "leftover task";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  LeftoverTask value;
  PTXB_ASSIGN_OR_RETURN(value.id, get_i64(json, "id", what));
  PTXB_ASSIGN_OR_RETURN(value.name, get_string(json, "name", what));
  return value;
}

Json to_json(const CallReply& value) {
  Json json = {{"call_index", value.call_index}, {"external_id", value.external_id}};
  json["cuda_error"] = value.cuda_error ? to_json(*value.cuda_error) : Json(nullptr);
  if (value.has_window) {
    json["window"] = {{"start_ns", value.window_start_ns},
                      {"end_ns", value.window_end_ns},
                      {"device_ns", value.device_ns}};
  } else {
    json["window"] = nullptr;
  }
  json["kernel_count"] = value.kernel_count;
  json["memcpy_count"] = value.memcpy_count;
  json["memset_count"] = value.memset_count;
  json["expected_stream_id"] = value.expected_stream_id;
  json["foreign_stream"] = list_to_json(value.foreign_stream);
  json["out_of_window"] = list_to_json(value.out_of_window);
  json["new_modules"] = list_to_json(value.new_modules);
  json["unexpected_modules"] = list_to_json(value.unexpected_modules);
  json["host_wall_ns"] = value.host_wall_ns;
  json["host_start_ns"] = value.host_start_ns;
  json["host_end_ns"] = value.host_end_ns;
  json["dropped_records"] = value.dropped_records;
  json["sm_clock_mhz"] = value.sm_clock_mhz ? Json(*value.sm_clock_mhz) : Json(nullptr);
  json["activity"] = list_to_json(value.activity);
  json["kernel_names"] = value.kernel_names;
  json["leftover_threads"] = list_to_json(value.leftover_threads);
  json["leftover_processes"] = list_to_json(value.leftover_processes);
  json["kernel_launches"] = list_to_json(value.kernel_launches);
  return json;
}

Result<std::optional<CudaErrorInfo>> optional_cuda_error_from_json(const Json& json) {
  auto error = json.find("cuda_error");
  if (error == json.end() || !error->is_object()) return std::optional<CudaErrorInfo>{};
  CudaErrorInfo info;
  PTXB_ASSIGN_OR_RETURN(info.name, get_string(*error, "name", "cuda_error"));
  PTXB_ASSIGN_OR_RETURN(info.message, get_string(*error, "message", "cuda_error"));
  PTXB_ASSIGN_OR_RETURN(info.where, get_string(*error, "where", "cuda_error"));
  return std::optional<CudaErrorInfo>(std::move(info));
}

Result<CallReply> call_reply_from_json(const Json& json) {
  const std::string what = "call reply";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  CallReply value;
  PTXB_ASSIGN_OR_RETURN(value.call_index, get_u64(json, "call_index", what));
  PTXB_ASSIGN_OR_RETURN(value.external_id, get_u64(json, "external_id", what));
  PTXB_ASSIGN_OR_RETURN(value.cuda_error, optional_cuda_error_from_json(json));
  auto window = json.find("window");
  if (window != json.end() && window->is_object()) {
    value.has_window = true;
    PTXB_ASSIGN_OR_RETURN(value.window_start_ns, get_u64(*window, "start_ns", "window"));
    PTXB_ASSIGN_OR_RETURN(value.window_end_ns, get_u64(*window, "end_ns", "window"));
    PTXB_ASSIGN_OR_RETURN(value.device_ns, get_u64(*window, "device_ns", "window"));
  }
  PTXB_ASSIGN_OR_RETURN(value.kernel_count, get_u32(json, "kernel_count", what));
  PTXB_ASSIGN_OR_RETURN(value.memcpy_count, get_u32(json, "memcpy_count", what));
  PTXB_ASSIGN_OR_RETURN(value.memset_count, get_u32(json, "memset_count", what));
  PTXB_ASSIGN_OR_RETURN(value.expected_stream_id, get_u32(json, "expected_stream_id", what));
  PTXB_ASSIGN_OR_RETURN(
      value.foreign_stream,
      parse_list<ActivityRecord>(json, "foreign_stream", what, activity_record_from_json));
  PTXB_ASSIGN_OR_RETURN(value.out_of_window, parse_list<ActivityRecord>(json, "out_of_window", what,
                                                                        activity_record_from_json));
  PTXB_ASSIGN_OR_RETURN(value.new_modules,
                        parse_list<ModuleInfo>(json, "new_modules", what, module_info_from_json));
  PTXB_ASSIGN_OR_RETURN(
      value.unexpected_modules,
      parse_list<ModuleInfo>(json, "unexpected_modules", what, module_info_from_json));
  PTXB_ASSIGN_OR_RETURN(value.host_wall_ns, get_u64(json, "host_wall_ns", what));
  PTXB_ASSIGN_OR_RETURN(value.host_start_ns, get_u64(json, "host_start_ns", what));
  PTXB_ASSIGN_OR_RETURN(value.host_end_ns, get_u64(json, "host_end_ns", what));
  PTXB_ASSIGN_OR_RETURN(value.dropped_records, get_u64(json, "dropped_records", what));
  value.sm_clock_mhz = optional_u32(json, "sm_clock_mhz");
  PTXB_ASSIGN_OR_RETURN(value.activity, parse_list<ActivityRecord>(json, "activity", what,
                                                                   activity_record_from_json));
  // The integrity fields came with the leftover/foreign-kernel checks; a reply without them
  // (a scripted test runner) simply reports none.
  if (json.contains("kernel_names")) {
    PTXB_ASSIGN_OR_RETURN(value.kernel_names,
                          parse_list<std::string>(json, "kernel_names", what,
                                                  [](const Json& item) -> Result<std::string> {
                                                    if (!item.is_string())
                                                      return make_error("protocol",
                                                                        "expected a kernel name");
                                                    return item.get<std::string>();
                                                  }));
  }
  if (json.contains("leftover_threads")) {
    PTXB_ASSIGN_OR_RETURN(
        value.leftover_threads,
        parse_list<LeftoverTask>(json, "leftover_threads", what, leftover_task_from_json));
  }
  if (json.contains("leftover_processes")) {
    PTXB_ASSIGN_OR_RETURN(
        value.leftover_processes,
        parse_list<LeftoverTask>(json, "leftover_processes", what, leftover_task_from_json));
  }
  if (json.contains("kernel_launches")) {
    PTXB_ASSIGN_OR_RETURN(
        value.kernel_launches,
        parse_list<KernelLaunch>(json, "kernel_launches", what, kernel_launch_from_json));
  }
  return value;
}

}  // namespace ptxb
