#include "trace/schema_json.h"

#include <cctype>
#include <cmath>
#include <set>

#include "core/fs.h"

namespace ptxb {

std::string json_type_description(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

bool is_c_identifier(const std::string& name) {
  if (name.empty()) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

bool check_object(const Json& value, const std::string& path, Diagnostics& diagnostics) {
  if (value.is_object()) return true;
  diagnostics.error(path, "expected an object, got " + json_type_description(value));
  return false;
}

const Json* require_field(const Json& object, const std::string& key, const std::string& path,
                          Diagnostics& diagnostics) {
  auto it = object.find(key);
  if (it == object.end()) {
    diagnostics.error(path, "missing required field '" + key + "'");
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> require_string(const Json& object, const std::string& key,
                                          const std::string& path, Diagnostics& diagnostics) {
  const Json* value = require_field(object, key, path, diagnostics);
  if (!value) return std::nullopt;
  const std::string field_path = json_path_key(path, key);
  if (!value->is_string()) {
    diagnostics.error(field_path, "expected a string, got " + json_type_description(*value));
    return std::nullopt;
  }
  if (value->get<std::string>().empty()) {
    diagnostics.error(field_path, "must not be empty");
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<std::string> optional_string(const Json& object, const std::string& key,
                                           const std::string& path, Diagnostics& diagnostics) {
  auto it = object.find(key);
  if (it == object.end()) return std::nullopt;
  if (!it->is_string()) {
    diagnostics.error(json_path_key(path, key),
                      "expected a string, got " + json_type_description(*it));
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::vector<std::string> optional_string_list(const Json& object, const std::string& key,
                                              const std::string& path, Diagnostics& diagnostics) {
  std::vector<std::string> out;
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return out;
  const std::string field_path = json_path_key(path, key);
  if (!it->is_array()) {
    diagnostics.error(field_path,
                      "expected an array of strings, got " + json_type_description(*it));
    return out;
  }
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& item = (*it)[i];
    if (!item.is_string() || item.get<std::string>().empty()) {
      diagnostics.error(json_path_index(field_path, i),
                        "expected a non-empty string, got " + json_type_description(item));
      continue;
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

std::optional<std::int64_t> as_integer(const Json& value, const std::string& path,
                                       Diagnostics& diagnostics) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (value.is_number_unsigned()) {
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      diagnostics.error(path, "integer out of range");
      return std::nullopt;
    }
    return static_cast<std::int64_t>(value.get<std::uint64_t>());
  }
  diagnostics.error(path, "expected an integer, got " + json_type_description(value));
  return std::nullopt;
}

std::optional<double> as_non_negative_number(const Json& value, const std::string& path,
                                             Diagnostics& diagnostics) {
  // pydantic (ser_json_inf_nan="strings") writes non-finite floats as these strings.
  if (value.is_string()) {
    const auto text = value.get<std::string>();
    if (text == "NaN") return std::nan("");
    if (text == "Infinity") return INFINITY;
    diagnostics.error(path, "expected a number, got the string '" + text + "'");
    return std::nullopt;
  }
  if (!value.is_number()) {
    diagnostics.error(path, "expected a number, got " + json_type_description(value));
    return std::nullopt;
  }
  const double number = value.get<double>();
  if (number < 0) {
    diagnostics.error(path, "must be >= 0, got " + value.dump());
    return std::nullopt;
  }
  return number;
}

namespace {

// Tracks the JSON path during a callback parse to report duplicate keys with their location.
// Each frame holds only its own path element (".inputs", "[3]"); the full path is joined when a
// duplicate is found, so memory stays linear in the input, not quadratic in the depth.
struct DuplicateKeyFinder {
  struct Frame {
    bool is_object = false;
    std::string element;  // how the parent reaches this container; "$" for the root
    std::set<std::string> keys;
    std::size_t next_index = 0;
    std::string last_key;
  };
  std::vector<Frame> stack;
  std::string first_duplicate;  // "$.inputs: duplicate key 'A'"

  std::string child_element() {
    if (stack.empty()) return "$";
    Frame& top = stack.back();
    if (top.is_object) return json_path_key("", top.last_key);
    return json_path_index("", top.next_index++);
  }

  std::string top_path() const {
    std::string path;
    for (const Frame& frame : stack) path += frame.element;
    return path;
  }

  bool operator()(int /*depth*/, Json::parse_event_t event, Json& parsed) {
    switch (event) {
      case Json::parse_event_t::object_start:
      case Json::parse_event_t::array_start: {
        Frame frame;
        frame.is_object = event == Json::parse_event_t::object_start;
        frame.element = child_element();
        stack.push_back(std::move(frame));
        break;
      }
      case Json::parse_event_t::object_end:
      case Json::parse_event_t::array_end:
        if (!stack.empty()) stack.pop_back();
        break;
      case Json::parse_event_t::key: {
        Frame& top = stack.back();
        top.last_key = parsed.get<std::string>();
        if (!top.keys.insert(top.last_key).second && first_duplicate.empty())
          first_duplicate = top_path() + ": duplicate key '" + top.last_key +
                            "' (names in an object must be unique)";
        break;
      }
      case Json::parse_event_t::value:
        // Scalars inside arrays advance the array index; inside objects the key already did.
        if (!stack.empty() && !stack.back().is_object) child_element();
        break;
    }
    return true;
  }
};

}  // namespace

Result<Json> parse_trace_json(std::string_view text, const std::string& origin) {
  // The core parser gives the clear messages for empty, binary, non-UTF-8 and malformed input.
  PTXB_ASSIGN_OR_RETURN(Json document, parse_json(text, origin));
  // A second pass with a callback sees every key before nlohmann merges duplicates. Trace-set
  // files are small (capped at kMaxJsonFileBytes), so parsing twice costs little.
  DuplicateKeyFinder finder;
  try {
    const Json discarded = Json::parse(text.begin(), text.end(), std::ref(finder));
    (void)discarded;
  } catch (const Json::exception&) {
    // The first parse succeeded, so the same text cannot fail here.
  }
  if (!finder.first_duplicate.empty())
    return make_error("validation", "{}: {}", origin, finder.first_duplicate);
  return document;
}

Result<Json> read_trace_json_file(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxJsonFileBytes));
  return parse_trace_json(text, path);
}

std::vector<JsonLine> read_trace_jsonl_file(const std::string& path, Diagnostics& diagnostics) {
  std::vector<JsonLine> lines;
  auto text = read_file(path, kMaxJsonFileBytes);
  if (!text) {
    diagnostics.add_error(text.error());
    return lines;
  }
  const std::string& contents = text.value();
  if (contents.find('\0') != std::string::npos) {
    diagnostics.add_error(make_error("parse",
                                     "{}: binary data (NUL byte at offset {}), expected "
                                     "JSON Lines",
                                     path, contents.find('\0')));
    return lines;
  }
  if (auto utf8 = find_utf8_error(contents); !utf8.empty()) {
    diagnostics.add_error(make_error("parse", "{}: not UTF-8 text: {}", path, utf8));
    return lines;
  }
  std::size_t start = 0;
  std::size_t line_number = 0;
  bool any = false;
  while (start <= contents.size()) {
    std::size_t end = contents.find('\n', start);
    if (end == std::string::npos) end = contents.size();
    ++line_number;
    std::string_view line(contents.data() + start, end - start);
    bool blank = true;
    for (char c : line) blank = blank && std::isspace(static_cast<unsigned char>(c));
    if (!blank) {
      any = true;
      auto parsed = parse_trace_json(line, path + ":" + std::to_string(line_number));
      if (parsed)
        lines.push_back({line_number, std::move(parsed).value()});
      else
        diagnostics.add_error(parsed.error());
    }
    start = end + 1;
  }
  if (!any) diagnostics.add_error(make_error("parse", "{}: empty file (no JSON lines)", path));
  return lines;
}

}  // namespace ptxb
