// The machine a result was measured on: harness version, host, toolchain, libraries, driver and
// GPUs. `ptxbench env` prints it; every trace embeds it (design.md §3.4, §6).
#pragma once

#include <string>
#include <vector>

#include "core/json_io.h"
#include "core/process.h"
#include "env/gpu_probe.h"
#include "env/library_probe.h"
#include "env/tool_probe.h"

namespace ptxb {

struct Environment {
  std::string harness_version;
  std::string hostname;
  std::string os;   // uname sysname + release
  std::string cpu;  // /proc/cpuinfo model name
  std::vector<ProbedTool> tools;
  std::vector<LibraryInfo> libraries;
  GpuProbe gpu;
  // Where the data, helpers and CUDA root were found (core/install_layout.h).
  Json install = Json::object();

  Json to_json() const;
  // Human-readable lines for what is missing and what that disables.
  std::vector<std::string> missing() const;
  const ProbedTool* tool(const std::string& name) const;
};

// The tools PTXBench uses, in the order `env` lists them.
const std::vector<std::string>& known_tools();

Environment probe_environment(ProcessRunner& runner);

}  // namespace ptxb
