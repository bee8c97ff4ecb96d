// Run-directory records as `ptxbench report` and a resumed `ptxbench run` read them:
// turns.jsonl lines (turn records), trajectories.jsonl declarations, and a whole run directory
// (torn last line, duplicates) through load_run_dirs. The first byte picks the file it becomes.
#include <cstdlib>

#include "core/fs.h"
#include "fuzz_input.h"
#include "metrics/turn_record.h"

namespace {

const std::string& run_dir() {
  static const std::string dir = [] {
    auto made = ptxb::make_temp_directory("ptxb-fuzz-run");
    if (!made.ok()) std::abort();
    return made.value();
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [selector, text] = ptxb::fuzz::split_selector(data, size);
  const std::string input(text);
  // Records parse in memory exactly as the loader parses each file's committed lines.
  (void)ptxb::parse_turns_jsonl(input, "turns.jsonl");
  const bool as_declarations = selector & 1;
  const std::string turns = run_dir() + "/turns.jsonl";
  const std::string declared = run_dir() + "/trajectories.jsonl";
  ptxb::fuzz::write_scratch_file(turns, as_declarations ? "" : input);
  ptxb::fuzz::write_scratch_file(declared, as_declarations ? input : "");
  std::vector<std::string> notes;
  (void)ptxb::load_run_dirs({run_dir()}, &notes);
  return 0;
}
