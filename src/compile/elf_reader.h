// A small ELF64 reader for the dynamic symbol table of a candidate's shared object.
//
// The trusted process must never dlopen candidate code (static constructors would run), so the
// undefined symbols the object needs at load time are read from the file: .dynsym (SHT_DYNSYM)
// and its string table (the section named by sh_link). Only little-endian ELF64 is accepted
// (x86-64 and aarch64 Linux); anything else is an error, never an empty symbol list.
// Reference: System V gABI, "Object Files" (ELF header, section header, symbol table entry).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace ptxb {

struct ElfSymbol {
  std::string name;
  bool defined = false;            // st_shndx != SHN_UNDEF
  bool weak = false;               // STB_WEAK
  bool function = false;           // STT_FUNC
  bool global_visibility = false;  // STB_GLOBAL or STB_WEAK (exported/imported)
};

struct ElfDynamicSymbols {
  std::vector<ElfSymbol> symbols;  // .dynsym order, the null entry skipped
  // .symtab, when the file is not stripped: hidden and local symbols too (a candidate's `run`
  // with another signature is hidden in kernel.so, so only this table names it).
  std::vector<ElfSymbol> static_symbols;
  std::vector<std::string> needed;  // DT_NEEDED libraries (from .dynamic)

  std::vector<std::string> undefined_names() const;
  std::vector<std::string> defined_names() const;
};

// Parses ELF bytes already in memory. `origin` names the file in errors.
Result<ElfDynamicSymbols> read_elf_dynamic_symbols(std::string_view bytes,
                                                   const std::string& origin);

// Reads the file (capped at 512 MiB) and parses it.
Result<ElfDynamicSymbols> read_elf_dynamic_symbols_file(const std::string& path);

}  // namespace ptxb
