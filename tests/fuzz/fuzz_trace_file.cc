// FlashInfer-Trace files as `ptxbench validate FILE` reads them: kind detection from the
// content, the strict JSON reader (duplicate keys, depth, number range) and the schema of
// definitions, workloads, solutions and traces. The input is written to a private temporary
// file (.json or .jsonl by the first byte) and validated through the product's entry point.
#include <unistd.h>

#include <cstdlib>

#include "core/fs.h"
#include "fuzz_input.h"
#include "trace/trace_set.h"

namespace {

std::string& scratch_dir() {
  static std::string dir = [] {
    auto made = ptxb::make_temp_directory("ptxb-fuzz-trace");
    if (!made.ok()) std::abort();
    return made.value();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [selector, text] = ptxb::fuzz::split_selector(data, size);
  const std::string path = scratch_dir() + ((selector & 1) ? "/input.jsonl" : "/input.json");
  ptxb::fuzz::write_scratch_file(path, text);
  ptxb::FileValidation validation = ptxb::validate_trace_file(path);
  // Every finding renders: the messages are what a user reads.
  for (const auto& issue : validation.diagnostics.issues()) (void)issue.to_string();
  ::unlink(path.c_str());
  return 0;
}
