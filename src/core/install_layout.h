// Where PTXBench finds its own files at run time (docs/architecture.md "Install layout"):
//   data     tasks/, packs/, solutions/  (installed under <prefix>/share/ptxbench)
//   helpers  ptxbench-supervisor, ptxbench-runner, ptxbench-sandbox, libptxbench_reference.so
//            (installed under <prefix>/libexec/ptxbench; in a build tree, next to ptxbench)
//   tools    the PyPI disassemblers cuobjdump/nvdisasm (<helpers>/tools when installed)
// Nothing here is compiled in except, in a developer build (PTXB_DEVELOPER_BUILD), the source
// tree and its .deps/py as the last places searched, and the CUDA toolkit's default root; both
// come from one generated file (build/generated/build_layout.cc), so no other file sees a path.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/result.h"

namespace ptxb {

// One resolved folder and how it was found.
struct FoundDir {
  std::string path;
  std::string how;  // "PTXBENCH_DATA_DIR", "next to the executable", "source tree (developer
                    // build)", ...
};

// The running executable's folder (/proc/self/exe), "" when unreadable.
std::string executable_dir();

// The data folder (it holds tasks/tasks.json), searched in order: $PTXBENCH_DATA_DIR (then the
// only place: a wrong value is an error, not a fall-through), <exe dir>/../share/ptxbench
// (<exe dir>/../../share/ptxbench for the helpers in libexec/ptxbench), the source tree of a
// developer build. The error names every place searched.
Result<FoundDir> find_data_dir();
// <data dir>/<name>, or find_data_dir()'s error.
Result<std::string> data_subdir(const std::string& name);

// The helper binaries' folder (it holds ptxbench-sandbox), searched in order:
// $PTXBENCH_LIBEXEC_DIR (then the only place), the executable's own folder (a build tree),
// <exe dir>/../libexec/ptxbench. The error names every place searched.
Result<FoundDir> find_helpers_dir();

// The CUDA toolkit root: $CUDA_HOME, else $CUDA_PATH, else the configured default
// (-DPTXB_CUDA_ROOT, /usr/local/cuda).
std::string cuda_root();

// Folders searched for the PyPI disassemblers after $PATH and <cuda root>/bin:
// <helpers>/tools, then (developer build) the source tree's .deps/py/nvidia/cu13/bin.
std::vector<std::string> bundled_tool_dirs();

// Everything above for `ptxbench env`: {"data": {"path", "how"} or {"error"}, "helpers": same,
// "cuda_root", "tool_dirs"}.
Json install_layout_to_json();

// From the generated build_layout.cc: "" unless PTXB_DEVELOPER_BUILD.
const char* developer_source_dir();
const char* developer_pydeps_dir();
const char* configured_cuda_root();

}  // namespace ptxb
