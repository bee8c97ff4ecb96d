// Shared helpers of the libFuzzer targets (tests/fuzz, docs/cli.md "Fuzzing"). Each target is
// one small binary, `fuzz_<name>`, whose LLVMFuzzerTestOneInput feeds the bytes to one parser
// of outside input the way the product does; a parser must return a value or an Error, never
// crash, hang or allocate without bound (the harness's -rss_limit_mb makes that a failure).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

namespace ptxb::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The first byte picks a variant of a target (which parser, which API); the rest is the input.
// Empty input: variant 0 and no text.
struct Split {
  unsigned selector = 0;
  std::string_view text;
};

inline Split split_selector(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return {};
  return {data[0], as_text(data + 1, size - 1)};
}

// Writes a scratch file for a parser that reads from disk. Plain writes: the product's atomic,
// fsync'd writer would cap a target at a few hundred runs per second.
inline void write_scratch_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) std::abort();
}

}  // namespace ptxb::fuzz
