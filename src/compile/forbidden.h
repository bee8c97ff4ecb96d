// Forbidden-library detection by allow-lists (design.md §3.2): what a candidate includes and what
// its shared object imports.
//
// Headers: every file the preprocessor opened, taken from the line markers of the preprocessed
// translation units nvcc keeps (`--keep`: kernel.cpp1.ii for the device pass, kernel.cpp4.ii for
// the host pass). Line markers ("# 1 \"/path/cublas_v2.h\" 1") are written after macro expansion
// and for both passes, so `#define H <cublas_v2.h>` / `#include H` and device-only includes
// (`#ifdef __CUDA_ARCH__`) cannot hide a header; their nesting gives the include chain for the
// evidence. (`nvcc -M`/`-MD` lists only one pass and no chain, so it is not used.) Each path is
// resolved (realpath) and checked against the allow-list; comments and strings never matter.
//
// Symbols: every undefined symbol in the .so's .dynsym (read by compile/elf_reader.h, never by
// dlopen) against the symbol allow-list. The .so links the CUDA runtime as a shared library
// (`-cudart shared`): the static cudart would pull its own dlopen/socket/fork-family imports
// into the .so, indistinguishable from a candidate's.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

struct ForbiddenFinding {
  // kDirective: a file directive in the source that reads outside the compile view
  // (check_file_directives).
  enum class Kind { kHeader, kSymbol, kDirective };
  Kind kind = Kind::kHeader;
  std::string item;       // resolved header path, symbol name, or "kernel.cu:LINE: DIRECTIVE"
  std::string demangled;  // symbols: the demangled C++ name when it differs
  std::string rule;       // why: "cuBLAS", "dynamic loading", "not in the header allow-list"
  std::vector<std::string>
      include_chain;  // headers: kernel.cu, ..., the includer (outermost first)

  // "kernel.cu -> a.h -> /usr/local/cuda/include/cublas_v2.h: cuBLAS" / "dlopen: dynamic loading"
  std::string describe() const;
};

Json forbidden_finding_to_json(const ForbiddenFinding& finding);
ForbiddenFinding forbidden_finding_from_json(const Json& json);

struct IncludedFile {
  std::string path;  // resolved (realpath), or as written if it does not exist
  std::vector<std::string> include_chain;  // includers, outermost first (first time it was seen)
};

// Files named by the line markers of preprocessed output, in first-seen order; relative names
// are resolved against `working_dir` (nvcc's cwd). The main file is included (empty chain).
std::vector<IncludedFile> included_files_from_line_markers(
    const std::vector<std::string>& preprocessed_texts, const std::string& working_dir);

struct HeaderPolicy {
  std::string cuda_include_dir;                // resolved toolkit include dir
  std::vector<std::string> pack_include_dirs;  // resolved knowledge-pack wrapper dirs
  std::string source_path;                     // resolved path of the candidate itself
};

// The reason `resolved_path` is forbidden, or nullopt if it is allowed.
std::optional<std::string> header_denial(const std::string& resolved_path,
                                         const HeaderPolicy& policy);

std::vector<ForbiddenFinding> check_headers(const std::vector<IncludedFile>& files,
                                            const HeaderPolicy& policy);

// The reason an undefined dynamic symbol is forbidden, or nullopt if it is allowed.
std::optional<std::string> symbol_denial(const std::string& name);

std::vector<ForbiddenFinding> check_undefined_symbols(const std::vector<std::string>& undefined);

// File directives in the candidate's source that read files at compile time, found by a scan of
// the text itself (comments removed; string literals kept, since asm() text lives in them):
//   - `#include`/`#import`/`__has_include` of an absolute path or one with a `..` component
//     (the candidate is one file: it has nothing of its own to include by path);
//   - `#include_next`, `__has_include_next`, `#embed` (only header trickery needs them);
//   - the assembler's `.incbin` and `.include`, in top-level or inline asm: they read any file
//     at assembly time and the content reaches the object or the log.
// A directive spelled through macros or string concatenation escapes this scan; the compile
// sandbox's view is what keeps such a read away from the harness's files (docs/integrity.md).
std::vector<ForbiddenFinding> check_file_directives(std::string_view source,
                                                    const std::string& source_name);

}  // namespace ptxb
