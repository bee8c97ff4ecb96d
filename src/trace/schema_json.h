// Typed access to FlashInfer-Trace JSON with findings instead of exceptions.
//
// Every accessor takes the parent object and its JSON path, records a finding in `diagnostics`
// when the field is missing or has the wrong type, and returns nullopt/nullptr; callers keep
// going so that one run reports every problem of a document.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"
#include "trace/diagnostics.h"

namespace ptxb {

// "a string", "an array", "null", ... for messages like "expected an object, got a string".
std::string json_type_description(const Json& value);

// [A-Za-z_][A-Za-z0-9_]* : names that become C++ parameter names or file names.
bool is_c_identifier(const std::string& name);

// Records "expected an object, got ..." and returns false unless `value` is an object.
bool check_object(const Json& value, const std::string& path, Diagnostics& diagnostics);

// A required field of `object`; records "missing required field 'key'" when absent.
const Json* require_field(const Json& object, const std::string& key, const std::string& path,
                          Diagnostics& diagnostics);

std::optional<std::string> require_string(const Json& object, const std::string& key,
                                          const std::string& path, Diagnostics& diagnostics);
// Absent -> nullopt without a finding; present but not a string -> finding.
std::optional<std::string> optional_string(const Json& object, const std::string& key,
                                           const std::string& path, Diagnostics& diagnostics);
// An array of non-empty strings (absent -> empty vector, no finding).
std::vector<std::string> optional_string_list(const Json& object, const std::string& key,
                                              const std::string& path, Diagnostics& diagnostics);
// An integer (not a float, not a bool) at `value`.
std::optional<std::int64_t> as_integer(const Json& value, const std::string& path,
                                       Diagnostics& diagnostics);
// A finite or schema-spelled number ("NaN", "Infinity" as pydantic writes them) >= 0.
std::optional<double> as_non_negative_number(const Json& value, const std::string& path,
                                             Diagnostics& diagnostics);

// Parses JSON text like parse_json() and additionally rejects duplicate keys in any object:
// nlohmann keeps only the last of two equal keys, which would silently drop a tensor or axis.
Result<Json> parse_trace_json(std::string_view text, const std::string& origin);
// Reads a file (size-capped) and parses it with parse_trace_json.
Result<Json> read_trace_json_file(const std::string& path);
// One document per non-blank line; each error names `path:line`. Returns the documents with
// their 1-based line numbers; a bad line is reported in `diagnostics` and skipped.
struct JsonLine {
  std::size_t line = 0;
  Json document;
};
std::vector<JsonLine> read_trace_jsonl_file(const std::string& path, Diagnostics& diagnostics);

}  // namespace ptxb
