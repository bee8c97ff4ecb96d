// The CUDA toolchain PTXBench drives: nvcc (with the ptxas next to it) and a disassembler
// (cuobjdump, which also extracts cubins from a shared object; nvdisasm is recorded if found).
//
// Discovery searches, in order: explicit directories, $PATH, /usr/local/cuda/bin and
// <repo>/.deps/py/nvidia/cu13/bin (where scripts/setup.sh installs the PyPI disassemblers). Every
// tool runs through a ProcessRunner so the compile pipeline is testable with a scripted fake.
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/process.h"
#include "core/result.h"

namespace ptxb {

struct ToolInfo {
  std::string path;     // absolute path of the executable
  std::string version;  // "13.0.88", from `<tool> --version` ("release 13.0, V13.0.88")
};

struct ToolchainInfo {
  ToolInfo nvcc;
  ToolInfo ptxas;
  ToolInfo cuobjdump;
  ToolInfo nvdisasm;             // optional: path empty if not found
  std::string cuda_include_dir;  // resolved <toolkit>/include (headers nvcc puts on the path)

  // "nvcc 13.0.88; ptxas 13.0.88; cuobjdump 13.2.86" (also part of the cache key)
  std::string fingerprint() const;
};

Json toolchain_info_to_json(const ToolchainInfo& info);
ToolchainInfo toolchain_info_from_json(const Json& json);

// Default search directories after $PATH: <CUDA root>/bin, then the disassemblers shipped with
// PTXBench (<helpers>/tools; a developer build's .deps/py/nvidia/cu13/bin): core/install_layout.h.
std::vector<std::string> default_tool_search_dirs();

// Extracts "13.0.88" from `--version` output; empty if there is no "V<digits>" token.
std::string parse_tool_version(const std::string& version_output);

class Toolchain {
 public:
  // Finds the tools and asks each for its version. `extra_dirs` are searched first; with
  // `search_system` false only they are searched ($PATH and the defaults are skipped: tests).
  static Result<Toolchain> discover(ProcessRunner& runner,
                                    const std::vector<std::string>& extra_dirs = {},
                                    bool search_system = true);
  // For tests and the artifact reader: a toolchain with known paths (no discovery).
  Toolchain(ProcessRunner& runner, ToolchainInfo info) : runner_(&runner), info_(std::move(info)) {}

  const ToolchainInfo& info() const { return info_; }
  ProcessRunner& runner() const { return *runner_; }

 private:
  ProcessRunner* runner_;
  ToolchainInfo info_;
};

}  // namespace ptxb
