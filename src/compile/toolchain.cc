#include "compile/toolchain.h"

#include <regex>

#include "core/fs.h"
#include "core/install_layout.h"
#include "core/strings.h"

namespace ptxb {

std::string ToolchainInfo::fingerprint() const {
  std::string text =
      "nvcc " + nvcc.version + "; ptxas " + ptxas.version + "; cuobjdump " + cuobjdump.version;
  return text;
}

Json toolchain_info_to_json(const ToolchainInfo& info) {
  auto tool = [](const ToolInfo& t) { return Json{{"path", t.path}, {"version", t.version}}; };
  return Json{{"nvcc", tool(info.nvcc)},
              {"ptxas", tool(info.ptxas)},
              {"cuobjdump", tool(info.cuobjdump)},
              {"nvdisasm", tool(info.nvdisasm)},
              {"cuda_include_dir", info.cuda_include_dir}};
}

ToolchainInfo toolchain_info_from_json(const Json& json) {
  auto tool = [&](const char* key) {
    const Json item = json.value(key, Json::object());
    return ToolInfo{item.value("path", ""), item.value("version", "")};
  };
  ToolchainInfo info;
  info.nvcc = tool("nvcc");
  info.ptxas = tool("ptxas");
  info.cuobjdump = tool("cuobjdump");
  info.nvdisasm = tool("nvdisasm");
  info.cuda_include_dir = json.value("cuda_include_dir", "");
  return info;
}

std::vector<std::string> default_tool_search_dirs() {
  std::vector<std::string> dirs = {cuda_root() + "/bin"};
  for (const auto& dir : bundled_tool_dirs()) dirs.push_back(dir);
  return dirs;
}

std::string parse_tool_version(const std::string& version_output) {
  static const std::regex kVersion(R"(\bV(\d+\.\d+\.\d+))");
  std::smatch match;
  if (std::regex_search(version_output, match, kVersion)) return match[1];
  return "";
}

namespace {

std::vector<std::string> search_dirs(const std::vector<std::string>& extra_dirs,
                                     bool search_system) {
  std::vector<std::string> dirs = extra_dirs;
  if (!search_system) return dirs;
  if (const char* path = std::getenv("PATH"))
    for (const auto& dir : split(path, ':'))
      if (!dir.empty()) dirs.push_back(dir);
  for (const auto& dir : default_tool_search_dirs()) dirs.push_back(dir);
  return dirs;
}

std::optional<std::string> find_in(const std::vector<std::string>& dirs, const std::string& name) {
  for (const auto& dir : dirs)
    if (auto found = find_executable(dir + "/" + name)) return canonical_path(*found);
  return std::nullopt;
}

Result<std::string> query_version(ProcessRunner& runner, const std::string& path) {
  ProcessSpec spec;
  spec.argv = {path, "--version"};
  spec.timeout = std::chrono::seconds(30);
  PTXB_ASSIGN_OR_RETURN(ProcessResult result, runner.run(spec));
  if (!result.succeeded())
    return make_error("toolchain", "{} --version failed: {}: {}", path, result.describe(),
                      trim(result.stderr_text));
  std::string version = parse_tool_version(result.stdout_text + result.stderr_text);
  if (version.empty())
    return make_error(
        "toolchain", "{} --version: no version (\"V<major>.<minor>.<patch>\") in its output", path);
  return version;
}

// `nvcc --dryrun` prints its environment, including `#$ TOP=<toolkit>/bin/..`, without
// reading the (absent) input file.
Result<std::string> query_toolkit_root(ProcessRunner& runner, const std::string& nvcc) {
  ProcessSpec spec;
  spec.argv = {nvcc, "--dryrun", "-c", "ptxbench-probe.cu", "-o", "/dev/null"};
  spec.timeout = std::chrono::seconds(30);
  PTXB_ASSIGN_OR_RETURN(ProcessResult result, runner.run(spec));
  const std::string text = result.stdout_text + result.stderr_text;
  static const std::regex kTop(R"(#\$ TOP=([^\r\n]+))");
  std::smatch match;
  if (!std::regex_search(text, match, kTop))
    return make_error("toolchain",
                      "{} --dryrun: no `TOP=` line, cannot locate the CUDA toolkit: {}", nvcc,
                      trim(text).substr(0, 400));
  std::string top = trim(match[1].str());
  if (!is_directory(top))
    return make_error("toolchain", "{} reports toolkit folder {}, which does not exist", nvcc, top);
  return canonical_path(top);
}

}  // namespace

Result<Toolchain> Toolchain::discover(ProcessRunner& runner,
                                      const std::vector<std::string>& extra_dirs,
                                      bool search_system) {
  const auto dirs = search_dirs(extra_dirs, search_system);
  const std::string searched = "searched " + join(dirs, ":");
  ToolchainInfo info;
  auto nvcc = find_in(dirs, "nvcc");
  if (!nvcc)
    return make_error("toolchain",
                      "nvcc not found ({}); install the CUDA 13 toolkit (nvcc, ptxas) under "
                      "/usr/local/cuda or put "
                      "its bin/ on PATH",
                      searched);
  // The nvcc found on PATH may be a wrapper script (CI images put `exec
  // /usr/local/cuda-13.0/bin/nvcc "$@"` in /usr/local/bin), so the toolkit is what nvcc itself
  // reports as TOP, not the folder the wrapper sits in.
  PTXB_ASSIGN_OR_RETURN(const std::string toolkit, query_toolkit_root(runner, *nvcc));
  const std::string cuda_bin = toolkit + "/bin";
  auto real_nvcc = find_executable(cuda_bin + "/nvcc");
  if (!real_nvcc)
    return make_error("toolchain", "{} reports its toolkit at {}, which has no bin/nvcc", *nvcc,
                      toolkit);
  info.nvcc.path = canonical_path(*real_nvcc);
  // nvcc runs the ptxas next to it (nvcc.profile), so that is the one whose version counts.
  auto ptxas = find_executable(cuda_bin + "/ptxas");
  if (!ptxas)
    return make_error("toolchain", "ptxas not found next to {}; the CUDA toolkit is incomplete",
                      info.nvcc.path);
  info.ptxas.path = canonical_path(*ptxas);
  auto cuobjdump = find_in(dirs, "cuobjdump");
  if (!cuobjdump)
    return make_error("toolchain",
                      "cuobjdump not found ({}); it disassembles the kernel's SASS. `bash "
                      "scripts/setup.sh` installs "
                      "nvidia-cuda-cuobjdump from PyPI into .deps/py/nvidia/cu13/bin",
                      searched);
  info.cuobjdump.path = *cuobjdump;
  if (auto nvdisasm = find_in(dirs, "nvdisasm")) info.nvdisasm.path = *nvdisasm;

  PTXB_ASSIGN_OR_RETURN(info.nvcc.version, query_version(runner, info.nvcc.path));
  PTXB_ASSIGN_OR_RETURN(info.ptxas.version, query_version(runner, info.ptxas.path));
  PTXB_ASSIGN_OR_RETURN(info.cuobjdump.version, query_version(runner, info.cuobjdump.path));
  if (!info.nvdisasm.path.empty()) {
    auto version = query_version(runner, info.nvdisasm.path);
    if (version.ok()) info.nvdisasm.version = *version;
  }
  // <toolkit>/include is a symlink into targets/<triple>/include on Linux installs; resolved so
  // header paths from line markers compare equal.
  info.cuda_include_dir = canonical_path(toolkit + "/include");
  if (!is_directory(info.cuda_include_dir))
    return make_error("toolchain", "{}: CUDA include directory not found next to nvcc",
                      info.cuda_include_dir);
  return Toolchain(runner, std::move(info));
}

}  // namespace ptxb
