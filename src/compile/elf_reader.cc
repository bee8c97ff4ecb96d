#include "compile/elf_reader.h"

#include <cstring>

#include "core/fs.h"

namespace ptxb {
namespace {

// Offsets into Elf64_Ehdr / Elf64_Shdr / Elf64_Sym / Elf64_Dyn (gABI, 64-bit layout).
constexpr std::size_t kEhdrSize = 64;
constexpr std::size_t kShdrSize = 64;
constexpr std::size_t kSymSize = 24;
constexpr std::size_t kDynSize = 16;
constexpr std::uint32_t kShtDynsym = 11;
constexpr std::uint32_t kShtSymtab = 2;
constexpr std::uint32_t kShtDynamic = 6;
constexpr std::int64_t kDtNull = 0;
constexpr std::int64_t kDtNeeded = 1;

template <typename T>
T load(std::string_view bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));  // little-endian host assumed (checked)
  return value;
}

struct Section {
  std::uint32_t type;
  std::uint64_t address;
  std::uint64_t offset;
  std::uint64_t size;
  std::uint32_t link;
  std::uint64_t entry_size;
};

bool in_bounds(std::string_view bytes, std::uint64_t offset, std::uint64_t size) {
  return offset <= bytes.size() && size <= bytes.size() - offset;
}

std::string string_at(std::string_view table, std::uint64_t offset) {
  if (offset >= table.size()) return "";
  const auto end = table.find('\0', offset);
  return std::string(
      table.substr(offset, end == std::string_view::npos ? table.size() - offset : end - offset));
}

// Reads the symbol table `table` (its strings from the section sh_link names) into `out`.
Status read_symbol_table(std::string_view bytes, const std::vector<Section>& sections,
                         const Section& table, const char* table_name, const std::string& origin,
                         std::vector<ElfSymbol>& out) {
  if (table.link >= sections.size())
    return make_error("elf", "{}: {} has a bad string table link", origin, table_name);
  const Section& strtab = sections[table.link];
  if (!in_bounds(bytes, table.offset, table.size) || !in_bounds(bytes, strtab.offset, strtab.size))
    return make_error("elf", "{}: {} or its strings out of bounds (truncated file?)", origin,
                      table_name);
  if (table.entry_size != kSymSize)
    return make_error("elf", "{}: unexpected {} entry size {}", origin, table_name,
                      table.entry_size);
  const std::string_view strings = bytes.substr(strtab.offset, strtab.size);
  // Entry 0 is the reserved null symbol.
  for (std::uint64_t at = table.offset + kSymSize; at + kSymSize <= table.offset + table.size;
       at += kSymSize) {
    const auto name_offset = load<std::uint32_t>(bytes, at);
    const auto info = static_cast<std::uint8_t>(bytes[at + 4]);
    const auto section_index = load<std::uint16_t>(bytes, at + 6);
    const std::uint8_t binding = info >> 4;  // STB_LOCAL 0, STB_GLOBAL 1, STB_WEAK 2
    const std::uint8_t type = info & 0xF;    // STT_FUNC 2
    ElfSymbol symbol;
    symbol.name = string_at(strings, name_offset);
    symbol.defined = section_index != 0;  // SHN_UNDEF
    symbol.weak = binding == 2;
    symbol.function = type == 2;
    symbol.global_visibility = binding == 1 || binding == 2;
    out.push_back(std::move(symbol));
  }
  return ok_status();
}

}  // namespace

std::vector<std::string> ElfDynamicSymbols::undefined_names() const {
  std::vector<std::string> names;
  for (const auto& symbol : symbols)
    if (!symbol.defined && !symbol.name.empty()) names.push_back(symbol.name);
  return names;
}

std::vector<std::string> ElfDynamicSymbols::defined_names() const {
  std::vector<std::string> names;
  for (const auto& symbol : symbols)
    if (symbol.defined && !symbol.name.empty()) names.push_back(symbol.name);
  return names;
}

Result<ElfDynamicSymbols> read_elf_dynamic_symbols(std::string_view bytes,
                                                   const std::string& origin) {
  if (bytes.size() < kEhdrSize || std::memcmp(bytes.data(),
                                              "\x7f"
                                              "ELF",
                                              4) != 0)
    return make_error("elf", "{}: not an ELF file", origin);
  if (bytes[4] != 2)
    return make_error("elf", "{}: not a 64-bit ELF file (EI_CLASS={})", origin, int(bytes[4]));
  if (bytes[5] != 1) return make_error("elf", "{}: not a little-endian ELF file", origin);
  const auto section_offset = load<std::uint64_t>(bytes, 0x28);
  const auto section_entry_size = load<std::uint16_t>(bytes, 0x3A);
  const auto section_count = load<std::uint16_t>(bytes, 0x3C);
  if (section_entry_size != kShdrSize ||
      !in_bounds(bytes, section_offset, std::uint64_t{section_count} * kShdrSize))
    return make_error("elf", "{}: section header table out of bounds (truncated file?)", origin);

  std::vector<Section> sections;
  for (std::uint16_t i = 0; i < section_count; ++i) {
    const std::size_t at = section_offset + std::size_t{i} * kShdrSize;
    sections.push_back(
        Section{load<std::uint32_t>(bytes, at + 4), load<std::uint64_t>(bytes, at + 16),
                load<std::uint64_t>(bytes, at + 24), load<std::uint64_t>(bytes, at + 32),
                load<std::uint32_t>(bytes, at + 40), load<std::uint64_t>(bytes, at + 56)});
  }

  ElfDynamicSymbols result;
  const Section* dynsym = nullptr;
  const Section* symtab = nullptr;
  const Section* dynamic = nullptr;
  for (const auto& section : sections) {
    if (section.type == kShtDynsym) dynsym = &section;
    if (section.type == kShtSymtab) symtab = &section;
    if (section.type == kShtDynamic) dynamic = &section;
  }
  // A shared object always has .dynsym; without it we could not tell what it imports.
  if (!dynsym) return make_error("elf", "{}: no .dynsym section (not a shared object?)", origin);
  PTXB_RETURN_IF_ERROR(
      read_symbol_table(bytes, sections, *dynsym, ".dynsym", origin, result.symbols));
  // .symtab (absent from a stripped file) also holds the hidden and local symbols.
  if (symtab)
    PTXB_RETURN_IF_ERROR(
        read_symbol_table(bytes, sections, *symtab, ".symtab", origin, result.static_symbols));

  if (dynamic && in_bounds(bytes, dynamic->offset, dynamic->size) &&
      dynamic->link < sections.size()) {
    const Section& dynstr = sections[dynamic->link];
    if (in_bounds(bytes, dynstr.offset, dynstr.size)) {
      const std::string_view dynamic_strings = bytes.substr(dynstr.offset, dynstr.size);
      for (std::uint64_t at = dynamic->offset; at + kDynSize <= dynamic->offset + dynamic->size;
           at += kDynSize) {
        const auto tag = load<std::int64_t>(bytes, at);
        if (tag == kDtNull) break;
        if (tag == kDtNeeded)
          result.needed.push_back(string_at(dynamic_strings, load<std::uint64_t>(bytes, at + 8)));
      }
    }
  }
  return result;
}

Result<ElfDynamicSymbols> read_elf_dynamic_symbols_file(const std::string& path) {
  PTXB_ASSIGN_OR_RETURN(std::string bytes, read_file(path, std::size_t{512} << 20));
  return read_elf_dynamic_symbols(bytes, path);
}

}  // namespace ptxb
