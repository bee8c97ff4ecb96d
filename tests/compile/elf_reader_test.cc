#include "compile/elf_reader.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/fs.h"

namespace ptxb {
namespace {

TEST(ElfReader, ReadsOwnExecutablesDynamicSymbols) {
  // The test binary itself is a dynamically linked ELF64 with libc and libstdc++ imports.
  auto symbols = read_elf_dynamic_symbols_file("/proc/self/exe");
  ASSERT_TRUE(symbols.ok()) << symbols.error().message;
  const auto undefined = symbols->undefined_names();
  EXPECT_NE(std::find(undefined.begin(), undefined.end(), "free"), undefined.end());
  EXPECT_NE(std::find_if(symbols->needed.begin(), symbols->needed.end(),
                         [](const std::string& lib) { return lib.rfind("libc.so", 0) == 0; }),
            symbols->needed.end());
}

TEST(ElfReader, RejectsNonElf) {
  auto result = read_elf_dynamic_symbols("#!/bin/sh\necho hi\n", "script.sh");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "script.sh: not an ELF file");
}

TEST(ElfReader, RejectsTruncatedFile) {
  auto bytes = read_file("/proc/self/exe", 512u << 20);
  ASSERT_TRUE(bytes.ok());
  auto result = read_elf_dynamic_symbols(std::string_view(*bytes).substr(0, 4096), "cut.so");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("out of bounds"), std::string::npos);
}

TEST(ElfReader, Rejects32BitElf) {
  std::string header(64, '\0');
  header.replace(0, 4,
                 "\x7f"
                 "ELF");
  header[4] = 1;  // ELFCLASS32
  auto result = read_elf_dynamic_symbols(header, "x86.so");
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("not a 64-bit"), std::string::npos);
}

}  // namespace
}  // namespace ptxb
