#include "env/tool_probe.h"

#include <glob.h>

#include "compile/toolchain.h"
#include "core/install_layout.h"
#include "core/strings.h"

namespace ptxb {
namespace {

std::string hint_for(const std::string& name) {
  if (name == "cuobjdump" || name == "nvdisasm")
    return "bash scripts/setup.sh installs it from PyPI (nvidia-cuda-" + name +
           ") into .deps/py; cmake --install copies it into libexec/ptxbench/tools";
  if (name == "nvcc" || name == "ptxas")
    return "install the CUDA 13 toolkit (expected under " + cuda_root() +
           "/bin; CUDA_HOME selects another)";
  if (name == "ncu") return "install Nsight Compute (ships with the full CUDA toolkit)";
  if (name == "compute-sanitizer") return "install the CUDA toolkit's compute-sanitizer";
  return "";
}

// The most informative line of `--version` output: the last one naming a release or version.
std::string version_line(const std::string& output) {
  std::string best;
  for (const auto& line : split_lines(output)) {
    std::string trimmed = trim(line);
    if (trimmed.empty()) continue;
    if (best.empty()) best = trimmed;
    const std::string lower = to_lower(trimmed);
    if (contains(lower, "release") || contains(lower, "version")) best = trimmed;
  }
  return best;
}

}  // namespace

std::vector<std::string> default_tool_dirs() {
  // The compile stage's folders (toolkit, PyPI disassemblers), then Nsight Compute's.
  std::vector<std::string> dirs = default_tool_search_dirs();
  dirs.push_back(cuda_root() + "/nsight-compute/bin");
  glob_t matches{};
  if (::glob("/opt/nvidia/nsight-compute/*", 0, nullptr, &matches) == 0) {
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) dirs.emplace_back(matches.gl_pathv[i]);
  }
  ::globfree(&matches);
  return dirs;
}

ProbedTool probe_tool(const std::string& name, ProcessRunner& runner,
                      const std::vector<std::string>& extra_dirs) {
  ProbedTool info;
  info.name = name;
  info.install_hint = hint_for(name);
  std::optional<std::string> path = find_executable(name);
  for (std::size_t i = 0; !path && i < extra_dirs.size(); ++i)
    path = find_executable(extra_dirs[i] + "/" + name);
  if (!path) return info;
  info.found = true;
  info.path = *path;
  ProcessSpec spec{{*path, "--version"}};
  spec.timeout = std::chrono::seconds(20);
  if (auto result = runner.run(spec); result.ok())
    info.version = version_line(result->stdout_text + "\n" + result->stderr_text);
  return info;
}

Json ProbedTool::to_json() const {
  Json out = Json::object();
  out["name"] = name;
  out["found"] = found;
  out["path"] = found ? Json(path) : Json(nullptr);
  out["version"] = version.empty() ? Json(nullptr) : Json(version);
  if (!found) out["install_hint"] = install_hint;
  return out;
}

}  // namespace ptxb
