// The batch message of the protocol (declared in protocol/protocol.h): K calls in one request.
#include "protocol/json_fields.h"
#include "protocol/protocol.h"

namespace ptxb {

using namespace protocol_detail;

namespace {

// A batch is a handful of calls (the supervisor sizes it to amortise its own overhead to 1 %);
// a request for more is malformed, not a reason to loop for minutes.
constexpr std::size_t kMaxBatchCalls = 4096;

}  // namespace

Json to_json(const BatchRequest& value) {
  Json json = {{"sets", value.sets}};
  if (value.flush_l2) json["flush_l2"] = true;
  if (value.timed) json["timed"] = true;
  return json;
}

Result<BatchRequest> batch_request_from_json(const Json& json) {
  const std::string what = "batch request";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  PTXB_ASSIGN_OR_RETURN(const Json* sets, get_array(json, "sets", what));
  if (sets->size() > kMaxBatchCalls)
    return make_error("protocol", "{}: {} calls (at most {})", what, sets->size(), kMaxBatchCalls);
  BatchRequest value;
  for (const auto& set : *sets) {
    if (!set.is_number_unsigned())
      return make_error("protocol", "{}: sets must be non-negative integers", what);
    value.sets.push_back(set.get<std::uint64_t>());
  }
  for (const char* flag : {"flush_l2", "timed"}) {
    if (!json.contains(flag)) continue;
    if (!json[flag].is_boolean())
      return make_error("protocol", "{}: {} must be a boolean", what, flag);
    (std::string(flag) == "timed" ? value.timed : value.flush_l2) = json[flag].get<bool>();
  }
  return value;
}

Json to_json(const BatchReply& value) {
  Json json = {{"calls", value.calls}};
  json["cuda_error"] = value.cuda_error ? to_json(*value.cuda_error) : Json(nullptr);
  json["leftover_threads"] = list_to_json(value.leftover_threads);
  json["leftover_processes"] = list_to_json(value.leftover_processes);
  if (!value.device_ns.empty()) json["device_ns"] = value.device_ns;
  return json;
}

Result<BatchReply> batch_reply_from_json(const Json& json) {
  const std::string what = "batch reply";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  BatchReply value;
  PTXB_ASSIGN_OR_RETURN(value.calls, get_u64(json, "calls", what));
  PTXB_ASSIGN_OR_RETURN(value.cuda_error, optional_cuda_error_from_json(json));
  PTXB_ASSIGN_OR_RETURN(
      value.leftover_threads,
      parse_list<LeftoverTask>(json, "leftover_threads", what, leftover_task_from_json));
  PTXB_ASSIGN_OR_RETURN(
      value.leftover_processes,
      parse_list<LeftoverTask>(json, "leftover_processes", what, leftover_task_from_json));
  if (json.contains("device_ns")) {
    if (!json["device_ns"].is_array())
      return make_error("protocol", "{}: device_ns: not a list", what);
    for (const auto& ns : json["device_ns"]) {
      if (!ns.is_number_unsigned())
        return make_error("protocol", "{}: device_ns must be non-negative integers", what);
      value.device_ns.push_back(ns.get<std::uint64_t>());
    }
    if (value.device_ns.size() != value.calls)
      return make_error("protocol", "{}: {} device times for {} calls", what,
                        value.device_ns.size(), value.calls);
  }
  return value;
}

}  // namespace ptxb
