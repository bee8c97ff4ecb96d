#include "adapt/ptx_normalize.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "core/sha256.h"

namespace ptxb::adapt {
namespace {

bool is_ptx_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' ||
         c == '%';
}

// The text without comments; a string literal (only .file has them) is copied whole, so a
// "//" inside a path is not taken for a comment.
std::string strip_ptx_comments(std::string_view ptx) {
  std::string out;
  out.reserve(ptx.size());
  for (std::size_t i = 0; i < ptx.size();) {
    if (ptx.substr(i, 2) == "//") {
      while (i < ptx.size() && ptx[i] != '\n') ++i;
    } else if (ptx.substr(i, 2) == "/*") {
      const std::size_t end = ptx.find("*/", i + 2);
      i = end == std::string_view::npos ? ptx.size() : end + 2;
      out += ' ';
    } else if (ptx[i] == '"') {
      const std::size_t end = ptx.find('"', i + 1);
      const std::size_t stop = end == std::string_view::npos ? ptx.size() : end + 1;
      out.append(ptx.substr(i, stop - i));
      i = stop;
    } else {
      out += ptx[i++];
    }
  }
  return out;
}

std::string_view first_word(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
  std::size_t j = i;
  while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
  return line.substr(i, j - i);
}

// Drops the line-info directives and .section blocks (debug information, not code).
std::string drop_debug_info(const std::string& text) {
  std::string out;
  int section_depth = -1;  // -1: outside a .section; else its brace depth
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    const std::string_view word = first_word(line);
    if (section_depth < 0 && word == ".section") section_depth = 0;
    if (section_depth >= 0) {
      for (char c : line) section_depth += c == '{' ? 1 : c == '}' ? -1 : 0;
      if (section_depth <= 0 && line.find('}') != std::string_view::npos) section_depth = -1;
      continue;
    }
    if (word == ".loc" || word == ".file") continue;
    out.append(line);
    out += '\n';
  }
  return out;
}

std::vector<std::string> ptx_tokens(std::string_view text) {
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < text.size();) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) {
      ++i;
    } else if (is_ptx_word_char(text[i])) {
      std::size_t j = i;
      while (j < text.size() && is_ptx_word_char(text[j])) ++j;
      tokens.emplace_back(text.substr(i, j - i));
      i = j;
    } else {
      tokens.emplace_back(1, text[i++]);
    }
  }
  return tokens;
}

// Register families (`.reg .b32 %r<22>;` -> "r") and single named registers (`.reg .b32 %x;`).
struct PtxDeclarations {
  std::set<std::string> register_families;
  std::set<std::string> names;  // kernel, function, parameter, variable and named registers
};

bool is_declared_name(const std::string& token) {
  const char c = token[0];
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$';
}

PtxDeclarations find_declarations(const std::vector<std::string>& tokens) {
  static const std::set<std::string> kStateSpaces = {".param", ".shared", ".global", ".const",
                                                     ".local"};
  PtxDeclarations d;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (t == ".reg") {
      for (std::size_t j = i + 1; j < tokens.size() && tokens[j] != ";"; ++j) {
        if (tokens[j][0] != '%') continue;
        if (j + 1 < tokens.size() && tokens[j + 1] == "<")
          d.register_families.insert(tokens[j].substr(1));
        else
          d.names.insert(tokens[j]);
      }
    } else if ((t == ".entry" || t == ".func") && !(i > 0 && tokens[i - 1] == ".extern")) {
      std::size_t j = i + 1;
      if (t == ".func" && j < tokens.size() && tokens[j] == "(")  // the return parameter
        while (j < tokens.size() && tokens[j] != ")") ++j;
      for (; j < tokens.size(); ++j)
        if (is_declared_name(tokens[j])) {
          d.names.insert(tokens[j]);
          break;
        }
    } else if (kStateSpaces.count(t)) {
      for (std::size_t j = i + 1; j < tokens.size(); ++j) {
        const std::string& u = tokens[j];
        if (u == ";" || u == "," || u == ")" || u == "[" || u == "=") break;
        if (is_declared_name(u)) {
          d.names.insert(u);
          break;
        }
      }
    }
  }
  return d;
}

// "%rd12" -> {"rd", "12"}; "%tid.x" -> {"tid", ".x"}.
std::pair<std::string, std::string> register_parts(const std::string& token) {
  std::size_t j = 1;
  while (j < token.size() && std::isalpha(static_cast<unsigned char>(token[j]))) ++j;
  return {token.substr(1, j - 1), token.substr(j)};
}

bool all_digits(const std::string& s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit((unsigned char)c); });
}

// First-appearance numbering within one namespace: "%r" + 0, 1, ...
class FirstAppearance {
 public:
  std::string name(const std::string& original, const std::string& prefix) {
    auto [it, inserted] = numbers_.try_emplace(original, numbers_.size());
    return prefix + std::to_string(it->second);
  }

 private:
  std::map<std::string, std::size_t> numbers_;
};

}  // namespace

std::string normalized_ptx(std::string_view ptx) {
  const std::vector<std::string> tokens = ptx_tokens(drop_debug_info(strip_ptx_comments(ptx)));
  const PtxDeclarations declared = find_declarations(tokens);
  std::map<std::string, FirstAppearance> registers;  // family -> numbering
  FirstAppearance labels, names;
  std::string out;
  for (const std::string& t : tokens) {
    std::string mapped = t;
    if (t[0] == '%') {
      auto [family, suffix] = register_parts(t);
      if (declared.register_families.count(family) && all_digits(suffix))
        mapped = registers[family].name(t, "%" + family);
      else if (declared.names.count(t))
        mapped = names.name(t, "N");
    } else if (t[0] == '$') {
      mapped = labels.name(t, "$L");
    } else if (declared.names.count(t)) {
      mapped = names.name(t, "N");
    }
    if (!out.empty()) out += ' ';
    out += mapped;
  }
  return out;
}

std::string normalized_ptx_hash(std::string_view ptx) {
  return sha256_hex(normalized_ptx(ptx));
}

PtxDedupResult dedup_by_normalized_ptx(const std::vector<PtxKernel>& train,
                                       const std::vector<PtxKernel>& test) {
  std::map<std::string, std::string> test_by_key;
  for (const PtxKernel& k : test) test_by_key.try_emplace(normalized_ptx_hash(k.ptx), k.id);
  PtxDedupResult result;
  result.drops = Json::array();
  for (const PtxKernel& k : train) {
    const std::string key = normalized_ptx_hash(k.ptx);
    auto twin = test_by_key.find(key);
    if (twin == test_by_key.end()) {
      result.kept.push_back(k.id);
      continue;
    }
    result.drops.push_back(Json{{"id", k.id},
                                {"reason", "same_ptx_as_test_kernel"},
                                {"collides_with", twin->second},
                                {"normalized_ptx_sha256", key}});
  }
  return result;
}

}  // namespace ptxb::adapt
