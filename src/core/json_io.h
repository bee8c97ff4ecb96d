// JSON reading and writing with the guarantees the FlashInfer-Trace schema needs.
//
// Key order in `axes`, `inputs` and `outputs` is the calling convention of a kernel (design.md
// §3.1), so every JSON object in PTXBench is an nlohmann::ordered_json: insertion order is kept
// on parse and on dump, and unknown fields survive a round trip untouched.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace ptxb {

using Json = nlohmann::ordered_json;

// Largest JSON/JSONL file we read. Trace-set files are small; a 10 MB garbage file is an error,
// not a 10 MB parse.
inline constexpr std::size_t kMaxJsonFileBytes = 8u << 20;

// Deepest nesting of arrays and objects we accept. Real documents (traces, configs, model
// answers) nest fewer than 10 levels; the limit keeps hostile input from driving recursive
// consumers (dump, schema walks) into stack exhaustion or path bookkeeping into large memory.
inline constexpr std::size_t kMaxJsonDepth = 256;

// Returns an empty string if no array or object in `text` nests deeper than `max_depth`, else a
// description with the byte offset. One linear pass; strings are skipped.
std::string find_depth_error(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

// Returns an empty string if `text` is valid UTF-8, else a description with the byte offset.
std::string find_utf8_error(std::string_view text);

// `text` with every byte that is not part of valid UTF-8 replaced by U+FFFD. Tool output the
// candidate can shape (kernel names in a ptxas log, a sanitizer's quoted source) goes into JSON
// results, and nlohmann's dump throws on invalid UTF-8: parsers of such output call this first.
std::string to_valid_utf8(std::string_view text);

// Parses one JSON document. `origin` names the source in errors ("definitions/x.json").
// Rejects empty input, NUL bytes, invalid UTF-8, nesting deeper than kMaxJsonDepth, numbers that
// overflow a double and trailing garbage, each with a clear message. Never throws.
Result<Json> parse_json(std::string_view text, const std::string& origin);

// Reads and parses a JSON file (size-capped).
Result<Json> read_json_file(const std::string& path);

// Reads a JSON Lines file: one document per non-blank line. Errors name `path:line`.
Result<std::vector<Json>> read_jsonl_file(const std::string& path);

// Pretty JSON with a trailing newline (2-space indent), as written to disk and stdout.
std::string dump_pretty(const Json& value);

// Formats a JSON path element: `$.axes.M`, `$.inputs.A.shape[1]`.
std::string json_path_key(const std::string& parent, const std::string& key);
std::string json_path_index(const std::string& parent, std::size_t index);

}  // namespace ptxb
