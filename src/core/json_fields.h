// One strict way to read the fields of a JSON object into C++ types, for every document PTXBench
// reads back: evaluation results, run-directory records, supervisor jobs.
//
// A missing required field, or a field of the wrong type, is an error that names the field by its
// JSON path ("$.workloads[0].status: missing required field"). Optional fields say so at the call
// (`optional`), with the default the caller's variable already holds, or as std::optional. The
// reader keeps the first error and skips the reads after it, so a from_json reads as a list of
// fields followed by one `return r.status()`.
//
// Nested objects: a nested from_json reports paths from its own root "$"; `nested` re-roots them
// under the parent's path, so errors always carry the full path from the document's root.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// Re-roots an error whose message starts with a path from "$" under `parent` ("$.workloads[0]").
Error rebase_json_path(const Error& error, const std::string& parent);

namespace json_fields_detail {

template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsStringMap : std::false_type {};
template <typename T>
struct IsStringMap<std::map<std::string, T>> : std::true_type {};

// Types that read themselves: `static Result<T> from_json(const Json&)`.
template <typename T>
concept SelfReading = requires(const Json& j) {
  { T::from_json(j) } -> std::same_as<Result<T>>;
};

// Reads `json` (at `path`) into `out`; the error names the path.
template <typename T>
Status read_value(const Json& json, const std::string& path, T& out) {
  auto wrong_type = [&](const char* expected) {
    return make_error("parse", "{}: expected {}, got {}", path, expected, json.type_name());
  };
  if constexpr (std::is_same_v<T, Json>) {
    out = json;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!json.is_boolean()) return wrong_type("a boolean");
    out = json.get<bool>();
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (!json.is_string()) return wrong_type("a string");
    out = json.get<std::string>();
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!json.is_number()) return wrong_type("a number");
    out = json.get<T>();
  } else if constexpr (std::is_integral_v<T>) {
    if (!json.is_number_integer()) return wrong_type("an integer");
    // In range of T: a narrowing get<T>() would wrap silently.
    auto out_of_range = [&] {
      return make_error("parse", "{}: {} is out of range", path, json.dump());
    };
    if (json.is_number_unsigned()) {
      if (json.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))
        return out_of_range();
    } else {
      const std::int64_t v = json.get<std::int64_t>();
      if constexpr (std::is_signed_v<T>) {
        if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
          return out_of_range();
      } else {
        if (v < 0) return wrong_type("a non-negative integer");
        if (static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max()) return out_of_range();
      }
    }
    out = json.get<T>();
  } else if constexpr (IsVector<T>::value) {
    if (!json.is_array()) return wrong_type("an array");
    T items(json.size());
    for (std::size_t i = 0; i < json.size(); ++i)
      PTXB_RETURN_IF_ERROR(read_value(json[i], json_path_index(path, i), items[i]));
    out = std::move(items);
  } else if constexpr (IsStringMap<T>::value) {
    if (!json.is_object()) return wrong_type("an object");
    T items;
    for (const auto& [key, value] : json.items())
      PTXB_RETURN_IF_ERROR(read_value(value, json_path_key(path, key), items[key]));
    out = std::move(items);
  } else {
    static_assert(SelfReading<T>, "read_value: no reader for this type");
    auto parsed = T::from_json(json);
    if (!parsed.ok()) return rebase_json_path(parsed.error(), path);
    out = std::move(parsed).value();
  }
  return ok_status();
}

}  // namespace json_fields_detail

// Reads the fields of one JSON object. Construct it over the object, read, then check status().
class FieldReader {
 public:
  // `path` is the object's JSON path ("$" for a document's root).
  FieldReader(const Json& json, std::string path = "$") : json_(json), path_(std::move(path)) {
    if (!json_.is_object())
      error_ = make_error("parse", "{}: expected an object, got {}", path_, json_.type_name());
  }

  // A field that must be present (null is not present).
  template <typename T>
  FieldReader& required(const char* key, T& out) {
    if (error_) return *this;
    const Json* field = find(key);
    if (!field) {
      error_ = make_error("parse", "{}: missing required field", json_path_key(path_, key));
      return *this;
    }
    return read(*field, key, out);
  }

  // A field that may be absent (or null): `out` keeps the default it holds.
  template <typename T>
  FieldReader& optional(const char* key, T& out) {
    if (error_) return *this;
    if (const Json* field = find(key)) read(*field, key, out);
    return *this;
  }

  // A field that may be absent (or null): nullopt then.
  template <typename T>
  FieldReader& optional(const char* key, std::optional<T>& out) {
    if (error_) return *this;
    out.reset();
    if (const Json* field = find(key)) read(*field, key, out.emplace());
    if (error_) out.reset();
    return *this;
  }

  // A field read by `parse(const Json&, const std::string& path) -> Status`, for the types with
  // their own encoding (a status name, a non-finite number as a string). Unlike the readers
  // above, a null value is passed to `parse`: only an absent key is missing.
  template <typename Parse>
  FieldReader& custom(const char* key, bool is_required, Parse parse) {
    if (error_) return *this;
    auto it = json_.is_object() ? json_.find(key) : json_.end();
    const Json* field = it == json_.end() ? nullptr : &*it;
    if (!field) {
      if (is_required)
        error_ = make_error("parse", "{}: missing required field", json_path_key(path_, key));
      return *this;
    }
    Status parsed = parse(*field, json_path_key(path_, key));
    if (!parsed.ok()) error_ = parsed.error();
    return *this;
  }

  bool has(const char* key) const { return find(key) != nullptr; }
  const std::string& path() const { return path_; }
  std::string path_of(const char* key) const { return json_path_key(path_, key); }
  Status status() const {
    if (error_) return *error_;
    return ok_status();
  }

 private:
  const Json* find(const char* key) const {
    if (!json_.is_object()) return nullptr;
    auto it = json_.find(key);
    if (it == json_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  template <typename T>
  FieldReader& read(const Json& field, const char* key, T& out) {
    Status read = json_fields_detail::read_value(field, json_path_key(path_, key), out);
    if (!read.ok()) error_ = read.error();
    return *this;
  }

  const Json& json_;
  std::string path_;
  std::optional<Error> error_;
};

}  // namespace ptxb
