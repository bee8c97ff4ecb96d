#include "sass/sass_listing.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "core/strings.h"

namespace ptxb {

std::optional<SassInstruction> sass_instruction_of_line(std::string_view line) {
  const std::string trimmed = trim(line);
  if (!starts_with(trimmed, "/*")) return std::nullopt;
  const std::size_t close = trimmed.find("*/");
  if (close == std::string::npos || close == 2) return std::nullopt;
  const std::string_view hex = std::string_view(trimmed).substr(2, close - 2);
  if (!std::all_of(hex.begin(), hex.end(),
                   [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }))
    return std::nullopt;
  SassInstruction instruction;
  const auto [end, error] =
      std::from_chars(hex.data(), hex.data() + hex.size(), instruction.offset, 16);
  if (error != std::errc() || end != hex.data() + hex.size()) return std::nullopt;
  std::string rest = trim(std::string_view(trimmed).substr(close + 2));
  if (rest.empty() || starts_with(rest, "/*")) return std::nullopt;
  const std::size_t semicolon = rest.find(';');
  instruction.text = trim(std::string_view(rest).substr(0, semicolon));
  if (instruction.text.empty()) return std::nullopt;
  return instruction;
}

Result<SassListing> parse_sass_listing(std::string_view raw_text, std::string_view arch,
                                       const std::string& origin) {
  const std::string text = to_valid_utf8(raw_text);
  SassListing listing;
  std::string section_arch;
  std::vector<SassInstruction>* current = nullptr;
  int line_number = 0;
  for (const std::string& line : split_lines(text)) {
    ++line_number;
    const std::string trimmed = trim(line);
    if (starts_with(trimmed, "code for sm_")) {
      section_arch = trim(std::string_view(trimmed).substr(std::string_view("code for ").size()));
      current = nullptr;
      continue;
    }
    if (starts_with(trimmed, "Function :")) {
      current = nullptr;
      if (!arch.empty() && section_arch != arch) continue;
      const std::string name = trim(std::string_view(trimmed).substr(10));
      auto [slot, inserted] = listing.try_emplace(name);
      if (!inserted)
        return make_error("parse", "{}:{}: function {} listed twice for {}", origin, line_number,
                          name, section_arch);
      current = &slot->second;
      continue;
    }
    if (current == nullptr) continue;
    std::optional<SassInstruction> instruction = sass_instruction_of_line(line);
    if (!instruction) continue;
    if (!current->empty() && instruction->offset <= current->back().offset)
      return make_error("parse", "{}:{}: offset {:#x} does not follow {:#x}", origin, line_number,
                        instruction->offset, current->back().offset);
    current->push_back(std::move(*instruction));
  }
  if (listing.empty())
    return make_error("parse", "{}: no function{} in the SASS listing", origin,
                      arch.empty() ? std::string() : " for " + std::string(arch));
  return listing;
}

}  // namespace ptxb
