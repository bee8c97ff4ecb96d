#include "adapt/source_tokens.h"

#include <cctype>
#include <map>
#include <set>

#include "core/sha256.h"

namespace ptxb::adapt {
namespace {

bool is_identifier_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Names a kernel author does not choose: renaming them would merge kernels that really differ
// (__syncthreads() vs __syncwarp() at the same place). Anything starting with "__" (CUDA
// intrinsics, __nv_bfloat16, __global__) is kept as well.
const std::set<std::string, std::less<>>& fixed_names() {
  static const std::set<std::string, std::less<>> names = {
      "alignas",  "asm",       "auto",      "bool",          "break",    "case",         "char",
      "const",    "constexpr", "continue",  "default",       "do",       "double",       "else",
      "enum",     "extern",    "false",     "float",         "for",      "goto",         "if",
      "inline",   "int",       "long",      "namespace",     "nullptr",  "return",       "short",
      "signed",   "sizeof",    "static",    "static_assert", "struct",   "switch",       "template",
      "true",     "typedef",   "typename",  "union",         "unsigned", "using",        "void",
      "volatile", "while",     "include",   "define",        "ifdef",    "ifndef",       "endif",
      "pragma",   "unroll",    "threadIdx", "blockIdx",      "blockDim", "gridDim",      "warpSize",
      "x",        "y",         "z",         "int8_t",        "int16_t",  "int32_t",      "int64_t",
      "uint8_t",  "uint16_t",  "uint32_t",  "uint64_t",      "size_t",   "cudaStream_t", "dim3",
      "run",      "min",       "max",       "expf",          "exp2f",    "logf",         "log2f",
      "sqrtf",    "rsqrtf",    "fmaxf",     "fminf",         "memory",   "volatile"};
  return names;
}

// Calls `on_token(kind, text)` for each token of comment-stripped `source`: kind 'i' identifier,
// 's' string or character literal, 'n' number, 'p' punctuation (one character). Whitespace and
// preprocessor line markers (#line, # 12 "file") are dropped.
template <typename OnToken>
void scan_tokens(std::string_view text, OnToken on_token) {
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (is_identifier_start(c)) {
      std::size_t j = i;
      while (j < text.size() && is_identifier_char(text[j])) ++j;
      on_token('i', text.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t j = i;
      while (j < text.size() && (is_identifier_char(text[j]) || text[j] == '.')) ++j;
      on_token('n', text.substr(i, j - i));
      i = j;
    } else if (c == '"' || c == '\'') {
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != c) j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      on_token('s', text.substr(i, j - i));
      i = j;
    } else if (c == '#' && text.substr(i).starts_with("#line")) {
      while (i < text.size() && text[i] != '\n') ++i;
    } else {
      on_token('p', text.substr(i, 1));
      ++i;
    }
  }
}

}  // namespace

std::string strip_comments(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  std::size_t i = 0;
  while (i < source.size()) {
    const char c = source[i];
    if (c == '"' || c == '\'') {
      std::size_t j = i + 1;
      while (j < source.size() && source[j] != c && source[j] != '\n')
        j += source[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, source.size());
      out.append(source.substr(i, j - i));
      i = j;
    } else if (source.substr(i).starts_with("//")) {
      while (i < source.size() && source[i] != '\n') ++i;
    } else if (source.substr(i).starts_with("/*")) {
      const std::size_t end = source.find("*/", i + 2);
      i = end == std::string_view::npos ? source.size() : end + 2;
      out.push_back(' ');  // a/**/b is two tokens
    } else {
      out.push_back(c);
      ++i;
    }
  }
  return out;
}

std::vector<std::string> identifier_tokens(std::string_view source) {
  std::vector<std::string> tokens;
  const std::string text = strip_comments(source);
  scan_tokens(text, [&](char kind, std::string_view token) {
    if (kind == 'i') tokens.emplace_back(token);
  });
  return tokens;
}

std::string canonical_source(std::string_view source) {
  const std::string text = strip_comments(source);
  std::map<std::string, std::string, std::less<>> renamed;
  std::string out;
  scan_tokens(text, [&](char kind, std::string_view token) {
    std::string piece(token);
    if (kind == 'i' && !token.starts_with("__") && !fixed_names().count(token)) {
      auto [it, inserted] = renamed.try_emplace(piece, "");
      if (inserted) it->second = "v" + std::to_string(renamed.size() - 1);
      piece = it->second;
    }
    out += piece;
    out.push_back(' ');
  });
  return out;
}

std::string canonical_source_hash(std::string_view source) {
  return sha256_hex(canonical_source(source));
}

}  // namespace ptxb::adapt
