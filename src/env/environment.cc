#include "env/environment.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>

#include "core/install_layout.h"
#include "core/strings.h"
#include "core/version.h"

namespace ptxb {
namespace {

std::string read_cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (starts_with(line, "model name")) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  }
  return "";
}

// What each tool enables, for the `missing` explanation.
std::string purpose(const std::string& tool) {
  if (tool == "nvcc" || tool == "ptxas") return "compiling candidates";
  if (tool == "cuobjdump" || tool == "nvdisasm") return "SASS target-instruction analysis";
  if (tool == "ncu") return "the dynamic target-instruction check";
  if (tool == "compute-sanitizer") return "the memory-error gate (--sanitize)";
  return "";
}

}  // namespace

const std::vector<std::string>& known_tools() {
  static const std::vector<std::string> tools = {"nvcc",     "ptxas", "cuobjdump",
                                                 "nvdisasm", "ncu",   "compute-sanitizer"};
  return tools;
}

Environment probe_environment(ProcessRunner& runner) {
  Environment env;
  env.harness_version = harness_version();
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) env.hostname = host;
  utsname uts{};
  if (::uname(&uts) == 0) env.os = std::string(uts.sysname) + " " + uts.release;
  env.cpu = read_cpu_model();
  for (const auto& name : known_tools()) env.tools.push_back(probe_tool(name, runner));
  env.libraries.push_back(probe_cublaslt());
  env.libraries.push_back(probe_cudnn());
  env.gpu = probe_gpus();
  env.install = install_layout_to_json();
  return env;
}

const ProbedTool* Environment::tool(const std::string& name) const {
  for (const auto& info : tools)
    if (info.name == name) return &info;
  return nullptr;
}

std::vector<std::string> Environment::missing() const {
  std::vector<std::string> lines;
  for (const char* part : {"data", "helpers"})
    if (install.contains(part) && install[part].contains("error"))
      lines.push_back(install[part]["error"].get<std::string>());
  for (const auto& info : tools) {
    if (info.found) continue;
    // One disassembler is enough for SASS analysis.
    if ((info.name == "cuobjdump" || info.name == "nvdisasm") &&
        ((tool("cuobjdump") && tool("cuobjdump")->found) ||
         (tool("nvdisasm") && tool("nvdisasm")->found)))
      continue;
    lines.push_back(fmt::format("{} not found: {} unavailable ({})", info.name, purpose(info.name),
                                info.install_hint));
  }
  for (const auto& library : libraries)
    if (!library.found)
      lines.push_back(fmt::format("{} not loadable: reference timing unavailable ({})",
                                  library.name, library.problem));
  if (!gpu.has_gpu()) {
    std::string why = gpu.problems.empty() ? "no GPU" : join(gpu.problems, "; ");
    lines.push_back("no GPU: only compile and static analysis can run (" + why + ")");
  }
  return lines;
}

Json Environment::to_json() const {
  Json out = Json::object();
  out["harness_version"] = harness_version;
  out["host"] = {{"hostname", hostname}, {"os", os}, {"cpu", cpu}};
  Json tool_list = Json::object();
  for (const auto& info : tools) tool_list[info.name] = info.to_json();
  out["tools"] = tool_list;
  Json library_list = Json::object();
  for (const auto& library : libraries) library_list[library.name] = library.to_json();
  out["libraries"] = library_list;
  out["gpu"] = gpu.to_json();
  out["install"] = install;
  out["missing"] = missing();
  return out;
}

}  // namespace ptxb
