#include "llm/solution_render.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <vector>

#include "core/fs.h"
#include "core/strings.h"

namespace ptxb {
namespace {

constexpr std::size_t kMaxSourceBytes = 1u << 20;

// A path inside the folder: relative, no "..", no empty or "." segments, so that what
// replay.json and the includes name can never read outside the solutions folder.
bool is_inside_path(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.back() == '/') return false;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string segment = path.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == "..") return false;
    start = end + 1;
  }
  return true;
}

struct Expander {
  const std::string& dir;
  std::set<std::string> inlined;   // headers already inlined (each goes in once)
  std::vector<std::string> stack;  // the file being read and those including it

  Result<std::string> expand(const std::string& rel) {
    if (std::find(stack.begin(), stack.end(), rel) != stack.end())
      return make_error("config", "{}: includes itself (via {})", rel, join(stack, " -> "));
    PTXB_ASSIGN_OR_RETURN(std::string text, read_file(dir + "/" + rel, kMaxSourceBytes));
    stack.push_back(rel);
    static const std::regex kLocalInclude(R"re(^\s*#\s*include\s*"([^"]+)"\s*(//.*)?$)re");
    static const std::regex kPragmaOnce(R"(^\s*#\s*pragma\s+once\s*$)");
    const std::filesystem::path base = std::filesystem::path(rel).parent_path();
    std::string out;
    std::size_t pos = 0;
    int line_number = 0;
    while (pos < text.size()) {
      const std::size_t end = std::min(text.find('\n', pos), text.size());
      const std::string line = text.substr(pos, end - pos);
      const bool newline = end < text.size();
      pos = end + 1;
      ++line_number;
      std::smatch match;
      if (stack.size() > 1 && std::regex_match(line, kPragmaOnce)) continue;
      if (!std::regex_match(line, match, kLocalInclude)) {
        out += line;
        if (newline) out += '\n';
        continue;
      }
      const std::string named = match[1].str();
      const std::string target = (base / named).lexically_normal().generic_string();
      if (!std::filesystem::exists(dir + "/" + target)) {
        out += line;  // not a solutions file: for the compiler's include path
        if (newline) out += '\n';
        continue;
      }
      if (!is_inside_path(target) || starts_with(named, "/"))
        return make_error("config", "{}:{}: #include \"{}\" is outside the solutions folder", rel,
                          line_number, named);
      if (inlined.count(target) > 0) continue;
      auto body = expand(target);
      if (!body.ok()) return body.error().with_context(fmt::format("{}:{}", rel, line_number));
      inlined.insert(target);
      out += body.value();
      if (!out.empty() && out.back() != '\n') out += '\n';
    }
    stack.pop_back();
    return out;
  }
};

}  // namespace

std::string SolutionVariant::describe() const {
  std::vector<std::string> parts;
  for (const auto& [name, value] : defines) parts.push_back(name + "=" + value);
  return parts.empty() ? source : source + " with " + join(parts, ", ");
}

Result<SolutionVariant> parse_solution_variant(const Json& entry, const std::string& where) {
  SolutionVariant variant;
  const Json* source = &entry;
  if (entry.is_object()) {
    for (const auto& [key, value] : entry.items()) {
      if (key != "source" && key != "defines")
        return make_error("config", "{}: unknown key (expected \"source\" and \"defines\")",
                          json_path_key(where, key));
    }
    if (!entry.contains("source"))
      return make_error("config", "{}: missing (the kernel file)", json_path_key(where, "source"));
    source = &entry["source"];
    if (entry.contains("defines")) {
      const std::string defines_where = json_path_key(where, "defines");
      const Json& defines = entry["defines"];
      if (!defines.is_object())
        return make_error("config", "{}: expected an object (macro name -> replacement text)",
                          defines_where);
      static const std::regex kMacroName("[A-Za-z_][A-Za-z0-9_]*");
      for (const auto& [name, value] : defines.items()) {
        const std::string at = json_path_key(defines_where, name);
        if (!std::regex_match(name, kMacroName))
          return make_error("config", "{}: not a macro name", at);
        if (!value.is_string())
          return make_error("config", "{}: expected a string (the replacement text)", at);
        const std::string text = value.get<std::string>();
        if (text.find_first_of("\r\n\\") != std::string::npos)
          return make_error("config", "{}: must be one line without backslashes", at);
        variant.defines[name] = text;
      }
    }
  } else if (!entry.is_string()) {
    return make_error("config", "{}: expected a path or an object {{\"source\", \"defines\"}}",
                      where);
  }
  const std::string source_where = entry.is_object() ? json_path_key(where, "source") : where;
  if (!source->is_string()) return make_error("config", "{}: expected a path", source_where);
  variant.source = source->get<std::string>();
  if (!is_inside_path(variant.source))
    return make_error("config", "{}: \"{}\" is not a relative path inside the folder", source_where,
                      variant.source);
  return variant;
}

Result<std::string> render_solution(const std::string& dir, const SolutionVariant& variant) {
  std::string out;
  for (const auto& [name, value] : variant.defines)
    out += "#define " + name + (value.empty() ? "" : " " + value) + "\n";
  Expander expander{dir, {}, {}};
  PTXB_ASSIGN_OR_RETURN(std::string body, expander.expand(variant.source));
  return out + body;
}

}  // namespace ptxb
