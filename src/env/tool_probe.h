// What `ptxbench env` reports about each external tool (nvcc, ptxas, cuobjdump, nvdisasm, ncu,
// compute-sanitizer): found or not, where, its own version line, and how to install it. The
// compile stage's discovery (compile/toolchain.h) is what builds use; this probe reports, and it
// searches the same folders: $PATH, the CUDA toolkit's bin/, the PyPI disassemblers shipped in
// libexec/ptxbench/tools (a developer build: .deps/py, from scripts/setup.sh), then Nsight
// Compute's install folders.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/process.h"

namespace ptxb {

struct ProbedTool {
  std::string name;
  bool found = false;
  std::string path;
  std::string version;  // the tool's own version line, e.g. "Cuda compilation tools, release 13.0,
                        // V13.0.88"
  std::string install_hint;  // shown when missing
  Json to_json() const;
};

// Folders searched after $PATH.
std::vector<std::string> default_tool_dirs();

// Locates `name` and runs `name --version` (5 s limit) through `runner`.
ProbedTool probe_tool(const std::string& name, ProcessRunner& runner,
                      const std::vector<std::string>& extra_dirs = default_tool_dirs());

}  // namespace ptxb
