// Strict JSON field readers shared by the protocol codecs (protocol/protocol*.cc). A missing
// field or a wrong JSON type is an error naming the message and the field, so a malformed message
// is rejected whole instead of half-applied. Internal to src/protocol.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_fields.h"
#include "core/json_io.h"
#include "core/result.h"

namespace ptxb::protocol_detail {

// The protocol's field readers over core/json_fields.h (the one strict reader): errors name the
// message and the field ("hello reply.device_name: missing required field") and carry the code
// "protocol".
inline Status require_object(const Json& json, const std::string& what) {
  if (!json.is_object()) return make_error("protocol", "{}: expected a JSON object", what);
  return ok_status();
}

template <typename T>
Result<T> get_field(const Json& json, const char* key, const std::string& what) {
  T out{};
  Status read = FieldReader(json, what).required(key, out).status();
  if (!read.ok()) return Error{read.error().message, "protocol"};
  return out;
}

inline Result<std::uint64_t> get_u64(const Json& json, const char* key, const std::string& what) {
  return get_field<std::uint64_t>(json, key, what);
}

inline Result<std::int64_t> get_i64(const Json& json, const char* key, const std::string& what) {
  return get_field<std::int64_t>(json, key, what);
}

inline Result<std::string> get_string(const Json& json, const char* key, const std::string& what) {
  return get_field<std::string>(json, key, what);
}

inline Result<bool> get_bool(const Json& json, const char* key, const std::string& what,
                             std::optional<bool> fallback) {
  if (fallback && !json.contains(key)) return *fallback;
  return get_field<bool>(json, key, what);
}

inline Result<const Json*> get_array(const Json& json, const char* key, const std::string& what) {
  auto it = json.find(key);
  if (it == json.end()) return make_error("protocol", "{}: missing field '{}'", what, key);
  if (!it->is_array()) return make_error("protocol", "{}: field '{}' must be an array", what, key);
  return &*it;
}

inline Result<std::uint32_t> get_u32(const Json& json, const char* key, const std::string& what) {
  return get_field<std::uint32_t>(json, key, what);
}

inline std::optional<std::uint32_t> optional_u32(const Json& json, const char* key) {
  auto it = json.find(key);
  if (it == json.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<std::uint32_t>();
}

template <typename T, typename Parse>
inline Result<std::vector<T>> parse_list(const Json& json, const char* key, const std::string& what,
                                         Parse parse) {
  PTXB_ASSIGN_OR_RETURN(const Json* array, get_array(json, key, what));
  std::vector<T> out;
  out.reserve(array->size());
  for (std::size_t i = 0; i < array->size(); ++i) {
    auto item = parse((*array)[i]);
    if (!item.ok()) return item.error().with_context(fmt::format("{}.{}[{}]", what, key, i));
    out.push_back(std::move(item).value());
  }
  return out;
}

template <typename T>
Json list_to_json(const std::vector<T>& items) {
  Json out = Json::array();
  for (const auto& item : items) out.push_back(to_json(item));
  return out;
}

}  // namespace ptxb::protocol_detail
