#include "protocol/protocol.h"

#include "protocol/json_fields.h"

namespace ptxb {
using namespace protocol_detail;

std::string to_hex(const void* data, std::size_t size) {
  static const char kDigits[] = "0123456789abcdef";
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::string out(size * 2, '0');
  for (std::size_t i = 0; i < size; ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

Result<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2 != 0) return make_error("protocol", "hex string of odd length {}", hex.size());
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out(hex.size() / 2, '\0');
  for (std::size_t i = 0; i < out.size(); ++i) {
    int high = nibble(hex[2 * i]);
    int low = nibble(hex[2 * i + 1]);
    if (high < 0 || low < 0) return make_error("protocol", "invalid hex digit at offset {}", 2 * i);
    out[i] = static_cast<char>((high << 4) | low);
  }
  return out;
}

// ---- envelope ----

Json make_request(const std::string& type, std::uint64_t seq, Json body) {
  Json message = Json::object();
  message["type"] = type;
  message["seq"] = seq;
  for (auto& [key, value] : body.items()) message[key] = std::move(value);
  return message;
}

Json make_ok_reply(const std::string& type, std::uint64_t seq, Json body) {
  Json message = Json::object();
  message["type"] = type;
  message["seq"] = seq;
  message["ok"] = true;
  for (auto& [key, value] : body.items()) message[key] = std::move(value);
  return message;
}

Json make_error_reply(const std::string& type, std::uint64_t seq, const Error& error) {
  Json message = Json::object();
  message["type"] = type;
  message["seq"] = seq;
  message["ok"] = false;
  message["error"] = Json{{"code", error.code}, {"message", error.message}};
  return message;
}

std::string encode_message(const Json& message) {
  return message.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<Envelope> parse_request_envelope(const Json& message) {
  PTXB_RETURN_IF_ERROR(require_object(message, "request"));
  PTXB_ASSIGN_OR_RETURN(std::string type, get_string(message, "type", "request"));
  PTXB_ASSIGN_OR_RETURN(std::uint64_t seq, get_u64(message, "seq", "request"));
  for (const char* known : {kMsgHello, kMsgLoad, kMsgBind, kMsgCall, kMsgBatch, kMsgShutdown}) {
    if (type == known) return Envelope{type, seq};
  }
  return make_error("protocol", "request: unknown message type '{}'", type);
}

Status check_reply(const Json& reply, const std::string& type, std::uint64_t seq) {
  PTXB_RETURN_IF_ERROR(require_object(reply, type + " reply"));
  PTXB_ASSIGN_OR_RETURN(std::string got_type, get_string(reply, "type", type + " reply"));
  PTXB_ASSIGN_OR_RETURN(std::uint64_t got_seq, get_u64(reply, "seq", type + " reply"));
  if (got_type != type || got_seq != seq) {
    return make_error("protocol", "reply ({} #{}) does not answer request ({} #{})", got_type,
                      got_seq, type, seq);
  }
  PTXB_ASSIGN_OR_RETURN(bool ok, get_bool(reply, "ok", type + " reply", std::nullopt));
  if (ok) return ok_status();
  const Json& error = reply.contains("error") ? reply["error"] : Json::object();
  std::string code = error.is_object() && error.contains("code") && error["code"].is_string()
                         ? error["code"].get<std::string>()
                         : "unknown";
  std::string message =
      error.is_object() && error.contains("message") && error["message"].is_string()
          ? error["message"].get<std::string>()
          : "(no message)";
  return Error{"runner: " + type + ": " + message, "runner:" + code};
}

// ---- hello ----

Json to_json(const HelloReply& value) {
  Json json = {{"protocol_version", value.protocol_version},
               {"pid", value.pid},
               {"device_ordinal", value.device_ordinal},
               {"device_name", value.device_name},
               {"pci_bus_id", value.pci_bus_id},
               {"cuda_runtime_version", value.cuda_runtime_version},
               {"cuda_driver_version", value.cuda_driver_version},
               {"cupti_version", value.cupti_version},
               {"l2_bytes", value.l2_bytes},
               {"l2_flush_bytes", value.l2_flush_bytes},
               {"runner_version", value.runner_version}};
  json["sm_clock_mhz"] = value.sm_clock_mhz ? Json(*value.sm_clock_mhz) : Json(nullptr);
  return json;
}

Result<HelloReply> hello_reply_from_json(const Json& json) {
  const std::string what = "hello reply";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  HelloReply value;
  PTXB_ASSIGN_OR_RETURN(auto version, get_i64(json, "protocol_version", what));
  if (version != kRunnerProtocolVersion) {
    return make_error("protocol", "runner speaks protocol {}, supervisor {}", version,
                      kRunnerProtocolVersion);
  }
  PTXB_ASSIGN_OR_RETURN(value.pid, get_i64(json, "pid", what));
  PTXB_ASSIGN_OR_RETURN(auto ordinal, get_i64(json, "device_ordinal", what));
  value.device_ordinal = static_cast<int>(ordinal);
  PTXB_ASSIGN_OR_RETURN(value.device_name, get_string(json, "device_name", what));
  PTXB_ASSIGN_OR_RETURN(value.pci_bus_id, get_string(json, "pci_bus_id", what));
  PTXB_ASSIGN_OR_RETURN(auto runtime, get_i64(json, "cuda_runtime_version", what));
  PTXB_ASSIGN_OR_RETURN(auto driver, get_i64(json, "cuda_driver_version", what));
  value.cuda_runtime_version = static_cast<int>(runtime);
  value.cuda_driver_version = static_cast<int>(driver);
  PTXB_ASSIGN_OR_RETURN(value.cupti_version, get_u32(json, "cupti_version", what));
  PTXB_ASSIGN_OR_RETURN(value.l2_bytes, get_i64(json, "l2_bytes", what));
  PTXB_ASSIGN_OR_RETURN(value.l2_flush_bytes, get_i64(json, "l2_flush_bytes", what));
  PTXB_ASSIGN_OR_RETURN(value.runner_version, get_string(json, "runner_version", what));
  value.sm_clock_mhz = optional_u32(json, "sm_clock_mhz");
  return value;
}

// ---- load ----

Json to_json(const LoadRequest& value) {
  return {{"so_path", value.so_path},
          {"expected_signature", value.expected_signature},
          {"expected_module_sha256", value.expected_module_sha256}};
}

Result<LoadRequest> load_request_from_json(const Json& json) {
  const std::string what = "load request";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  LoadRequest value;
  PTXB_ASSIGN_OR_RETURN(value.so_path, get_string(json, "so_path", what));
  if (value.so_path.empty() || value.so_path[0] != '/') {
    return make_error("protocol", "{}: so_path must be an absolute path, got '{}'", what,
                      value.so_path);
  }
  PTXB_ASSIGN_OR_RETURN(value.expected_signature, get_string(json, "expected_signature", what));
  PTXB_ASSIGN_OR_RETURN(
      value.expected_module_sha256,
      parse_list<std::string>(json, "expected_module_sha256", what,
                              [](const Json& item) -> Result<std::string> {
                                if (!item.is_string() || item.get<std::string>().size() != 64) {
                                  return make_error("protocol", "expected a 64-digit hex SHA-256");
                                }
                                return item.get<std::string>();
                              }));
  return value;
}

Json to_json(const ModuleInfo& value) {
  Json json = {{"module_id", value.module_id},
               {"sha256", value.sha256},
               {"bytes", value.bytes},
               {"origin", value.origin}};
  json["expected"] = value.expected ? Json(*value.expected) : Json(nullptr);
  return json;
}

Result<ModuleInfo> module_info_from_json(const Json& json) {
  const std::string what = "module";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  ModuleInfo value;
  PTXB_ASSIGN_OR_RETURN(value.module_id, get_u32(json, "module_id", what));
  PTXB_ASSIGN_OR_RETURN(value.sha256, get_string(json, "sha256", what));
  PTXB_ASSIGN_OR_RETURN(value.bytes, get_u64(json, "bytes", what));
  PTXB_ASSIGN_OR_RETURN(value.origin, get_string(json, "origin", what));
  auto it = json.find("expected");
  if (it != json.end() && it->is_boolean()) value.expected = it->get<bool>();
  return value;
}

Json to_json(const LoadReply& value) {
  return {{"abi_signature", value.abi_signature}, {"modules", list_to_json(value.modules)}};
}

Result<LoadReply> load_reply_from_json(const Json& json) {
  const std::string what = "load reply";
  PTXB_RETURN_IF_ERROR(require_object(json, what));
  LoadReply value;
  PTXB_ASSIGN_OR_RETURN(value.abi_signature, get_string(json, "abi_signature", what));
  PTXB_ASSIGN_OR_RETURN(value.modules,
                        parse_list<ModuleInfo>(json, "modules", what, module_info_from_json));
  return value;
}

}  // namespace ptxb
