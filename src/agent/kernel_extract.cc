#include "agent/kernel_extract.h"

#include <algorithm>
#include <cctype>

#include "core/strings.h"

namespace ptxb {
namespace {

bool is_kernel_tag(const std::string& tag) {
  return tag == "cuda" || tag == "cpp" || tag == "c++";
}

// A fence line: indentation <= 3 spaces, then >= 3 '`' or '~'. Returns the run length (0: not a
// fence) and sets `ch` and `rest` (the text after the run).
std::size_t fence_run(const std::string& line, char& ch, std::string& rest) {
  std::size_t i = 0;
  while (i < line.size() && i < 4 && line[i] == ' ') ++i;
  if (i > 3 || i >= line.size() || (line[i] != '`' && line[i] != '~')) return 0;
  ch = line[i];
  std::size_t j = i;
  while (j < line.size() && line[j] == ch) ++j;
  if (j - i < 3) return 0;
  rest = line.substr(j);
  // A backtick fence's info string may not contain backticks (CommonMark 4.5).
  if (ch == '`' && rest.find('`') != std::string::npos) return 0;
  return j - i;
}

// Source with comments and string/char literals blanked to spaces (newlines kept).
std::string strip_comments_and_strings(const std::string& s) {
  std::string out = s;
  enum { kCode, kLine, kBlock, kString, kChar } state = kCode;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    switch (state) {
      case kCode:
        if (c == '/' && next == '/')
          state = kLine, out[i] = ' ';
        else if (c == '/' && next == '*')
          state = kBlock, out[i] = ' ', out[++i] = ' ';
        else if (c == '"')
          state = kString;
        else if (c == '\'')
          state = kChar;
        break;
      case kLine:
        if (c == '\n')
          state = kCode;
        else
          out[i] = ' ';
        break;
      case kBlock:
        if (c == '*' && next == '/')
          state = kCode, out[i] = ' ', out[++i] = ' ';
        else if (c != '\n')
          out[i] = ' ';
        break;
      case kString:
      case kChar:
        if (c == '\\' && next) {
          out[i] = ' ';
          if (next != '\n') out[++i] = ' ';
        } else if ((state == kString && c == '"') || (state == kChar && c == '\'')) {
          state = kCode;
        } else if (c != '\n') {
          out[i] = ' ';
        }
        break;
    }
  }
  return out;
}

bool is_ident(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

}  // namespace

std::vector<FencedBlock> fenced_blocks(const std::string& text) {
  std::vector<FencedBlock> blocks;
  const std::vector<std::string> lines = split_lines(text);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    char ch = 0;
    std::string info;
    const std::size_t run = fence_run(lines[i], ch, info);
    if (!run) continue;
    FencedBlock block;
    const std::string words = trim(info);
    block.tag = to_lower(words.substr(0, words.find_first_of(" \t{")));
    block.closed = false;
    std::string body;
    std::size_t j = i + 1;
    for (; j < lines.size(); ++j) {
      char close_ch = 0;
      std::string after;
      const std::size_t close_run = fence_run(lines[j], close_ch, after);
      if (close_run >= run && close_ch == ch && trim(after).empty()) {
        block.closed = true;
        break;
      }
      body += lines[j] + "\n";
    }
    block.body = std::move(body);
    blocks.push_back(std::move(block));
    i = j;  // continue after the closing fence (or at the end)
  }
  return blocks;
}

bool defines_run(const std::string& source) {
  const std::string code = strip_comments_and_strings(source);
  for (std::size_t pos = code.find("run"); pos != std::string::npos;
       pos = code.find("run", pos + 3)) {
    if (pos > 0 && is_ident(code[pos - 1])) continue;
    if (pos + 3 < code.size() && is_ident(code[pos + 3])) continue;
    // The token before the name must end a type ("void", "*", "&"), not a member access,
    // a qualifier (Foo::run) or an expression.
    std::size_t before = pos;
    while (before > 0 && std::isspace(static_cast<unsigned char>(code[before - 1]))) --before;
    if (before == 0) continue;
    const char prev = code[before - 1];
    if (!(is_ident(prev) || prev == '*' || prev == '&')) continue;
    std::size_t open = pos + 3;
    while (open < code.size() && std::isspace(static_cast<unsigned char>(code[open]))) ++open;
    if (open >= code.size() || code[open] != '(') continue;
    int depth = 0;
    std::size_t close = open;
    for (; close < code.size(); ++close) {
      if (code[close] == '(') ++depth;
      if (code[close] == ')' && --depth == 0) break;
    }
    if (close >= code.size()) continue;
    std::size_t body = close + 1;
    while (body < code.size() && std::isspace(static_cast<unsigned char>(code[body]))) ++body;
    if (code.compare(body, 8, "noexcept") == 0) {
      body += 8;
      while (body < code.size() && std::isspace(static_cast<unsigned char>(code[body]))) ++body;
    }
    if (body < code.size() && code[body] == '{') return true;
  }
  return false;
}

ExtractedKernel extract_kernel(const std::string& reply) {
  ExtractedKernel out;
  const std::vector<FencedBlock> blocks = fenced_blocks(reply);
  out.blocks = static_cast<int>(blocks.size());
  std::vector<std::string> other_tags;
  bool unclosed_candidate = false;
  for (int i = out.blocks - 1; i >= 0; --i) {
    const FencedBlock& block = blocks[static_cast<std::size_t>(i)];
    if (!is_kernel_tag(block.tag)) {
      const std::string tag = block.tag.empty() ? "(untagged)" : block.tag;
      if (std::find(other_tags.begin(), other_tags.end(), tag) == other_tags.end())
        other_tags.insert(other_tags.begin(), tag);
      continue;
    }
    ++out.kernel_tagged_blocks;
    if (!block.closed) {
      unclosed_candidate = true;
      continue;
    }
    if (!out.found && defines_run(block.body)) {
      out.found = true;
      out.source = block.body;
      out.chosen_block = i;
    }
  }
  if (out.found) return out;
  if (out.blocks == 0) {
    out.no_code_reason = "the reply contains no fenced code block";
  } else if (out.kernel_tagged_blocks == 0) {
    out.no_code_reason = fmt::format(
        "the reply contains {} fenced code block{}, none tagged cuda, cpp or c++ (tags: {})",
        out.blocks, out.blocks == 1 ? "" : "s", join(other_tags, ", "));
  } else if (unclosed_candidate && out.kernel_tagged_blocks == 1) {
    out.no_code_reason = "the reply's ```cuda block is not closed (the reply was probably cut off)";
  } else {
    out.no_code_reason = fmt::format(
        "none of the {} code block{} tagged cuda, cpp or c++ defines the host function `run`",
        out.kernel_tagged_blocks, out.kernel_tagged_blocks == 1 ? "" : "s");
  }
  return out;
}

std::string no_code_feedback(const ExtractedKernel& extracted, const std::string& signature,
                             const std::string& finish_reason) {
  std::string text = "## No kernel found\n";
  text += "Nothing was compiled: " + extracted.no_code_reason + ".";
  if (finish_reason == "length" || finish_reason == "max_tokens")
    text += " The reply ended at the output-token limit; write less prose and no drafts.";
  text +=
      "\n\n## Next step\nReply with the complete `kernel.cu` in ONE fenced code block tagged "
      "`cuda` (```cuda ... ```), defining the host function exactly as specified:\n\n```cuda\n" +
      signature + ";\n```\n";
  return text;
}

}  // namespace ptxb
