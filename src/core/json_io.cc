#include "core/json_io.h"

#include <cctype>

#include "core/fs.h"

namespace ptxb {

std::string find_utf8_error(std::string_view text) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const auto byte = static_cast<unsigned char>(text[i]);
    std::size_t length = 0;
    std::uint32_t code_point = 0;
    if (byte < 0x80) {
      ++i;
      continue;
    } else if ((byte & 0xE0) == 0xC0) {
      length = 2;
      code_point = byte & 0x1F;
    } else if ((byte & 0xF0) == 0xE0) {
      length = 3;
      code_point = byte & 0x0F;
    } else if ((byte & 0xF8) == 0xF0) {
      length = 4;
      code_point = byte & 0x07;
    } else {
      return fmt::format("invalid UTF-8 lead byte 0x{:02x} at byte offset {}", byte, i);
    }
    if (i + length > n) return fmt::format("truncated UTF-8 sequence at byte offset {}", i);
    for (std::size_t k = 1; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80)
        return fmt::format(
            "invalid UTF-8 sequence at byte offset {} (byte 0x{:02x} is not a continuation byte)",
            i, next);
      code_point = (code_point << 6) | (next & 0x3F);
    }
    // Overlong encodings and surrogates are invalid UTF-8 (RFC 3629 §3).
    const bool overlong = (length == 2 && code_point < 0x80) ||
                          (length == 3 && code_point < 0x800) ||
                          (length == 4 && code_point < 0x10000);
    if (overlong || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF))
      return fmt::format("invalid UTF-8 code point at byte offset {}", i);
    i += length;
  }
  return {};
}

std::string find_depth_error(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;  // the escaped character cannot end the string
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth)
        return fmt::format("nested deeper than {} levels at byte offset {}", max_depth, i);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return {};
}

std::string to_valid_utf8(std::string_view text) {
  if (find_utf8_error(text).empty()) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  std::size_t i = 0;
  while (i < text.size()) {
    // The longest valid sequence at i (1-4 bytes), else one replaced byte.
    std::size_t valid = 0;
    for (std::size_t length = 1; length <= 4 && i + length <= text.size(); ++length) {
      const std::string_view candidate = text.substr(i, length);
      if (find_utf8_error(candidate).empty()) {
        valid = length;
        break;
      }
    }
    if (valid == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(text.substr(i, valid));
      i += valid;
    }
  }
  return out;
}

Result<Json> parse_json(std::string_view text, const std::string& origin) {
  bool blank = true;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      blank = false;
      break;
    }
  }
  if (blank) return make_error("parse", "{}: empty file (expected a JSON document)", origin);
  if (text.find('\0') != std::string_view::npos)
    return make_error("parse", "{}: binary data (NUL byte at offset {}), expected JSON text",
                      origin, text.find('\0'));
  if (auto utf8 = find_utf8_error(text); !utf8.empty())
    return make_error("parse", "{}: not UTF-8 text: {}", origin, utf8);
  if (auto depth = find_depth_error(text); !depth.empty())
    return make_error("parse", "{}: malformed JSON: {}", origin, depth);
  // nlohmann's messages start with "[json.exception.parse_error.101] parse error at line 1, ...".
  auto without_tag = [](const char* what) {
    std::string text = what;
    if (auto pos = text.find("] "); pos != std::string::npos) text = text.substr(pos + 2);
    return text;
  };
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    return make_error("parse", "{}: malformed JSON: {}", origin, without_tag(e.what()));
  } catch (const Json::out_of_range& e) {
    // 1e400 and friends: "number overflow parsing '1e400'" (the value does not fit a double).
    return make_error("parse", "{}: malformed JSON: {} (outside the range of a double)", origin,
                      without_tag(e.what()));
  } catch (const Json::exception& e) {
    return make_error("parse", "{}: malformed JSON: {}", origin, without_tag(e.what()));
  }
}

Result<Json> read_json_file(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxJsonFileBytes));
  return parse_json(text, path);
}

Result<std::vector<Json>> read_jsonl_file(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::string text, read_file(path, kMaxJsonFileBytes));
  if (text.find('\0') != std::string::npos)
    return make_error("parse", "{}: binary data (NUL byte at offset {}), expected JSON Lines", path,
                      text.find('\0'));
  if (auto utf8 = find_utf8_error(text); !utf8.empty())
    return make_error("parse", "{}: not UTF-8 text: {}", path, utf8);
  std::vector<Json> documents;
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    ++line_number;
    std::string_view line(text.data() + start, end - start);
    bool blank = true;
    for (char c : line) blank = blank && std::isspace(static_cast<unsigned char>(c));
    if (!blank) {
      auto parsed = parse_json(line, fmt::format("{}:{}", path, line_number));
      if (!parsed) return parsed.error();
      documents.push_back(std::move(parsed).value());
    }
    start = end + 1;
  }
  if (documents.empty()) return make_error("parse", "{}: empty file (no JSON lines)", path);
  return documents;
}

std::string dump_pretty(const Json& value) {
  return value.dump(2) + "\n";
}

std::string json_path_key(const std::string& parent, const std::string& key) {
  return parent + "." + key;
}

std::string json_path_index(const std::string& parent, std::size_t index) {
  return fmt::format("{}[{}]", parent, index);
}

}  // namespace ptxb
